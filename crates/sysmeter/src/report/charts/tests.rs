//! Tests of the chart dispatcher on the fixture run and on results shaped like mem.latency,
//! mem.bandwidth and a later experiment's generic series.

use super::*;
use crate::model::fixture::{assert_contains, sample_run};
use crate::model::{Finding, SeriesPoint, Summary};

fn summary(median: f64) -> Summary {
    Summary {
        n: 5,
        median,
        ci95: (median * 0.97, median * 1.03),
        ..Summary::default()
    }
}

pub(super) fn metric(name: &str, unit: Unit, median: f64) -> Metric {
    Metric::new(name, unit, summary(median))
}

/// `mem.bandwidth` metrics of two kernels at two sizes with one thread, and one kernel with
/// two threads, not in size order.
pub(super) fn bandwidth_metrics() -> Vec<Metric> {
    vec![
        metric("read, L2 (256 KiB), 1 thread", Unit::BytesPerSec, 80e9),
        metric("read, L1 (16 KiB), 1 thread", Unit::BytesPerSec, 60e9),
        metric("write, L1 (16 KiB), 1 thread", Unit::BytesPerSec, 70e9),
        metric(
            "read, L1 (16 KiB each), 2 threads",
            Unit::BytesPerSec,
            130e9,
        ),
    ]
}

fn series(name: &str, x_label: &str, x_unit: Unit, points: &[(f64, f64)]) -> Series {
    Series {
        name: name.into(),
        x_label: x_label.into(),
        x_unit,
        y_unit: Unit::Ns,
        points: points
            .iter()
            .map(|(x, y)| SeriesPoint {
                x: *x,
                summary: summary(*y),
                cycles: None,
            })
            .collect(),
    }
}

fn result(id: &str) -> ExperimentResult {
    let mut r = sample_run().results.remove(0);
    r.id = id.into();
    r.metrics.clear();
    r.series.clear();
    r.findings.clear();
    r
}

#[test]
fn fixture_results_get_curves_and_bars() {
    let run = sample_run();
    let by_id = |id: &str| run.results.iter().find(|r| r.id == id).cloned();
    let syscall = by_id("os.syscall").map(|r| for_result(&r, &run.host.caches));
    let syscall = syscall.unwrap_or_default();
    assert_eq!(syscall.len(), 1);
    assert!(syscall[0].svg.contains(">null (getppid)</text>"));
    let latency = by_id("mem.latency").map(|r| for_result(&r, &run.host.caches));
    let latency = latency.unwrap_or_default();
    assert_eq!(latency.len(), 1);
    assert_eq!(latency[0].title, "load latency by working set");
    // No hierarchy findings in the fixture: an unannotated chart.
    assert!(!latency[0].svg.contains("sysfs"));
    let skipped = by_id("fs.direct").map(|r| for_result(&r, &run.host.caches));
    assert_eq!(skipped.map(|c| c.len()), Some(0));
}

#[test]
fn latency_curves_are_log_log_with_levels_and_sysfs_sizes() {
    let mut r = result("mem.latency");
    let pts = [
        (4096.0, 1.3),
        (32768.0, 1.4),
        (262_144.0, 4.0),
        (1.3e8, 110.0),
    ];
    r.series = vec![
        series("random", "working set", Unit::Bytes, &pts),
        series("stride 64 B", "working set", Unit::Bytes, &pts[..3]),
    ];
    let finding = |key: &str, value: f64| Finding {
        key: key.into(),
        text: String::new(),
        value: Some(value),
    };
    r.findings = vec![
        finding("hierarchy.L1.latency_ns", 1.3),
        finding("hierarchy.L1.size_bytes", 32768.0),
        finding("hierarchy.DRAM.latency_ns", 110.0),
    ];
    r.metrics = vec![metric("L1 latency", Unit::Ns, 1.3)];
    let charts = for_result(&r, &sample_run().host.caches);
    assert_eq!(
        charts.len(),
        2,
        "one curve chart for both series, one bar chart"
    );
    let svg = &charts[0].svg;
    assert_contains(
        svg,
        &[
            "working set [B] (log scale)",
            "time per operation [ns … s] (log scale)",
            ">L1 ends 32 KiB</text>",
            ">DRAM 110 ns</text>",
            ">sysfs L2 512 KiB</text>",
            ">stride 64 B</text>",
        ],
    );
}

#[test]
fn bandwidth_metrics_become_curves_and_the_rest_bars() {
    let mut r = result("mem.bandwidth");
    r.metrics = bandwidth_metrics();
    r.metrics.extend([
        metric("a <script>alert(1)</script> rate", Unit::BytesPerSec, 1e9),
        metric("page fault", Unit::Ns, 2000.0),
    ]);
    let charts = for_result(&r, &[]);
    let captions: Vec<&str> = charts.iter().map(|c| c.title.as_str()).collect();
    assert_eq!(
        captions,
        [
            "Bandwidth by working-set size, 1 thread",
            "Bandwidth by working-set size, 2 threads (size per thread)",
            "Metrics in throughput (median, whiskers: within-run 95% CI)",
            "Metrics in time (median, whiskers: within-run 95% CI)",
        ]
    );
    assert!(charts[2].svg.contains("&lt;script&gt;"));
    assert!(charts.iter().all(|c| !c.svg.contains("<script")));
}

#[test]
fn generic_series_group_by_axes_and_scale_automatically() {
    let mut r = result("x.scale");
    r.series = vec![
        series(
            "threads",
            "threads",
            Unit::Count,
            &[(1.0, 10.0), (2.0, 12.0)],
        ),
        series(
            "n log n fit",
            "input size",
            Unit::Count,
            &[(1.0, 5.0), (1e6, 9e7)],
        ),
        series(
            "measured",
            "input size",
            Unit::Count,
            &[(1.0, 6.0), (1e6, 8e7)],
        ),
        series("empty", "nothing", Unit::Count, &[]),
    ];
    let charts = for_result(&r, &[]);
    assert_eq!(charts.len(), 2, "empty series draw no chart");
    assert!(!charts[0].svg.contains("log scale"));
    assert!(charts[1].svg.contains("input size [count] (log scale)"));
    assert_eq!(charts[1].title, "n log n fit · measured by input size");
    for chart in &charts {
        assert!(!chart.svg.contains("d=\"\""));
    }
}
