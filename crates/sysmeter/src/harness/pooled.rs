//! Test support for `Experiment::metric_findings`: an experiment's result over two or more
//! rounds as the runner makes it (each round's findings drawn from its metrics, then
//! `rounds::combine` pools the metrics and draws them again), so a test can check that a
//! finding quotes the pooled figure, not the last round's. Depends on the harness and `model`.

use super::rounds::combine;
use super::{Experiment, metric_findings};
use crate::model::{ExperimentResult, HostInfo, Metric, Unit};

/// A metric of `unit` named `name` whose samples are `samples`.
pub(crate) fn metric(name: &str, unit: Unit, samples: &[f64]) -> Metric {
    let summary = crate::stats::summarize(samples, 1).expect("finite samples");
    Metric {
        samples: samples.to_vec(),
        ..Metric::new(name, unit, summary)
    }
}

/// One round's metrics: `figures` as (name, unit, median), each metric of three samples
/// around its median scaled by `scale`, so rounds of different scales pool to a figure no
/// single round has.
pub(crate) fn round(figures: &[(&str, Unit, f64)], scale: f64) -> Vec<Metric> {
    figures
        .iter()
        .map(|(name, unit, x)| {
            let x = x * scale;
            metric(name, *unit, &[x * 0.99, x, x * 1.01])
        })
        .collect()
}

/// `exp`'s result over `rounds` (each round's metrics), as `bench --rounds N` makes it.
pub(crate) fn pooled(
    exp: &dyn Experiment,
    host: &HostInfo,
    rounds: &[Vec<Metric>],
) -> ExperimentResult {
    let results: Vec<ExperimentResult> = rounds
        .iter()
        .map(|metrics| {
            let mut r = ExperimentResult::new(exp.id(), exp.about());
            r.metrics = metrics.clone();
            r.findings = metric_findings(exp, host, metrics);
            r
        })
        .collect();
    let quote = |metrics: &[Metric]| metric_findings(exp, host, metrics);
    combine(&results, rounds.len(), (None, 7), &quote).expect("rounds to combine")
}

/// The figure every page shows of `result`'s metric `name`.
pub(crate) fn figure(result: &ExperimentResult, name: &str) -> f64 {
    result
        .metrics
        .iter()
        .find(|m| m.name == name)
        .map(crate::model::Metric::figure)
        .unwrap_or_else(|| panic!("no metric {name}"))
}

/// `result`'s one finding `key`: its text and value.
pub(crate) fn finding<'a>(result: &'a ExperimentResult, key: &str) -> (&'a str, Option<f64>) {
    let found: Vec<_> = result.findings.iter().filter(|f| f.key == key).collect();
    assert_eq!(found.len(), 1, "one finding {key}: {:?}", result.findings);
    (found[0].text.as_str(), found[0].value)
}
