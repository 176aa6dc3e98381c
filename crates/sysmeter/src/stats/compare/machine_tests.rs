//! The verdict rules on fixed fixtures with a shifted machine: the fixture run with its
//! machine-state probes set, against a copy whose samples and probes are scaled.

use super::machine::{decide_scaling, static_rule};
use super::*;
use crate::model::fixture::sample_run;
use crate::model::{MachineState, Metric, RunRecord, Unit};
use crate::stats::normalise::Point;
use crate::stats::summarize;

/// A steady probe at `ghz`.
pub(super) fn state(ghz: f64) -> MachineState {
    crate::model::fixture::steady_machine(ghz)
}

fn scale(m: &mut Metric, factor: f64) {
    for s in &mut m.samples {
        *s *= factor;
    }
    m.summary = summarize(&m.samples, 1).expect("finite samples");
}

/// The fixture with a DRAM-bound metric in `mem.latency` (a copy of the null syscall's
/// samples at 98.7 ns), every measured experiment probed at `ghz`, the CPU-bound metrics'
/// samples scaled by `cpu` and the DRAM metric's by `dram`.
pub(super) fn run(ghz: f64, cpu: f64, dram: f64) -> RunRecord {
    let mut run = sample_run();
    let mut dram_metric = run.results[0].metrics[1].clone();
    dram_metric.name = "DRAM latency".into();
    scale(&mut dram_metric, 98.7 / 51.3 * dram);
    run.results[1].metrics.push(dram_metric);
    for m in &mut run.results[0].metrics {
        scale(m, cpu);
    }
    for r in &mut run.results[..2] {
        r.machine = Some(state(ghz));
    }
    run
}

fn find<'a>(cmp: &'a RunComparison, metric: &str) -> &'a MetricComparison {
    cmp.metrics
        .iter()
        .find(|m| m.metric == metric)
        .unwrap_or_else(|| panic!("{metric} compared"))
}

/// The verdict of the samples alone, before the machines are compared.
fn raw_verdict(m: &MetricComparison) -> Option<Verdict> {
    m.comparison.as_ref().map(|c| c.verdict)
}

fn compare(a: &RunRecord, b: &RunRecord) -> RunComparison {
    compare_runs(a, b, &CompareOptions::default(), Some(0.05))
}

#[test]
fn a_slower_machine_is_not_a_regression_after_normalising() {
    // B's machine runs 25% slower (clock × 0.8) and every CPU-bound time is 25% longer.
    let (a, b) = (run(4.5, 1.0, 1.0), run(3.6, 1.25, 1.0));
    let cmp = compare(&a, &b);
    assert!((cmp.sides.machine_ratio.expect("probed") - 0.8).abs() < 1e-12);
    let null = find(&cmp, "null (getppid)");
    let raw = null.comparison.as_ref().expect("compared");
    assert_eq!(raw.verdict, Verdict::Slower);
    assert!((raw.change().expect("ratio") - 0.25).abs() < 1e-9);
    assert!(null.scales_with_clock && null.judged_normalised);
    assert!(null.normalised_change.expect("normalised").abs() < 1e-9);
    assert_eq!(null.verdict, Verdict::MachineSlower);
    assert_eq!(
        null.verdict.as_str(),
        "machine slower; no change after normalising"
    );
    assert!(!null.regression);
    assert_eq!(cmp.regressions().count(), 0);
    // The same machine 25% faster hides nothing either.
    let cmp = compare(&b, &a);
    assert_eq!(find(&cmp, "null (getppid)").verdict, Verdict::MachineFaster);
}

#[test]
fn the_same_clock_and_slower_samples_is_a_regression() {
    let (a, b) = (run(4.5, 1.0, 1.0), run(4.5, 1.25, 1.0));
    let cmp = compare(&a, &b);
    let null = find(&cmp, "null (getppid)");
    assert_eq!(null.machine_ratio, Some(1.0));
    assert!(!null.judged_normalised);
    assert!((null.normalised_change.expect("probed") - 0.25).abs() < 1e-9);
    assert_eq!(null.verdict, Verdict::Slower);
    assert!(null.regression);
}

#[test]
fn a_dram_metric_on_a_slower_machine_is_still_a_regression() {
    // DRAM latency does not scale with the core clock: normalising would hide this.
    let (a, b) = (run(4.5, 1.0, 1.0), run(3.6, 1.25, 1.25));
    let cmp = compare(&a, &b);
    let dram = find(&cmp, "DRAM latency");
    assert_eq!(dram.experiment, "mem.latency");
    assert!(!dram.scales_with_clock, "{}", dram.scaling_basis);
    assert_eq!(dram.normalised_change, None);
    assert_eq!(dram.normalised, None);
    assert!((dram.machine_ratio.expect("probed") - 0.8).abs() < 1e-12);
    assert_eq!(dram.verdict, Verdict::Slower);
    assert!(dram.regression);
    assert_eq!(cmp.regressions().count(), 1);
}

#[test]
fn a_real_regression_on_a_slower_machine_is_found_after_normalising() {
    let (a, b) = (run(4.5, 1.0, 1.0), run(3.6, 1.25 * 1.1, 1.0));
    let cmp = compare(&a, &b);
    let null = find(&cmp, "null (getppid)");
    assert!((null.normalised_change.expect("normalised") - 0.1).abs() < 1e-9);
    assert_eq!(null.verdict, Verdict::Slower);
    assert!(null.judged_normalised && null.regression);
}

#[test]
fn inside_the_machine_threshold_the_raw_verdict_stands() {
    // Probes 3% apart: within 5%, so the raw +3% is judged as it is.
    let (a, b) = (run(4.5, 1.0, 1.0), run(4.5 * 0.97, 1.03, 1.0));
    let cmp = compare(&a, &b);
    let null = find(&cmp, "null (getppid)");
    assert!(!null.judged_normalised);
    assert_eq!(null.verdict, Verdict::Slower);
    // 1.03 × 0.97 − 1 = −0.09%.
    assert!((null.normalised_change.expect("probed") + 0.0009).abs() < 1e-9);
    assert!(!null.regression);
}

#[test]
fn runs_without_probes_compare_as_before() {
    let (a, b) = (sample_run(), sample_run());
    let cmp = compare(&a, &b);
    assert_eq!(
        (cmp.sides.machine_ratio, cmp.sides.machine.as_ref()),
        (None, None)
    );
    for m in &cmp.metrics {
        assert_eq!((m.machine_ratio, m.normalised_change), (None, None));
        assert!(!m.judged_normalised);
        assert_eq!(Some(m.verdict), raw_verdict(m));
    }
    // One side probed: the speed is unknown and nothing is normalised.
    let b = run(3.6, 1.25, 1.0);
    let cmp = compare(&a, &b);
    let machine = cmp.sides.machine.as_ref().expect("B has probes");
    assert_eq!((machine.ratio, machine.a.probed), (None, 0));
    let null = find(&cmp, "null (getppid)");
    assert_eq!(
        (null.verdict, null.normalised_change),
        (Verdict::Slower, None)
    );
    assert!(null.regression);
}

#[test]
fn the_machine_comparison_says_when_a_run_moved_within() {
    let a = run(4.5, 1.0, 1.0);
    let mut b = run(3.6, 1.0, 1.0);
    b.results[1].machine = Some(MachineState {
        core_ghz_start: 3.0,
        stable: false,
        reason: Some("machine speed changed 17% during this experiment".into()),
        ..state(3.6)
    });
    let m = compare(&a, &b).sides.machine.expect("probed");
    assert!(!m.a.moved && m.b.moved);
    assert_eq!(m.b.core_ghz_range, Some((3.0, 3.6)));
    assert_eq!(
        m.b.unstable,
        ["mem.latency: machine speed changed 17% during this experiment"]
    );
    assert_eq!(m.experiments, 2);
    let (lo, hi) = m.ratio_range.expect("two experiments");
    assert!((lo - 3.3 / 4.5).abs() < 1e-12 && (hi - 0.8).abs() < 1e-12);
}

#[test]
fn the_static_rule_names_the_clock_bound_metrics() {
    for (experiment, metric) in [
        ("cpu.call", "direct call"),
        ("os.syscall", "null (getppid)"),
        ("os.ctxsw", "thread switch"),
        ("os.task", "fork+exit+wait"),
        ("ipc.pipe", "round trip 1 B, same CPU"),
        ("mem.latency", "L1 latency"),
        ("mem.latency", "L2 latency"),
        ("os.lookup", "stat, 8 components"),
    ] {
        assert!(
            static_rule(experiment, metric, Unit::Ns).scales,
            "{experiment}"
        );
    }
    for (experiment, metric, unit) in [
        ("mem.latency", "L3 latency", Unit::Ns),
        ("mem.latency", "DRAM latency", Unit::Ns),
        ("mem.bandwidth", "read", Unit::BytesPerSec),
        ("mem.pagefault", "minor fault", Unit::Ns),
        ("fs.read", "uncached random 4 KiB", Unit::Ns),
        ("net.rtt", "TCP round trip", Unit::Ns),
        ("ipc.pipe", "bandwidth", Unit::BytesPerSec),
        ("cpu.ops", "instructions", Unit::Count),
        (
            "os.lookup",
            "dentry-cache miss: stat, 8 components",
            Unit::Ns,
        ),
    ] {
        assert!(
            !static_rule(experiment, metric, unit).scales,
            "{experiment}"
        );
    }
}

#[test]
fn evidence_from_runs_overrides_the_static_rule() {
    let points = |ghz: &[f64], cost: &dyn Fn(f64) -> f64| -> Vec<Point> {
        ghz.iter()
            .map(|&g| Point {
                ns: cost(g),
                core_ghz: g,
            })
            .collect()
    };
    // An fs metric served from the page cache costs cycles: the runs show it.
    let (ca, cb) = ([4.5, 4.9, 4.2], [3.6, 3.9, 3.4]);
    let cyc = |g: f64| 2000.0 / g;
    let s = decide_scaling(
        "fs.read",
        "cached 4 KiB",
        Unit::Ns,
        &points(&ca, &cyc),
        &points(&cb, &cyc),
    );
    assert!(s.scales && s.basis.starts_with("evidence"), "{}", s.basis);
    // A "CPU-bound" metric whose time ignores the clock is not normalised.
    let fixed = |_: f64| 300.0;
    let s = decide_scaling(
        "os.syscall",
        "x",
        Unit::Ns,
        &points(&ca, &fixed),
        &points(&cb, &fixed),
    );
    assert!(!s.scales && s.basis.starts_with("evidence"), "{}", s.basis);
    // Steady clocks within each side: the rule decides.
    let s = decide_scaling(
        "os.syscall",
        "x",
        Unit::Ns,
        &points(&[4.5; 3], &fixed),
        &points(&[3.6; 3], &fixed),
    );
    assert!(s.scales && s.basis.starts_with("rule"), "{}", s.basis);
}

/// `run` with the throughput probe of every probed experiment at `adds_per_ns` (the clock
/// probe unchanged): the core's other hardware thread busy or idle.
fn shared_core(mut r: RunRecord, adds_per_ns: f64) -> RunRecord {
    for res in &mut r.results {
        if let Some(m) = res.machine.as_mut() {
            (m.throughput_start, m.throughput_end) = (adds_per_ns, adds_per_ns);
        }
    }
    r
}

#[test]
fn a_core_shared_more_in_b_explains_a_slowdown_but_not_a_speedup() {
    // Measured on the development machine: 14.3 adds/ns idle sibling, 8.7 busy; a null
    // syscall 164 vs 227 ns (1.38x) at the same 3.69 GHz.
    let a = shared_core(run(3.69, 1.0, 1.0), 14.3);
    let b = shared_core(run(3.69, 1.38, 1.2), 8.7);
    let cmp = compare(&a, &b);
    let null = find(&cmp, "null (getppid)");
    assert!((null.throughput_ratio.expect("probed") - 8.7 / 14.3).abs() < 1e-9);
    assert_eq!(raw_verdict(null), Some(Verdict::Slower));
    assert_eq!(null.verdict, Verdict::MachineBusier);
    assert!(!null.regression, "never a --fail-above regression");
    // DRAM latency does not scale with the core: still a regression.
    let dram = find(&cmp, "DRAM latency");
    assert_eq!((dram.verdict, dram.regression), (Verdict::Slower, true));
    assert_eq!(cmp.regressions().count(), 1);
    // Faster although B's core was shared more: that is the code, judged as it is.
    let b = shared_core(run(3.69, 0.7, 1.0), 8.7);
    assert_eq!(
        find(&compare(&a, &b), "null (getppid)").verdict,
        Verdict::Faster
    );
    // The other way round: A's core shared more, B faster → machine quieter.
    let cmp = compare(
        &shared_core(run(3.69, 1.38, 1.0), 8.7),
        &shared_core(run(3.69, 1.0, 1.0), 14.3),
    );
    assert_eq!(
        find(&cmp, "null (getppid)").verdict,
        Verdict::MachineQuieter
    );
}

#[test]
fn a_clock_change_alone_is_not_a_shared_core_and_small_differences_are_ignored() {
    // The fixture's throughput follows the clock (3.9 adds per cycle): per cycle, equal.
    let cmp = compare(&run(4.5, 1.0, 1.0), &run(3.6, 1.25 * 1.1, 1.0));
    let null = find(&cmp, "null (getppid)");
    assert!((null.throughput_ratio.expect("probed") - 1.0).abs() < 1e-9);
    assert_eq!(null.verdict, Verdict::Slower);
    // 5% less throughput: inside the 10% threshold, the slowdown is judged.
    let a = shared_core(run(3.69, 1.0, 1.0), 14.3);
    let b = shared_core(run(3.69, 1.2, 1.0), 14.3 * 0.95);
    let cmp = compare(&a, &b);
    let null = find(&cmp, "null (getppid)");
    assert_eq!((null.verdict, null.regression), (Verdict::Slower, true));
}

/// `run` with the shared-cache probe of `mem.latency` at a median of `ns` per load.
fn shared_cache(mut r: RunRecord, ns: f64) -> RunRecord {
    let m = r.results[1].machine.as_mut().expect("probed");
    m.cache = Some(crate::model::CacheShare {
        bytes: 4 << 20,
        count: 5,
        start_ns: ns,
        end_ns: ns,
        min_ns: ns,
        max_ns: ns,
        median_ns: ns,
    });
    r
}

#[test]
fn a_shared_cache_held_by_others_in_b_explains_a_slowdown_in_its_direction_only() {
    // Measured on the development machine: a 4 MiB chase 13-20 ns when the L3 share fits
    // it, 95-160 ns when other guests hold it.
    let a = shared_cache(run(3.69, 1.0, 1.0), 14.0);
    let b = shared_cache(run(3.69, 1.0, 1.3), 95.0);
    let cmp = compare(&a, &b);
    let dram = find(&cmp, "DRAM latency");
    assert!((dram.cache_ratio.expect("probed") - 95.0 / 14.0).abs() < 1e-9);
    assert_eq!(raw_verdict(dram), Some(Verdict::Slower));
    assert_eq!(
        (dram.verdict, dram.regression),
        (Verdict::MachineBusier, false)
    );
    // Other experiments carry no cache probe: their verdicts are untouched.
    assert_eq!(find(&cmp, "null (getppid)").cache_ratio, None);
    // A cache probe within 1.5x: the slowdown is judged.
    let b = shared_cache(run(3.69, 1.0, 1.3), 20.0);
    let dram = find(&compare(&a, &b), "DRAM latency").clone();
    assert_eq!((dram.verdict, dram.regression), (Verdict::Slower, true));
    // Faster although B's cache was held more by others: the code's, judged.
    let b = shared_cache(run(3.69, 1.0, 0.7), 95.0);
    assert_eq!(
        find(&compare(&a, &b), "DRAM latency").verdict,
        Verdict::Faster
    );
    // A's cache held by others and B faster: machine quieter.
    let cmp = compare(
        &shared_cache(run(3.69, 1.0, 1.3), 95.0),
        &shared_cache(run(3.69, 1.0, 1.0), 14.0),
    );
    assert_eq!(find(&cmp, "DRAM latency").verdict, Verdict::MachineQuieter);
}
