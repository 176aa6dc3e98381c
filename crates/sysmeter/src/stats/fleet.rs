//! A fleet read as a whole: per metric, the fleet's median and spread (p10–p90) over each
//! host's value, each host's percentile, and the hosts that stand out.
//!
//! The outlier rule (docs/fleet.md): with at least [`MIN_HOSTS`] hosts measuring a metric, a
//! host is an outlier when its value is more than [`MIN_FACTOR`]× away from the fleet median
//! (either way) *and* more than [`MADS`] robust standard deviations away, measured on the
//! log of value / median (the robust deviation is 1.4826 × the median absolute deviation of
//! those logs). The factor keeps a fleet of identical machines — whose deviation is nearly
//! zero — from calling a 3% wobble an outlier; the deviations keep a naturally spread metric
//! from calling its ends outliers. A host whose own run-to-run interval of the metric (from
//! at least `MIN_HISTORY_RUNS` stored runs, `FleetValue::run_to_run`) reaches the fleet
//! median is not an outlier either: it moves that far from one run to the next by itself.
//! Values ≤ 0 are never judged (no ratio).
//!
//! Pure: model values in, a [`FleetView`] out. Depends on `model` and `stats`.

use std::collections::BTreeMap;

use crate::model::{FleetData, FleetJudged, FleetSpread, FleetValue, IntervalBasis, Unit};

// The rule's constants live in `model::fleet`, where the store's SQL judge reads them too.
use crate::model::fleet_rule::MAD_TO_SD;
pub use crate::model::fleet_rule::{MADS, MIN_FACTOR, MIN_HOSTS};

/// One host's value of a metric.
#[derive(Debug, Clone, PartialEq)]
pub struct HostValue {
    /// Host name.
    pub hostname: String,
    /// The metric's median in the host's latest run.
    pub value: f64,
    /// Share of the other hosts with a lower value, ties counting half, in percent (0: the
    /// lowest, 100: the highest, 50 for a host alone).
    pub percentile: f64,
    /// value / fleet median (`None` when the median is not positive).
    pub ratio: Option<f64>,
    /// Whether the host is an outlier of this metric (see the module documentation).
    pub outlier: bool,
}

/// One metric across the fleet.
#[derive(Debug, Clone, PartialEq)]
pub struct FleetMetric {
    /// Experiment id.
    pub experiment: String,
    /// Metric name.
    pub metric: String,
    /// Unit of every value.
    pub unit: Unit,
    /// The fleet's median, p10 and p90 (R type 7, PostgreSQL's `percentile_cont`) and how
    /// many hosts measured it.
    pub spread: FleetSpread,
    /// Each host's value, by host name; in a fleet the database reduced
    /// (`FleetData::reduced`), only the outliers and the host nearest the median.
    pub hosts: Vec<HostValue>,
}

impl FleetMetric {
    /// The host whose value is nearest the fleet median (the one an outlier is compared
    /// with), other than `not`.
    pub fn typical_host(&self, not: &str) -> Option<&HostValue> {
        let off = |h: &HostValue| (h.value - self.spread.median).abs();
        self.hosts
            .iter()
            .filter(|h| h.hostname != not && !h.outlier)
            .min_by(|a, b| off(a).total_cmp(&off(b)))
    }
}

/// The fleet, metric by metric, in the order of `FleetData::values`.
#[derive(Debug, Clone, PartialEq)]
pub struct FleetView {
    /// Every metric some host measured.
    pub metrics: Vec<FleetMetric>,
}

impl FleetView {
    /// Every (metric, host) outlier, by how far the host is from the median (farthest first).
    pub fn outliers(&self) -> Vec<(&FleetMetric, &HostValue)> {
        let mut out: Vec<(&FleetMetric, &HostValue)> = self
            .metrics
            .iter()
            .flat_map(|m| m.hosts.iter().filter(|h| h.outlier).map(move |h| (m, h)))
            .collect();
        let distance = |h: &HostValue| h.ratio.map_or(0.0, |r| r.ln().abs());
        out.sort_by(|a, b| distance(b.1).total_cmp(&distance(a.1)));
        out
    }
}

/// Reduces the store's fleet rows. The database's spreads are used when it computed them
/// (PostgreSQL); otherwise they are computed here with the same definition.
pub fn fleet_view(data: &FleetData) -> FleetView {
    if data.reduced {
        return reduced_view(data);
    }
    let mut groups: BTreeMap<(&str, &str), Vec<&FleetValue>> = BTreeMap::new();
    for v in &data.values {
        groups
            .entry((&v.experiment, &v.metric))
            .or_default()
            .push(v);
    }
    let metrics = groups
        .into_values()
        .filter_map(|values| {
            let first = values.first()?;
            let from_db = data.spreads.as_ref().and_then(|s| {
                s.iter()
                    .find(|s| s.experiment == first.experiment && s.metric == first.metric)
            });
            Some(metric(&values, from_db.cloned()))
        })
        .collect();
    FleetView { metrics }
}

/// One metric from its hosts' values.
fn metric(values: &[&FleetValue], spread: Option<FleetSpread>) -> FleetMetric {
    let mut sorted: Vec<f64> = values.iter().map(|v| v.value).collect();
    sorted.sort_by(f64::total_cmp);
    let (experiment, name) = (values[0].experiment.clone(), values[0].metric.clone());
    let spread = spread.unwrap_or_else(|| FleetSpread {
        experiment: experiment.clone(),
        metric: name.clone(),
        unit: values[0].unit,
        hosts: values.len(),
        median: super::quantile_sorted(&sorted, 0.5),
        p10: super::quantile_sorted(&sorted, 0.1),
        p90: super::quantile_sorted(&sorted, 0.9),
    });
    let judge = Judge::new(values, spread.median);
    let hosts = values
        .iter()
        .map(|v| HostValue {
            hostname: v.hostname.clone(),
            value: v.value,
            percentile: percentile(&sorted, v.value),
            ratio: (spread.median > 0.0).then(|| v.value / spread.median),
            outlier: judge.is_outlier(v.value) && !within_own_spread(v, spread.median),
        })
        .collect();
    FleetMetric {
        experiment,
        metric: name,
        unit: values[0].unit,
        spread,
        hosts,
    }
}

/// The view of a fleet the database reduced: every metric from its spread, with the values
/// read (outliers and hosts nearest the median) as the database judged them — an outlier
/// still gives way to its own run-to-run interval, as in [`metric`].
fn reduced_view(data: &FleetData) -> FleetView {
    let spreads = data.spreads.as_deref().unwrap_or_default();
    let metrics = spreads
        .iter()
        .map(|s| {
            let hosts = data
                .values
                .iter()
                .filter(|v| v.experiment == s.experiment && v.metric == s.metric)
                .map(|v| {
                    let judged = v.judged.unwrap_or(FleetJudged {
                        percentile: 50.0,
                        outlier: false,
                    });
                    HostValue {
                        hostname: v.hostname.clone(),
                        value: v.value,
                        percentile: judged.percentile,
                        ratio: (s.median > 0.0).then(|| v.value / s.median),
                        outlier: judged.outlier && !within_own_spread(v, s.median),
                    }
                })
                .collect();
            FleetMetric {
                experiment: s.experiment.clone(),
                metric: s.metric.clone(),
                unit: s.unit,
                spread: s.clone(),
                hosts,
            }
        })
        .collect();
    FleetView { metrics }
}

/// Whether the host's own run-to-run interval (from its stored history) reaches `median`.
fn within_own_spread(v: &FleetValue, median: f64) -> bool {
    (v.run_to_run.as_ref())
        .filter(|i| i.basis == IntervalBasis::History)
        .is_some_and(|i| i.lo <= median && median <= i.hi)
}

/// Share of the other values below `v` (ties half), in percent.
fn percentile(sorted: &[f64], v: f64) -> f64 {
    if sorted.len() < 2 {
        return 50.0;
    }
    // Two binary searches: a fleet of 10 000 hosts asks this 10 000 times per metric.
    let below = sorted.partition_point(|x| *x < v);
    let equal = sorted.partition_point(|x| *x <= v) - below;
    let (below, equal) = (below as f64, equal as f64 - 1.0);
    100.0 * (below + equal / 2.0) / (sorted.len() - 1) as f64
}

/// The outlier rule of one metric (module documentation).
struct Judge {
    median: f64,
    /// Robust standard deviation of ln(value / median); `None`: nothing is judged.
    sd: Option<f64>,
}

impl Judge {
    fn new(values: &[&FleetValue], median: f64) -> Judge {
        let logs: Vec<f64> = values
            .iter()
            .filter(|v| v.value > 0.0 && median > 0.0)
            .map(|v| (v.value / median).ln().abs())
            .collect();
        let sd = (values.len() >= MIN_HOSTS)
            .then(|| super::median(&logs).ok())
            .flatten()
            .map(|mad| mad * MAD_TO_SD);
        Judge { median, sd }
    }

    fn is_outlier(&self, value: f64) -> bool {
        let Some(sd) = self.sd else { return false };
        if value <= 0.0 {
            return false;
        }
        let d = (value / self.median).ln().abs();
        d > MIN_FACTOR.ln() && d > MADS * sd
    }
}

#[cfg(test)]
mod tests;
