//! The change chart of `sysmeter compare --html`: one row per compared metric, sorted by its
//! change, a dot at the change of the median with its 95% CI as a whisker, the noise
//! threshold as a shaded band around zero. Every row is a relative change in percent, so
//! metrics of any unit share the axis.
//!
//! Pure: rows in, a [`Chart`] out; tick labels through the axis (`model::units`).

use super::axis::{Axis, ScaleMode};
use super::svg::{Anchor, Svg};
use super::{Chart, Quantity};
use crate::model::Unit;

const WIDTH: f64 = 1040.0;
const ROW: f64 = 20.0;
const CHAR_W: f64 = 6.4;
const MAX_NAME_CHARS: usize = 60;

/// One metric's change: fractions (0.05 = +5%).
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// `experiment · metric`.
    pub name: String,
    /// Change of the median.
    pub change: f64,
    /// 95% CI of the change.
    pub ci: (f64, f64),
    /// Colour by verdict (a CSS colour).
    pub color: &'static str,
}

fn short(name: &str) -> String {
    if name.chars().count() <= MAX_NAME_CHARS {
        return name.to_string();
    }
    let cut: String = name.chars().take(MAX_NAME_CHARS - 1).collect();
    format!("{cut}…")
}

/// The chart, rows sorted by change (most negative first), or `None` without a row.
pub fn change_chart(rows: &[Change], threshold: f64) -> Option<Chart> {
    let mut rows: Vec<&Change> = rows.iter().filter(|r| r.change.is_finite()).collect();
    if rows.is_empty() {
        return None;
    }
    rows.sort_by(|a, b| a.change.total_cmp(&b.change));
    // Percent points on the axis: labels read 0, 5, 10 under the title's [%].
    let mut values: Vec<f64> = vec![threshold * 100.0, -threshold * 100.0];
    values.extend(
        rows.iter()
            .flat_map(|r| [r.ci.0 * 100.0, r.ci.1 * 100.0, r.change * 100.0]),
    );
    let axis = Axis::fit(&values, Unit::Count, ScaleMode::Linear);
    let names = rows.iter().map(|r| short(&r.name).chars().count());
    let left = names.max().unwrap_or(0) as f64 * CHAR_W + 16.0;
    let (right, top) = (WIDTH - 24.0, 8.0);
    let bottom = top + ROW * rows.len() as f64;
    let height = bottom + 44.0;
    let mut svg = Svg::new(
        WIDTH,
        height,
        "Change of each metric, B against A, with its 95% CI",
    );
    let px = |v: f64| left + axis.frac(v * 100.0) * (right - left);
    let band = (px(-threshold), px(threshold));
    let tip = format!("noise threshold ±{:.1}%", threshold * 100.0);
    svg.rect(
        (band.0, top),
        (band.1 - band.0, bottom - top),
        "#e8eef6",
        Some(&tip),
    );
    for t in axis.ticks() {
        let x = left + axis.frac(t) * (right - left);
        svg.line((x, top), (x, bottom), "#e3e3e3", "stroke-width=\"1\"");
        svg.text(
            (x, bottom + 16.0),
            Anchor::Middle,
            "fill=\"#444\"",
            &axis.label(t),
        );
    }
    svg.line(
        (px(0.0), top),
        (px(0.0), bottom),
        "#666",
        "stroke-width=\"1\"",
    );
    let title =
        Quantity::Percent.axis_title("change of the median, B against A (shaded: noise threshold)");
    svg.text(
        ((left + right) / 2.0, height - 8.0),
        Anchor::Middle,
        "fill=\"#222\"",
        &title,
    );
    for (i, r) in rows.iter().enumerate() {
        let y = top + ROW * i as f64 + ROW / 2.0;
        svg.text(
            (left - 6.0, y + 4.0),
            Anchor::End,
            "fill=\"#222\"",
            &short(&r.name),
        );
        let (lo, hi) = (px(r.ci.0), px(r.ci.1));
        svg.line((lo, y), (hi, y), r.color, "stroke-width=\"2\"");
        for x in [lo, hi] {
            svg.line((x, y - 5.0), (x, y + 5.0), r.color, "stroke-width=\"2\"");
        }
        let tip = format!(
            "{}: {:+.1}% [{:+.1}%, {:+.1}%]",
            r.name,
            r.change * 100.0,
            r.ci.0 * 100.0,
            r.ci.1 * 100.0
        );
        svg.circle((px(r.change), y), 4.0, r.color, Some(&tip));
    }
    Some(Chart {
        title: "Change per metric, sorted by change".to_string(),
        caption: "Read the dots outside the shaded band whose whiskers do not cross zero: those \
                  changes are beyond the noise threshold and significant; right of zero is a \
                  larger value in B."
            .to_string(),
        quantities: vec![Quantity::Percent; rows.len()],
        svg: svg.finish(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(name: &str, c: f64) -> Change {
        Change {
            name: name.into(),
            change: c,
            ci: (c - 0.01, c + 0.01),
            color: "#000",
        }
    }

    #[test]
    fn rows_are_sorted_and_the_band_is_drawn() {
        let rows = [change("b", 0.10), change("a", -0.05), change("<c>", 0.0)];
        let chart = change_chart(&rows, 0.02).expect("a chart");
        let svg = &chart.svg;
        let (a, b) = (svg.find(">a</text>"), svg.find(">b</text>"));
        assert!(a.is_some() && b.is_some() && a < b, "sorted by change");
        assert!(svg.contains("noise threshold ±2.0%"));
        assert!(svg.contains("&lt;c&gt;"));
        assert_eq!(svg.matches("<circle").count(), 3);
        assert!(change_chart(&[], 0.02).is_none());
    }
}
