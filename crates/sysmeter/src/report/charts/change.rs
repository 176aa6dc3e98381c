//! The change chart of `sysmeter compare --html`: one row per compared metric, sorted by its
//! change, a dot at the change of the median with its 95% CI as a whisker, the noise
//! threshold as a shaded band around zero. Every row is a relative change in percent, so
//! metrics of any unit share the axis. An unbounded end of a CI (`stats::compare::bounds`)
//! is drawn as an arrow to the edge of the plot and left out of the axis range, so one
//! interval the runs cannot bound does not flatten every other change onto zero.
//!
//! Pure: rows in, a [`Chart`] out; tick labels through the axis (`model::units`).

use super::axis::{Axis, ScaleMode};
use super::svg::{Anchor, Svg, TICK};
use super::{CHAR_W, Chart, Quantity, WIDTH};
use crate::model::Unit;
use crate::stats::compare::ShownCi;

const ROW: f64 = 20.0;
const MAX_NAME_CHARS: usize = 60;

/// One metric's change: fractions (0.05 = +5%).
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// `experiment · metric`.
    pub name: String,
    /// Change of the median.
    pub change: f64,
    /// 95% CI of the change, an end `None` where it is unbounded.
    pub ci: ShownCi,
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

/// The plot area and its axis (in percent points).
struct Frame {
    left: f64,
    right: f64,
    top: f64,
    bottom: f64,
    axis: Axis,
}

impl Frame {
    /// x of a change given as a fraction.
    fn px(&self, fraction: f64) -> f64 {
        self.left + self.axis.frac(fraction * 100.0) * (self.right - self.left)
    }
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
    // Unbounded ends stay out of the range: their whiskers run to the edge as arrows.
    let ends = |r: &&Change| [r.ci.lo, r.ci.hi, Some(r.change)];
    values.extend(rows.iter().flat_map(ends).flatten().map(|v| v * 100.0));
    let names = rows.iter().map(|r| short(&r.name).chars().count());
    let top = 8.0;
    let f = Frame {
        left: names.max().unwrap_or(0) as f64 * CHAR_W + 16.0,
        right: WIDTH - 24.0,
        top,
        bottom: top + ROW * rows.len() as f64,
        axis: Axis::fit(&values, Unit::Count, ScaleMode::Linear),
    };
    let height = f.bottom + 44.0;
    let title = "Change of each metric, B against A, with its 95% CI";
    let mut svg = Svg::new(WIDTH, height, title);
    grid(&mut svg, &f, threshold, height);
    for (i, r) in rows.iter().enumerate() {
        row(&mut svg, &f, r, f.top + ROW * i as f64 + ROW / 2.0);
    }
    Some(Chart {
        title: "Change per metric, sorted by change".to_string(),
        caption: "Read the dots outside the shaded band whose whiskers do not cross zero: those \
                  changes are beyond the noise threshold and significant; right of zero is a \
                  larger value in B. A whisker ending in an arrow is unbounded on that side \
                  (its CI end lies more than 10× from the ratio B/A)."
            .to_string(),
        quantities: vec![Quantity::Percent; rows.len()],
        svg: svg.finish(),
    })
}

/// The threshold band, ticks, the zero line and the axis title.
fn grid(svg: &mut Svg, f: &Frame, threshold: f64, height: f64) {
    let band = (f.px(-threshold), f.px(threshold));
    let tip = format!("noise threshold ±{:.1}%", threshold * 100.0);
    let size = (band.1 - band.0, f.bottom - f.top);
    svg.rect((band.0, f.top), size, "#e8eef6", Some(&tip));
    let thin = "stroke-width=\"1\"";
    for t in f.axis.ticks() {
        let x = f.left + f.axis.frac(t) * (f.right - f.left);
        svg.line((x, f.top), (x, f.bottom), "#e3e3e3", thin);
        let label = f.axis.label(t);
        svg.text((x, f.bottom + 16.0), Anchor::Middle, TICK, &label);
    }
    svg.line((f.px(0.0), f.top), (f.px(0.0), f.bottom), "#666", thin);
    let what = "change of the median, B against A (shaded: noise threshold)";
    let title = Quantity::Percent.axis_title(what);
    let at = ((f.left + f.right) / 2.0, height - 8.0);
    svg.text(at, Anchor::Middle, "fill=\"#222\"", &title);
}

/// One metric: its name, the CI whisker (an arrow to the edge where unbounded) and the dot
/// at the change.
fn row(svg: &mut Svg, f: &Frame, r: &Change, y: f64) {
    let name = short(&r.name);
    svg.text((f.left - 6.0, y + 4.0), Anchor::End, "fill=\"#222\"", &name);
    let lo = r.ci.lo.map_or(f.left, |v| f.px(v));
    let hi = r.ci.hi.map_or(f.right, |v| f.px(v));
    let thick = "stroke-width=\"2\"";
    svg.line((lo, y), (hi, y), r.color, thick);
    for (x, end, outward) in [(lo, r.ci.lo, -1.0), (hi, r.ci.hi, 1.0)] {
        if end.is_some() {
            svg.line((x, y - 5.0), (x, y + 5.0), r.color, thick);
        } else {
            let arrow = [
                (x - outward * 7.0, y - 5.0),
                (x, y),
                (x - outward * 7.0, y + 5.0),
            ];
            svg.path(&arrow, true, &format!("fill=\"{}\"", r.color));
        }
    }
    let end = |e: Option<f64>| e.map_or("unbounded".to_string(), |v| format!("{:+.1}%", v * 100.0));
    let tip = format!(
        "{}: {:+.1}% [{}, {}]",
        r.name,
        r.change * 100.0,
        end(r.ci.lo),
        end(r.ci.hi)
    );
    svg.circle((f.px(r.change), y), 4.0, r.color, Some(&tip));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(name: &str, c: f64) -> Change {
        Change {
            name: name.into(),
            change: c,
            ci: ShownCi {
                lo: Some(c - 0.01),
                hi: Some(c + 0.01),
            },
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

    /// The x of the dot whose tooltip starts with `name`.
    fn dot_x(svg: &str, name: &str) -> f64 {
        let line = svg
            .lines()
            .find(|l| l.starts_with("<circle") && l.contains(&format!("<title>{name}:")));
        let cx = line.and_then(|l| l.split("cx=\"").nth(1)?.split('"').next()?.parse().ok());
        cx.unwrap_or_else(|| panic!("no dot of {name} in {svg}"))
    }

    #[test]
    fn an_unbounded_interval_stays_out_of_the_axis_range() {
        // fs.write's interval, [−100%, +6 701 237%], beside changes of −70% and −54%.
        let wild = Change {
            name: "fs.write · write".into(),
            change: 0.2,
            ci: ShownCi::of_ratio(1.2, (0.0, 67013.37)),
            color: "#000",
        };
        let rows = [change("a", -0.70), change("b", -0.54), wild];
        let chart = change_chart(&rows, 0.02).expect("a chart");
        // The axis stays near the other changes: −70% and −54% lie well apart, not both on 0.
        let (a, b) = (dot_x(&chart.svg, "a"), dot_x(&chart.svg, "b"));
        assert!(b - a > 40.0, "−70% at x = {a}, −54% at x = {b}");
        // The open ends are arrows, and the tooltip says so.
        assert_eq!(chart.svg.matches(" Z\"").count(), 2, "{}", chart.svg);
        assert!(chart.svg.contains("+20.0% [unbounded, unbounded]"));
    }
}
