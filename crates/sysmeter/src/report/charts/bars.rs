//! The horizontal bar chart of an experiment's scalar metrics: one bar per metric (its
//! median) with the within-run 95% CI of the median as a whisker, the run-to-run interval (where
//! the next run's median should fall on this machine) as a shaded band across the row when
//! there is one, and the value printed at the end, on a log axis when the values span a wide
//! range (a syscall beside a process creation) and linear otherwise.
//!
//! Pure: a description in, an SVG string out. Depends on `axis`, `svg` and `model::units`.

use super::axis::{AUTO_LOG_SPAN, Axis, ScaleMode};
use super::svg::{Anchor, Svg, TICK, color};
use super::{CHAR_W, WIDTH};
use crate::model::Unit;
use crate::model::units;

const ROW: f64 = 22.0;
const BAR: f64 = 14.0;
/// Names longer than this are shortened (the full name stays in the tooltip).
const MAX_NAME_CHARS: usize = 56;

/// One bar.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    /// Metric name.
    pub name: String,
    /// Median.
    pub value: f64,
    /// Low end of the within-run 95% CI of the median.
    pub lo: f64,
    /// High end of the within-run 95% CI of the median.
    pub hi: f64,
    /// The run-to-run interval (low, high, in words for the tooltip: `this machine, run to
    /// run: 98.7–104 ns over 8 runs`), drawn as a band; `None` where there is none.
    pub band: Option<(f64, f64, String)>,
    /// The value is a lower bound (`Metric::at_least`): its label and tooltip say `≥`.
    pub at_least: bool,
}

impl Bar {
    /// The bar's value as every page shows it (`≥ 64 MiB` for a lower bound).
    fn shown(&self, unit: Unit) -> String {
        let value = units::value(self.value, unit);
        if self.at_least {
            format!("≥ {value}")
        } else {
            value
        }
    }
}

/// A bar chart of metrics sharing one unit.
#[derive(Debug, Clone, PartialEq)]
pub struct BarChart {
    /// What the chart is about (the SVG title).
    pub title: String,
    /// Axis title.
    pub axis_label: String,
    /// Unit of every bar.
    pub unit: Unit,
    /// The bars, top to bottom.
    pub bars: Vec<Bar>,
}

/// `name` cut to [`MAX_NAME_CHARS`] with an ellipsis.
fn short(name: &str) -> String {
    if name.chars().count() <= MAX_NAME_CHARS {
        return name.to_string();
    }
    let cut: String = name.chars().take(MAX_NAME_CHARS - 1).collect();
    format!("{cut}…")
}

/// The axis of the medians. Log when the positive medians span [`AUTO_LOG_SPAN`] or more
/// (zero bars stay at the start, labelled `0`); CI ends do not widen it, because one wide
/// interval would squash every bar, so whiskers are clipped at the axis end instead.
fn fit(bars: &[Bar], unit: Unit) -> Axis {
    let values: Vec<f64> = bars.iter().map(|b| b.value).collect();
    let positive: Vec<f64> = values.iter().copied().filter(|v| *v > 0.0).collect();
    let min = positive.iter().copied().fold(f64::INFINITY, f64::min);
    let max = positive.iter().copied().fold(0.0, f64::max);
    let mode = if positive.len() >= 2 && max / min >= AUTO_LOG_SPAN {
        ScaleMode::Log
    } else {
        ScaleMode::Linear
    };
    Axis::fit(&values, unit, mode)
}

/// The chart as SVG, or `None` without bars.
pub fn render(chart: &BarChart) -> Option<String> {
    if chart.bars.is_empty() {
        return None;
    }
    let axis = fit(&chart.bars, chart.unit);
    let name_chars = chart.bars.iter().map(|b| short(&b.name).chars().count());
    let name_w = name_chars.max().unwrap_or(0) as f64 * CHAR_W;
    let (left, right) = (name_w + 16.0, WIDTH - 86.0);
    let (top, bottom) = (8.0, 8.0 + ROW * chart.bars.len() as f64);
    let height = bottom + 44.0;
    let mut svg = Svg::new(WIDTH, height, &chart.title);
    let px = |v: f64| left + axis.frac(v) * (right - left);
    for t in axis.ticks() {
        let grid = "stroke-width=\"1\"";
        svg.line((px(t), top), (px(t), bottom), "#e3e3e3", grid);
        let at = (px(t), bottom + 16.0);
        svg.text(at, Anchor::Middle, TICK, &axis.label(t));
    }
    svg.line((left, top), (left, bottom), "#666", "stroke-width=\"1\"");
    let title = if axis.is_log() {
        format!("{} (log scale)", chart.axis_label)
    } else {
        chart.axis_label.clone()
    };
    let centre = ((left + right) / 2.0, height - 8.0);
    svg.text(centre, Anchor::Middle, "fill=\"#222\"", &title);
    for (i, bar) in chart.bars.iter().enumerate() {
        let y = top + ROW * i as f64 + (ROW - BAR) / 2.0;
        if let Some((lo, hi, words)) = &bar.band {
            let (lo, hi) = (px(*lo), px(*hi).min(right));
            let tip = format!("{}: {words} (the next run's median, 95%)", bar.name);
            svg.rect((lo, y - 3.0), (hi - lo, BAR + 6.0), BAND, Some(&tip));
        }
        draw_bar(&mut svg, bar, y, (left, px(bar.value)), chart.unit);
        let (lo, hi) = (px(bar.lo), px(bar.hi));
        draw_whisker(&mut svg, (lo, hi), y + BAR / 2.0, right);
        let value = bar.shown(chart.unit);
        let end = px(bar.value).max(hi) + 6.0;
        let at = (end, y + BAR / 2.0 + 4.0);
        svg.text(at, Anchor::Start, "fill=\"#222\"", &value);
    }
    Some(svg.finish())
}

/// Fill of the run-to-run band: light enough for the bar and whisker to show through.
const BAND: &str = "#f5c16c80";

/// The CI as a whisker at height `mid`; one clipped at the axis end (`right`) gets no end
/// cap there, because it goes on.
fn draw_whisker(svg: &mut Svg, (lo, hi): (f64, f64), mid: f64, right: f64) {
    if hi - lo < 1.0 {
        return;
    }
    let whisker = "stroke-width=\"1.2\"";
    svg.line((lo, mid), (hi, mid), "#333", whisker);
    svg.line((lo, mid - 4.0), (lo, mid + 4.0), "#333", whisker);
    if hi < right - 0.5 {
        svg.line((hi, mid - 4.0), (hi, mid + 4.0), "#333", whisker);
    }
}

/// The name on the left and the bar from the axis start to the median.
fn draw_bar(svg: &mut Svg, bar: &Bar, y: f64, (left, end): (f64, f64), unit: Unit) {
    let name = short(&bar.name);
    let text_y = y + BAR / 2.0 + 4.0;
    svg.text((left - 6.0, text_y), Anchor::End, "fill=\"#222\"", &name);
    let value = bar.shown(unit);
    // A bar without an interval (a total, one observation) is its value, not a median.
    let tip = if bar.lo == bar.hi {
        format!("{}: {value}", bar.name)
    } else {
        let ci = units::range(bar.lo, bar.hi, unit);
        format!("{}: median {value} (within-run 95% CI {ci})", bar.name)
    };
    svg.rect((left, y), (end - left, BAR), color(0), Some(&tip));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::fixture::assert_contains;

    fn bar(name: &str, value: f64) -> Bar {
        Bar {
            name: name.into(),
            value,
            lo: value * 0.95,
            hi: value * 1.05,
            band: None,
            at_least: false,
        }
    }

    fn chart(bars: Vec<Bar>) -> BarChart {
        BarChart {
            title: "t".into(),
            axis_label: "median time per operation".into(),
            unit: Unit::Ns,
            bars,
        }
    }

    #[test]
    fn wide_spread_uses_a_log_axis_and_prints_values() {
        let svg =
            render(&chart(vec![bar("getppid", 190.0), bar("fork", 230_000.0)])).unwrap_or_default();
        assert_contains(&svg, &["(log scale)", ">190 ns</text>", ">230 µs</text>"]);
        assert_eq!(svg.matches("<rect").count(), 2);
    }

    #[test]
    fn zeros_do_not_prevent_a_log_axis_and_wide_cis_do_not_stretch_it() {
        let mut wide = bar("gettime", 24.6);
        wide.hi = 14_400.0;
        let svg = render(&chart(vec![bar("rdtsc", 0.0), wide, bar("cputime", 990.0)]))
            .unwrap_or_default();
        assert_contains(&svg, &["(log scale)", ">0 ns</text>"]);
        assert!(
            svg.contains(">1 µs</text>"),
            "axis ends at the medians' decade"
        );
        assert!(!svg.contains(">10 µs</text>"));
    }

    #[test]
    fn zero_values_and_long_names_stay_drawable() {
        let long = "clock_gettime(CLOCK_MONOTONIC) forced through the syscall path, really";
        let svg = render(&chart(vec![bar(long, 0.0), bar("x", 0.0)])).unwrap_or_default();
        assert!(!svg.contains("(log scale)"));
        assert!(svg.contains("…</text>"));
        // No interval: the tooltip gives the value, not a median with a CI of one value.
        assert!(
            svg.contains(&format!("<title>{long}: 0 ns</title>")),
            "{svg}"
        );
        assert!(!svg.contains("NaN"));
        assert_eq!(render(&chart(vec![])), None);
    }
}
