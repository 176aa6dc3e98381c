//! The fleet reduction on hand-made values: spreads, percentiles and the outlier rule.

use super::*;
use crate::model::{FleetData, FleetJudged, FleetSpread, FleetValue, Unit};

fn value(host: &str, metric: &str, value: f64) -> FleetValue {
    FleetValue {
        hostname: host.into(),
        experiment: "os.syscall".into(),
        metric: metric.into(),
        unit: Unit::Ns,
        value,
        run_to_run: None,
        judged: None,
    }
}

/// One value of `metric` per host, the hosts named h0, h1, …
fn hosts(metric: &str, values: &[f64]) -> Vec<FleetValue> {
    (values.iter().enumerate())
        .map(|(i, v)| value(&format!("h{i}"), metric, *v))
        .collect()
}

fn data(values: Vec<FleetValue>) -> FleetData {
    FleetData {
        values,
        ..FleetData::default()
    }
}

#[test]
fn a_host_twice_as_slow_is_the_only_outlier() {
    let values = [100.0, 103.0, 97.0, 101.0, 200.0];
    let view = fleet_view(&data(hosts("getppid", &values)));
    let m = &view.metrics[0];
    assert_eq!(m.spread.median, 101.0);
    assert!((m.spread.p10 - 98.2).abs() < 1e-9, "{}", m.spread.p10);
    assert!((m.spread.p90 - 161.2).abs() < 1e-9, "{}", m.spread.p90);
    let outliers = view.outliers();
    assert_eq!(outliers.len(), 1);
    assert_eq!(outliers[0].1.hostname, "h4");
    assert_eq!(outliers[0].1.percentile, 100.0);
    assert_eq!(m.hosts[2].percentile, 0.0);
    assert_eq!(m.hosts[3].percentile, 50.0);
    assert_eq!(
        m.typical_host("h4").map(|h| h.hostname.as_str()),
        Some("h3")
    );
}

#[test]
fn identical_hosts_and_small_fleets_have_no_outliers() {
    let same = hosts("m", &[50.0; 5]);
    assert!(fleet_view(&data(same)).outliers().is_empty());
    // Two hosts: one of them twice the other is not judged.
    let two = vec![value("a", "m", 50.0), value("b", "m", 100.0)];
    assert!(fleet_view(&data(two)).outliers().is_empty());
    // A naturally spread metric: its ends are within three deviations.
    let wide = hosts("m", &[10.0, 14.0, 20.0, 28.0, 40.0]);
    assert!(fleet_view(&data(wide)).outliers().is_empty());
    // Zeros are never judged, and a zero median judges nothing.
    let z = hosts("m", &[0.0, 0.0, 0.0, 5.0]);
    assert!(fleet_view(&data(z)).outliers().is_empty());
}

#[test]
fn spreads_from_the_database_are_used_as_given() {
    let mut d = data(vec![value("a", "m", 1.0), value("b", "m", 2.0)]);
    d.spreads = Some(vec![FleetSpread {
        experiment: "os.syscall".into(),
        metric: "m".into(),
        unit: Unit::Ns,
        hosts: 2,
        median: 1.5,
        p10: 1.1,
        p90: 1.9,
    }]);
    let view = fleet_view(&d);
    assert_eq!(view.metrics[0].spread.p10, 1.1);
    assert_eq!(view.metrics[0].hosts[1].ratio, Some(2.0 / 1.5));
}

#[test]
fn a_host_whose_own_run_to_run_interval_reaches_the_median_is_not_an_outlier() {
    use crate::model::{IntervalBasis, RunToRun};
    let own = |basis, lo: f64, hi: f64| RunToRun {
        basis,
        runs: 8,
        lo,
        hi,
        sd_log: (hi / lo).ln() / 4.0,
    };
    let values = [100.0, 103.0, 97.0, 101.0, 200.0];
    let fleet = |interval: Option<RunToRun>| {
        let mut v = hosts("getppid", &values);
        v[4].run_to_run = interval;
        fleet_view(&data(v)).outliers().len()
    };
    // h4 moves 95–210 ns from run to run by itself: the fleet median (101) is inside.
    assert_eq!(fleet(Some(own(IntervalBasis::History, 95.0, 210.0))), 0);
    // Its own interval stays far from the median: still an outlier.
    assert_eq!(fleet(Some(own(IntervalBasis::History, 180.0, 220.0))), 1);
    // Rounds of one run are not the host's run-to-run spread: judged as before.
    assert_eq!(fleet(Some(own(IntervalBasis::Rounds, 95.0, 210.0))), 1);
}

#[test]
fn a_reduced_fleet_keeps_the_database_judgment_and_every_metric() {
    let judged = |host: &str, v: f64, outlier: bool| FleetValue {
        judged: Some(FleetJudged {
            percentile: if outlier { 100.0 } else { 50.0 },
            outlier,
        }),
        ..value(host, "m", v)
    };
    let spread = |metric: &str| FleetSpread {
        experiment: "os.syscall".into(),
        metric: metric.into(),
        unit: Unit::Ns,
        hosts: 1000,
        median: 100.0,
        p10: 95.0,
        p90: 105.0,
    };
    let d = FleetData {
        values: vec![judged("slow", 300.0, true), judged("typical", 100.0, false)],
        spreads: Some(vec![spread("m"), spread("quiet")]),
        reduced: true,
        ..FleetData::default()
    };
    let view = fleet_view(&d);
    assert_eq!(
        view.metrics.len(),
        2,
        "a metric without outliers is still listed"
    );
    assert_eq!(view.metrics[0].spread.hosts, 1000);
    let out = view.outliers();
    assert_eq!(out.len(), 1);
    assert_eq!(
        (out[0].1.hostname.as_str(), out[0].1.percentile),
        ("slow", 100.0)
    );
    assert_eq!(out[0].1.ratio, Some(3.0));
    assert_eq!(
        view.metrics[0]
            .typical_host("slow")
            .map(|h| h.hostname.as_str()),
        Some("typical")
    );
    assert!(view.metrics[1].hosts.is_empty());
}
