//! The charts that answer a diagnosis at the top of its page: a trace's total time by system
//! call, and a scale run's measured wall times with the best-fit curve and the knee.
//!
//! Pure: an [`ExperimentResult`] in, a [`Chart`] out; the fit's class comes from the metric
//! names `best fit O(…): a` / `: b` the scale diagnosis writes (`stats::fit::Class`), and the
//! curve is that model evaluated at each N (`stats::fit::ClassFit::predict`), never the bare
//! coefficient.

use super::axis::ScaleMode;
use super::bars::{self, Bar, BarChart};
use super::xy::{self, Line, Marker, Point, XyChart};
use super::{Chart, Quantity, line};
use crate::model::{ExperimentResult, Unit};
use crate::stats::fit::{Class, ClassFit};

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
            at_least: false,
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

/// The fitted model from the metrics, if the run has a fit: t ≈ a·g(N) + b, the coefficient
/// `a` and the fixed cost `b` the text shows (`best fit O(N²): t ≈ 23.2 ns·N² + 102 ms`).
fn fit(r: &ExperimentResult) -> Option<ClassFit> {
    let coefficient = |class: Class, which: &str| {
        let name = format!("best fit {}: {which}", class.label());
        r.metrics
            .iter()
            .find(|m| m.name == name)
            .map(|m| m.summary.median)
    };
    Class::ALL.iter().find_map(|c| {
        Some(ClassFit {
            class: *c,
            a: coefficient(*c, "a")?,
            b: coefficient(*c, "b")?,
            // The curve needs only the model; how well it fits is in the findings.
            nrms: f64::NAN,
        })
    })
}

/// The best-fit curve at each measured N: the whole model (`ClassFit::predict`), so it runs
/// through the dots it was fitted to.
fn fit_line(r: &ExperimentResult, measured: &Line) -> Option<Line> {
    let model = fit(r)?;
    let points = measured
        .points
        .iter()
        .filter_map(|p| {
            let y = model.predict(p.x)?;
            Some(Point {
                x: p.x,
                y,
                lo: y,
                hi: y,
            })
        })
        .collect();
    let name = format!("best fit {}", model.class.label());
    Some(Line { name, points })
}

/// The measured wall time by N with the best-fit curve over it and the knee, if found.
pub fn scale_fit(r: &ExperimentResult) -> Option<Chart> {
    let measured = r.series.iter().find(|s| s.name == "wall time")?;
    let measured_line = line(measured);
    let fitted = fit_line(r, &measured_line);
    let mut lines = vec![measured_line];
    lines.extend(fitted);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::fixture::sample_run;
    use crate::model::{Metric, Series, SeriesPoint, Summary};
    use crate::stats::fit::{SelectRule, fit_all};

    /// The summary of one measured value.
    fn one(v: f64) -> Summary {
        Summary {
            n: 1,
            median: v,
            ci95: (v, v),
            ..Summary::default()
        }
    }

    /// A scale result shaped like an insertion sort launched as a command: t ≈ 23.2 ns·N² +
    /// 102 ms (the start-up), measured with a few per cent of noise, and its fit metrics named
    /// as the scale diagnosis names them.
    fn insertion_sort() -> ExperimentResult {
        let sizes = [50.0, 100.0, 200.0, 400.0, 800.0, 1600.0, 3200.0];
        let noise = [1.03, 0.98, 1.01, 0.97, 1.02, 0.99, 1.0];
        let times: Vec<f64> = sizes
            .iter()
            .zip(noise)
            .map(|(n, k)| (23.2 * n * n + 102e6) * k)
            .collect();
        let fit = fit_all(&sizes, &times, SelectRule::default()).expect("fits");
        let best = *fit.best();
        assert_eq!(best.class, Class::Quadratic, "{fit:?}");
        assert!(best.b > 50e6, "the start-up is part of the model: {best:?}");
        let mut r = sample_run().results.remove(0);
        r.id = "scale".into();
        let single = |name: String, v: f64| Metric::new(&name, Unit::Ns, one(v));
        r.metrics = vec![
            single(format!("best fit {}: a", best.class.label()), best.a),
            single(format!("best fit {}: b", best.class.label()), best.b),
        ];
        let points = sizes.iter().zip(&times).map(|(n, t)| SeriesPoint {
            x: *n,
            summary: one(*t),
            cycles: None,
        });
        r.series = vec![Series {
            name: "wall time".into(),
            x_label: "N".into(),
            x_unit: Unit::Count,
            y_unit: Unit::Ns,
            points: points.collect(),
        }];
        r
    }

    #[test]
    fn the_fitted_curve_runs_through_the_measured_times() {
        let r = insertion_sort();
        let measured = line(&r.series[0]);
        let fitted = fit_line(&r, &measured).expect("the run has a fit");
        assert_eq!(fitted.name, "best fit O(N²)");
        assert_eq!(fitted.points.len(), measured.points.len());
        for (f, m) in fitted.points.iter().zip(&measured.points) {
            assert_eq!(f.x, m.x);
            let ratio = f.y / m.y;
            assert!(
                (0.5..=2.0).contains(&ratio),
                "at N = {} the fit draws {} ns where {} ns was measured",
                m.x,
                f.y,
                m.y
            );
        }
        assert!(scale_fit(&r).is_some(), "the chart is drawn");
    }
}
