//! Naming `mem.latency`'s levels after the sysfs caches, and the one value a level's
//! latency is shown with: the finding, the levels line and the level metric agree.

use super::*;
use crate::stats::hierarchy::{Config, Hierarchy};

/// The levels `found` as detected, with no refined boundary.
fn unrefined(found: &Hierarchy) -> Detected<'_> {
    Detected {
        found,
        boundaries: &[],
        fine_sizes: 0,
    }
}

#[test]
fn levels_are_named_after_the_sysfs_caches_they_match() {
    let kib = 1024u64;
    let pts: Vec<(u64, f64)> = (12..30)
        .map(|k| 1u64 << k)
        .map(|s| {
            (
                s,
                if s <= 32 * kib {
                    1.0
                } else if s <= 512 * kib {
                    4.0
                } else {
                    80.0
                },
            )
        })
        .collect();
    let found = hierarchy::detect(&pts, &Config::default());
    let d = unrefined(&found);
    let caches = [(1, 32 * kib), (2, 512 * kib), (3, 32 * kib * kib)];
    let (n, rows) = names(&d, &caches, 1 << 29);
    assert_eq!(n, ["L1", "L2", "DRAM"]);
    assert!(
        rows.iter()
            .any(|r| r.detected.is_none() && r.sysfs == Some(caches[2]))
    );
    let (n, _) = names(&d, &caches, 32 * kib * kib);
    assert_eq!(n, ["L1", "L2", "last level"]);
}

/// A windowed curve over 4 KiB–512 MiB whose points' samples are skewed (the median is not
/// the lowest sample, so a level value taken from another statistic would differ).
fn curve() -> (Vec<u64>, Vec<Metric>) {
    let kib = 1024u64;
    let xs: Vec<u64> = (12..30).map(|k| 1u64 << k).collect();
    let metrics = xs
        .iter()
        .enumerate()
        .map(|(i, &s)| {
            let base = if s <= 32 * kib {
                1.0
            } else if s <= 512 * kib {
                4.0
            } else {
                80.0
            } * (1.0 + 0.01 * i as f64);
            let samples = vec![base, 1.3 * base, 1.1 * base, 0.95 * base, 1.2 * base];
            let summary = crate::stats::summarize(&samples, 7).expect("finite samples");
            Metric {
                samples,
                ..Metric::new(&format!("w @ {s} B"), crate::model::Unit::Ns, summary)
            }
        })
        .collect();
    (xs, metrics)
}

#[test]
fn a_levels_finding_its_levels_line_and_its_metric_show_one_value() {
    // Issue 43: the metric said "L3 latency 12.0 ns", the levels line "L3 11.5 ns", a DRAM
    // finding 43.1 ns beside a metric of 95.6 ns: two computations of one number.
    let (xs, metrics) = curve();
    let lowest: Vec<(u64, f64)> = xs
        .iter()
        .zip(&metrics)
        .map(|(&x, m)| (x, m.samples[3]))
        .collect();
    let found = hierarchy::detect(&lowest, &Config::default());
    let d = unrefined(&found);
    let mut out = Measured::default();
    out.series.push(crate::model::Series {
        name: "w".into(),
        x_label: "working set".into(),
        x_unit: crate::model::Unit::Bytes,
        y_unit: crate::model::Unit::Ns,
        points: xs
            .iter()
            .zip(&metrics)
            .map(|(&x, m)| crate::model::SeriesPoint {
                x: x as f64,
                summary: m.summary,
                cycles: None,
            })
            .collect(),
    });
    levels(
        &HostInfo::default(),
        Some(2.0),
        &d,
        &metrics,
        1 << 29,
        &mut out,
    );
    let finding = |key: &str| out.findings.iter().find(|f| f.key == key);
    let levels: Vec<&Metric> = out
        .metrics
        .iter()
        .filter(|m| m.name.ends_with(" latency"))
        .collect();
    assert_eq!(levels.len(), found.levels.len(), "one metric per level");
    for m in &levels {
        let name = m.name.trim_end_matches(" latency");
        let f = finding(&format!("hierarchy.{name}.latency_ns")).expect("a latency finding");
        assert_eq!(f.value, Some(m.summary.median), "{name}: finding vs metric");
        let shown = units::duration_ns(m.summary.median);
        assert!(f.text.contains(&shown), "{name}: {} lacks {shown}", f.text);
    }
    // The last level has no end: the levels line quotes its latency.
    let last = levels.last().expect("levels");
    let line = finding("hierarchy.table").expect("the levels line");
    let shown = units::duration_ns(last.summary.median);
    assert!(line.text.contains(&shown), "{} lacks {shown}", line.text);
}
