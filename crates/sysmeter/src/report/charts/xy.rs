//! The x/y line chart: one line per curve with its 95% CI as a shaded band, a dot with a
//! tooltip per point, a legend, and optional annotations: vertical markers (detected cache
//! sizes, sysfs sizes) and horizontal level segments (a cache level's latency plateau).
//!
//! Pure: a description in, an SVG string out. Depends on `axis`, `svg` and `model::units`.

use super::WIDTH;
use super::axis::{Axis, ScaleMode};
use super::svg::{Anchor, Svg, TICK, color};
use crate::model::Unit;
use crate::model::units;

/// Height of the plot area itself; legend and annotation rows come on top.
const PLOT_HEIGHT: f64 = 300.0;
/// Height of one legend or annotation row.
const ROW: f64 = 16.0;
/// Approximate width of one character of 12 px sans-serif, for layout.
const CHAR_W: f64 = 6.6;

/// One point of a curve: y and its confidence interval at x.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// x value.
    pub x: f64,
    /// y value (the median).
    pub y: f64,
    /// Low end of the 95% CI of y.
    pub lo: f64,
    /// High end of the 95% CI of y.
    pub hi: f64,
}

/// A named curve.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// Legend text.
    pub name: String,
    /// Points in x order.
    pub points: Vec<Point>,
}

/// A vertical marker at x.
#[derive(Debug, Clone, PartialEq)]
pub struct Marker {
    /// Position.
    pub x: f64,
    /// Text beside it.
    pub label: String,
    /// `true` for a measured/detected value (solid, labelled at the top), `false` for a
    /// reference such as a sysfs size (dotted grey, labelled at the bottom).
    pub detected: bool,
}

/// A horizontal segment at y from `from` to `to` on the x axis (`None` = the axis end).
#[derive(Debug, Clone, PartialEq)]
pub struct Level {
    /// Height.
    pub y: f64,
    /// Start on x, or the low end of the axis.
    pub from: Option<f64>,
    /// End on x, or the high end of the axis.
    pub to: Option<f64>,
    /// Text above the right end of the segment.
    pub label: Option<String>,
}

/// Everything a line chart shows.
#[derive(Debug, Clone, PartialEq)]
pub struct XyChart {
    /// What the chart is about (the SVG title).
    pub title: String,
    /// x axis title.
    pub x_label: String,
    /// Unit of x.
    pub x_unit: Unit,
    /// How to scale x.
    pub x_mode: ScaleMode,
    /// y axis title.
    pub y_label: String,
    /// Unit of y.
    pub y_unit: Unit,
    /// How to scale y.
    pub y_mode: ScaleMode,
    /// The curves.
    pub lines: Vec<Line>,
    /// Vertical annotations.
    pub markers: Vec<Marker>,
    /// Horizontal annotations.
    pub levels: Vec<Level>,
}

/// The plot rectangle and the two axes.
struct Frame {
    left: f64,
    top: f64,
    right: f64,
    bottom: f64,
    x: Axis,
    y: Axis,
}

impl Frame {
    fn px(&self, x: f64) -> f64 {
        self.left + self.x.frac(x) * (self.right - self.left)
    }
    fn py(&self, y: f64) -> f64 {
        self.bottom - self.y.frac(y) * (self.bottom - self.top)
    }
}

/// The chart as SVG, or `None` when no curve has a point to draw.
pub fn render(chart: &XyChart) -> Option<String> {
    let points: Vec<&Point> = chart.lines.iter().flat_map(|l| &l.points).collect();
    if points.is_empty() {
        return None;
    }
    let xs: Vec<f64> = points.iter().map(|p| p.x).collect();
    let mut ys: Vec<f64> = points.iter().flat_map(|p| [p.y, p.lo, p.hi]).collect();
    // A level drawn (a cache plateau, a heap's peak) lies inside the y range.
    ys.extend(chart.levels.iter().map(|l| l.y).filter(|y| y.is_finite()));
    let mut xs_all = xs.clone();
    xs_all.extend(chart.markers.iter().map(|m| m.x));
    let x = Axis::fit(&xs_all, chart.x_unit, chart.x_mode);
    let y = Axis::fit(&ys, chart.y_unit, chart.y_mode);
    let legend_rows = legend_layout(&chart.lines)
        .last()
        .map_or(0, |(_, row)| row + 1);
    let label_w = y
        .ticks()
        .iter()
        .map(|t| y.label(*t).chars().count())
        .max()
        .unwrap_or(4) as f64;
    let top = 10.0 + legend_rows as f64 * ROW + annotation_rows(chart) as f64 * ROW + 8.0;
    let frame = Frame {
        left: 26.0 + label_w * CHAR_W + 8.0,
        top,
        right: WIDTH - 36.0,
        bottom: top + PLOT_HEIGHT,
        x,
        y,
    };
    let height = frame.bottom + 46.0;
    let mut svg = Svg::new(WIDTH, height, &chart.title);
    grid(&mut svg, &frame, chart);
    annotations(&mut svg, &frame, chart);
    for (i, line) in chart.lines.iter().enumerate() {
        curve(&mut svg, &frame, line, color(i), chart);
    }
    legend(&mut svg, &chart.lines);
    Some(svg.finish())
}

/// Grid lines, the axis frame, tick labels and axis titles.
fn grid(svg: &mut Svg, f: &Frame, chart: &XyChart) {
    let grid = "stroke-width=\"1\"";
    for t in f.x.ticks() {
        let px = f.px(t);
        svg.line((px, f.top), (px, f.bottom), "#e3e3e3", grid);
        let extra = TICK;
        svg.text((px, f.bottom + 16.0), Anchor::Middle, extra, &f.x.label(t));
    }
    for t in f.y.ticks() {
        let py = f.py(t);
        svg.line((f.left, py), (f.right, py), "#e3e3e3", grid);
        let extra = TICK;
        svg.text((f.left - 6.0, py + 4.0), Anchor::End, extra, &f.y.label(t));
    }
    let frame = "stroke-width=\"1\"";
    svg.line((f.left, f.bottom), (f.right, f.bottom), "#666", frame);
    svg.line((f.left, f.top), (f.left, f.bottom), "#666", frame);
    let x_title = scale_note(&chart.x_label, &f.x);
    svg.text(
        ((f.left + f.right) / 2.0, f.bottom + 38.0),
        Anchor::Middle,
        "fill=\"#222\"",
        &x_title,
    );
    let y_title = scale_note(&chart.y_label, &f.y);
    svg.vertical_text((14.0, (f.top + f.bottom) / 2.0), &y_title);
}

/// An axis title, saying when the axis is logarithmic.
fn scale_note(title: &str, axis: &Axis) -> String {
    if axis.is_log() {
        format!("{title} (log scale)")
    } else {
        title.to_string()
    }
}

/// Annotation rows above the plot: level labels, detected ends, reference sizes (each only
/// when present), so no annotation text is drawn over the curves.
fn annotation_rows(chart: &XyChart) -> usize {
    let levels = chart.levels.iter().any(|l| l.label.is_some());
    let detected = chart.markers.iter().any(|m| m.detected);
    let reference = chart.markers.iter().any(|m| !m.detected);
    usize::from(levels) + usize::from(detected) + usize::from(reference)
}

/// Level segments and vertical markers, drawn under the curves, with their labels in the
/// rows above the plot: a level's label centred over its span, a detected end left of its
/// line (red), a reference size right of its line (grey).
fn annotations(svg: &mut Svg, f: &Frame, chart: &XyChart) {
    let has_levels = chart.levels.iter().any(|l| l.label.is_some());
    let has_detected = chart.markers.iter().any(|m| m.detected);
    let level_row = f.top - 8.0 - (annotation_rows(chart) as f64 - 1.0) * ROW;
    let detected_row = level_row + if has_levels { ROW } else { 0.0 };
    let reference_row = detected_row + if has_detected { ROW } else { 0.0 };
    for level in &chart.levels {
        let from = level.from.map_or(f.left, |x| f.px(x));
        let to = level.to.map_or(f.right, |x| f.px(x));
        let py = f.py(level.y);
        let dash = "stroke-width=\"1.5\" stroke-dasharray=\"6 4\"";
        svg.line((from, py), (to, py), "#7a7a7a", dash);
        if let Some(label) = &level.label {
            let style = "fill=\"#333\" font-size=\"11\" font-weight=\"bold\"";
            svg.text(((from + to) / 2.0, level_row), Anchor::Middle, style, label);
        }
    }
    for m in &chart.markers {
        let px = f.px(m.x);
        let (stroke, style, at, anchor) = if m.detected {
            let style = "stroke-width=\"1.5\"";
            ("#b03030", style, (px - 3.0, detected_row), Anchor::End)
        } else {
            let style = "stroke-width=\"1\" stroke-dasharray=\"2 3\"";
            // Right of the line, unless that runs off the chart.
            let width = m.label.chars().count() as f64 * CHAR_W;
            if px + 3.0 + width > WIDTH - 2.0 {
                ("#8a8a8a", style, (px - 3.0, reference_row), Anchor::End)
            } else {
                ("#8a8a8a", style, (px + 3.0, reference_row), Anchor::Start)
            }
        };
        svg.line((px, at.1 - 10.0), (px, f.bottom), stroke, style);
        let text_style = format!("fill=\"{stroke}\" font-size=\"11\"");
        svg.text(at, anchor, &text_style, &m.label);
    }
}

/// One curve: CI band, line and dots with tooltips.
fn curve(svg: &mut Svg, f: &Frame, line: &Line, stroke: &str, chart: &XyChart) {
    let upper = line.points.iter().map(|p| (f.px(p.x), f.py(p.hi)));
    let lower = line.points.iter().rev().map(|p| (f.px(p.x), f.py(p.lo)));
    let band: Vec<(f64, f64)> = upper.chain(lower).collect();
    let has_width = line.points.len() > 1 && line.points.iter().any(|p| p.hi > p.lo);
    if has_width {
        svg.path(
            &band,
            true,
            &format!("fill=\"{stroke}\" fill-opacity=\"0.16\""),
        );
    }
    let path: Vec<(f64, f64)> = line.points.iter().map(|p| (f.px(p.x), f.py(p.y))).collect();
    let style = format!("fill=\"none\" stroke=\"{stroke}\" stroke-width=\"2\"");
    svg.path(&path, false, &style);
    for (p, xy) in line.points.iter().zip(&path) {
        let (y, x) = (
            units::value(p.y, chart.y_unit),
            units::value(p.x, chart.x_unit),
        );
        // A point without an interval (one observation, a fitted curve) is its value alone.
        let tip = if p.lo == p.hi {
            format!("{}: {y} at {x}", line.name)
        } else {
            let ci = units::range(p.lo, p.hi, chart.y_unit);
            format!("{}: {y} at {x} (95% CI {ci})", line.name)
        };
        svg.circle(*xy, 2.6, stroke, Some(&tip));
    }
}

/// (x offset, row) of each legend entry, wrapping at the chart width.
fn legend_layout(lines: &[Line]) -> Vec<(f64, usize)> {
    let mut out = Vec::new();
    let (mut x, mut row) = (0.0, 0);
    for line in lines {
        let w = 34.0 + line.name.chars().count() as f64 * CHAR_W;
        if x > 0.0 && x + w > WIDTH - 80.0 {
            x = 0.0;
            row += 1;
        }
        out.push((x, row));
        x += w;
    }
    out
}

/// A swatch and the name of each curve, above the plot.
fn legend(svg: &mut Svg, lines: &[Line]) {
    for (i, (line, (x, row))) in lines.iter().zip(legend_layout(lines)).enumerate() {
        let (x, y) = (70.0 + x, 14.0 + row as f64 * ROW);
        let style = "stroke-width=\"3\"";
        svg.line((x, y - 4.0), (x + 22.0, y - 4.0), color(i), style);
        svg.text((x + 27.0, y), Anchor::Start, "fill=\"#222\"", &line.name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::fixture::assert_contains;

    fn chart(lines: Vec<Line>) -> XyChart {
        XyChart {
            title: "t".into(),
            x_label: "working set".into(),
            x_unit: Unit::Bytes,
            x_mode: ScaleMode::Log,
            y_label: "latency".into(),
            y_unit: Unit::Ns,
            y_mode: ScaleMode::Log,
            lines,
            markers: vec![Marker {
                x: 32768.0,
                label: "L1 32 KiB".into(),
                detected: true,
            }],
            levels: vec![Level {
                y: 1.3,
                from: None,
                to: Some(32768.0),
                label: Some("L1 1.3 ns".into()),
            }],
        }
    }

    fn pt(x: f64, y: f64) -> Point {
        Point {
            x,
            y,
            lo: y * 0.9,
            hi: y * 1.1,
        }
    }

    #[test]
    fn draws_band_line_dots_markers_and_log_titles() {
        let line = Line {
            name: "random".into(),
            points: vec![pt(4096.0, 1.3), pt(65536.0, 4.0), pt(1.0e8, 110.0)],
        };
        let svg = render(&chart(vec![line])).unwrap_or_default();
        assert_eq!(svg.matches("<path").count(), 2, "band and line");
        assert_eq!(svg.matches("<circle").count(), 3);
        assert_contains(
            &svg,
            &[
                ">L1 32 KiB</text>",
                "working set (log scale)",
                ">4 KiB</text>",
                "stroke-dasharray=\"6 4\"",
            ],
        );
    }

    #[test]
    fn no_points_no_chart_and_one_point_no_path() {
        assert_eq!(render(&chart(vec![])), None);
        let one = Line {
            name: "one".into(),
            points: vec![pt(4096.0, 2.0)],
        };
        let svg = render(&chart(vec![one])).unwrap_or_default();
        assert!(!svg.contains("<path"));
        assert!(svg.contains("<circle"));
    }
}
