//! The charts that answer a diagnosis at the top of its page: a trace's total time by system
//! call, and a scale run's measured wall times with the best-fit curve and the knee.
//!
//! Pure: an [`ExperimentResult`] in, a [`Chart`] out; the fit's class comes from the metric
//! names `best fit O(…): a` / `: b` the scale diagnosis writes (`stats::fit::Class`).

use super::axis::ScaleMode;
use super::bars::{self, Bar, BarChart};
use super::xy::{self, Line, Marker, Point, XyChart};
use super::{Chart, Quantity, line};
use crate::model::{ExperimentResult, Unit};
use crate::stats::fit::Class;

/// Bars of the total time spent in each call (the mean per call × the calls), largest first.
pub fn time_by_call(r: &ExperimentResult) -> Option<Chart> {
    let mut totals: Vec<(String, f64)> = r
        .metrics
        .iter()
        .filter(|m| m.unit == Unit::Ns && m.summary.mean.is_finite())
        .map(|m| (m.name.clone(), m.summary.mean * m.summary.n as f64))
        .collect();
    totals.sort_by(|a, b| b.1.total_cmp(&a.1));
    let bars: Vec<Bar> = totals
        .iter()
        .map(|(name, total)| Bar {
            name: name.clone(),
            value: *total,
            lo: *total,
            hi: *total,
            band: None,
        })
        .collect();
    let title = "Time by call (total time in each call)".to_string();
    let chart = BarChart {
        title: format!("{}: {title}", r.id),
        axis_label: Quantity::Time.axis_title("total time in the call"),
        unit: Unit::Ns,
        bars,
    };
    let svg = bars::render(&chart)?;
    Some(Chart {
        title,
        caption: "Read the top bars first: they are the calls where the traced time went; a \
                  cheap call made many times can outweigh an expensive one."
            .to_string(),
        quantities: vec![Quantity::Time; totals.len()],
        svg,
    })
}

/// The fitted class and its coefficients (a, b) from the metrics, if the run has a fit.
fn fit(r: &ExperimentResult) -> Option<(Class, f64, f64)> {
    let coefficient = |class: Class, which: &str| {
        let name = format!("best fit {}: {which}", class.label());
        r.metrics
            .iter()
            .find(|m| m.name == name)
            .map(|m| m.summary.median)
    };
    Class::ALL
        .iter()
        .find_map(|c| Some((*c, coefficient(*c, "a")?, coefficient(*c, "b")?)))
}

/// The measured wall time by N with the best-fit curve over it and the knee, if found.
pub fn scale_fit(r: &ExperimentResult) -> Option<Chart> {
    let measured = r.series.iter().find(|s| s.name == "wall time")?;
    let mut lines = vec![line(measured)];
    if let Some((class, a, b)) = fit(r) {
        let points = measured
            .points
            .iter()
            .map(|p| {
                let y = a + b * class.g(p.x);
                Point {
                    x: p.x,
                    y,
                    lo: y,
                    hi: y,
                }
            })
            .filter(|p| p.y.is_finite())
            .collect();
        let name = format!("best fit {}", class.label());
        lines.push(Line { name, points });
    }
    let markers = r
        .metrics
        .iter()
        .filter(|m| m.name == "knee at N")
        .map(|m| Marker {
            x: m.summary.median,
            label: "knee".to_string(),
            detected: true,
        })
        .collect();
    let chart = XyChart {
        title: format!("{}: wall time by N with the best fit", r.id),
        x_label: Quantity::Count.axis_title(&measured.x_label),
        x_unit: measured.x_unit,
        x_mode: ScaleMode::Auto,
        y_label: Quantity::Time.axis_title("median wall time"),
        y_unit: Unit::Ns,
        y_mode: ScaleMode::Auto,
        lines,
        markers,
        levels: Vec::new(),
    };
    let quantities = vec![Quantity::Time; chart.lines.len()];
    let svg = xy::render(&chart)?;
    Some(Chart {
        title: "Wall time by N, with the best fit and the knee".to_string(),
        caption: "Read how far the dots (measured medians, band: 95% CI) sit from the fitted \
                  curve: close means the class describes the growth; a knee marks where the \
                  time per element rises."
            .to_string(),
        quantities,
        svg,
    })
}
