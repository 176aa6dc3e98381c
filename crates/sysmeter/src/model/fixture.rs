//! A fixed run for tests and docs: one deterministic [`RunRecord`] that exercises every part
//! of the model the renderers show (ok / skipped / failed experiments, metrics with cycles, a
//! noisy metric, estimates, findings and a series).
//!
//! Pure and deterministic: fixed timestamps, fixed samples, statistics computed by `stats`
//! with a fixed seed. The snapshot tests of `report` and the integration tests reuse it, so
//! changing it means re-accepting snapshots. Beside it, [`assert_in_order`]: the layout
//! check of a rendered view that the unit and the integration tests share, [`assert_contains`]
//! (the same without the order), [`assert_cases`]: the check of a function against a
//! table of inputs and outputs, [`folded_profile`] and
//! [`profile_round`]: a profile's result and one round of it as `compare` tallies it.

use crate::model::tally::{Cell, Table, Tally};
use crate::model::{
    About, Calibration, Estimate, ExperimentResult, Finding, HostInfo, MachineState, Metric,
    RunConfig, RunKind, RunRecord, SCHEMA_VERSION, Series, SeriesPoint, Skip, Status, Summary,
    Unit,
};
use crate::model::{CacheInfo, CpuInfo, MemoryInfo};
use crate::stats::summarize;

/// Seed of the fixture's bootstrap statistics.
const SEED: u64 = 42;
/// TSC rate of the fixture host, GHz.
const TSC_GHZ: f64 = 2.45;
/// 2026-11-22T18:32:42Z in ns since the epoch.
const STARTED_NS: i64 = 1_795_372_362_000_000_000;

/// A fixed run for tests and docs (see the module documentation).
pub fn sample_run() -> RunRecord {
    RunRecord {
        schema: SCHEMA_VERSION,
        id: "20261122T183242Z-3f9a".to_string(),
        kind: RunKind::Bench,
        started_ns: STARTED_NS,
        finished_ns: Some(STARTED_NS + 41_250_000_000),
        interrupted: false,
        tool_version: "0.1.0".to_string(),
        host: host(),
        config: config(),
        results: vec![syscall(), latency(), direct_io(), pipe()],
    }
}

/// Summary of fixed, finite samples (so `summarize` cannot fail; the default is unreachable).
fn summary(samples: &[f64]) -> Summary {
    summarize(samples, SEED).unwrap_or_default()
}

/// Samples around `base` with a fixed relative jitter pattern scaled by `spread`, rounded to
/// 4 decimals so the JSON snapshot stays readable.
fn samples(base: f64, spread: f64) -> Vec<f64> {
    const JITTER: [f64; 12] = [
        0.0, 0.8, -0.4, 1.6, -1.0, 0.3, 2.4, -0.7, 0.1, -1.9, 1.1, -0.2,
    ];
    JITTER
        .iter()
        .map(|j| (base * (1.0 + spread * j) * 1e4).round() / 1e4)
        .collect()
}

fn host() -> HostInfo {
    HostInfo {
        hostname: "bench-01".to_string(),
        arch: "x86_64".to_string(),
        kernel: "6.8.0-45-generic".to_string(),
        os: "Ubuntu 24.04.1 LTS".to_string(),
        cpu: CpuInfo {
            model: "AMD EPYC 7B13 64-Core Processor".to_string(),
            vendor: "AuthenticAMD".to_string(),
            sockets: 1,
            cores: 1,
            threads: 2,
            usable_cpus: 2,
            base_mhz: Some(2450.0),
            flags: vec!["constant_tsc".to_string(), "rdtscp".to_string()],
            ..CpuInfo::default()
        },
        caches: vec![
            cache(1, "Data", 32 * 1024),
            cache(2, "Unified", 512 * 1024),
            cache(3, "Unified", 32 * 1024 * 1024),
        ],
        memory: MemoryInfo {
            total_bytes: 8 * 1024 * 1024 * 1024,
            available_bytes: 6 * 1024 * 1024 * 1024,
            ..MemoryInfo::default()
        },
        virtualization: Some("KVM".to_string()),
        warnings: vec![
            "virtualized (KVM): steal time and timer exits can add noise to every result"
                .to_string(),
        ],
        ..HostInfo::default()
    }
}

fn cache(level: u32, kind: &str, size_bytes: u64) -> CacheInfo {
    CacheInfo {
        level,
        kind: kind.to_string(),
        size_bytes,
        line_bytes: Some(64),
        shared_cpus: "0-1".to_string(),
        ..CacheInfo::default()
    }
}

fn config() -> RunConfig {
    RunConfig {
        profile: "default".to_string(),
        cpu: Some(1),
        selected: ["os.syscall", "mem.latency", "fs.direct", "ipc.pipe"]
            .map(str::to_string)
            .to_vec(),
        target_ci_width: 0.02,
        calibration: Some(Calibration {
            clock: "CLOCK_MONOTONIC (vDSO)".to_string(),
            timer_overhead_ns: 19.8,
            timer_granularity_ns: 10.0,
            loop_overhead_ns: 0.41,
            min_sample_ns: 1_000_000.0,
            tsc_ghz: Some(TSC_GHZ),
            tsc_source: Some("rdtsc".to_string()),
        }),
        seed: SEED,
    }
}

/// A time metric with cycles at the fixture's TSC rate.
fn time_metric(name: &str, samples: Vec<f64>, note: Option<&str>) -> Metric {
    let cycles: Vec<f64> = samples.iter().map(|ns| ns * TSC_GHZ).collect();
    let ns = summary(&samples);
    Metric {
        cycles: Some(summary(&cycles)),
        subtracted_overhead_ns: 0.41,
        ops_per_sample: 200_000,
        note: note.map(str::to_string),
        samples,
        ..Metric::new(name, Unit::Ns, ns)
    }
}

fn about(title: &str, measures: &str, methodology: &str) -> About {
    About::new(
        title,
        measures,
        methodology,
        &["McVoy & Staelin, lmbench (USENIX 1996)"],
    )
}

fn experiment(id: &str, status: Status, about: About) -> ExperimentResult {
    let mut result = ExperimentResult::new(id, about);
    result.status = status;
    result
}

fn syscall() -> ExperimentResult {
    let mut noisy = samples(412.0, 0.09);
    noisy[6] = 1900.0; // one preempted sample: an outlier
    let call = time_metric("function call", samples(1.21, 0.01), Some("not inlined"));
    let null = time_metric("null (getppid)", samples(51.3, 0.005), Some("system call"));
    let ratio = null.summary.median / call.summary.median;
    let mut result = experiment(
        "os.syscall",
        Status::Ok,
        about(
            "System call cost",
            "The cost of entering and leaving the kernel.",
            "The timed interval holds `iters` back-to-back calls; timer and loop overhead \
             per call are subtracted.",
        ),
    );
    result.estimates = vec![Estimate {
        metric: "null (getppid)".to_string(),
        value: 40.8,
        unit: Unit::Ns,
        basis: "~100 cycles for entry and exit at 2.45 GHz".to_string(),
    }];
    result.metrics = vec![
        call,
        null,
        time_metric("read 1 byte (/dev/zero)", noisy, None),
    ];
    result.findings = vec![Finding {
        key: "syscall_vs_call_ratio".to_string(),
        text: format!("A null system call costs {ratio:.0}× a function call."),
        value: Some(ratio),
    }];
    result.elapsed_ns = 3_210_000_000;
    result
}

fn latency() -> ExperimentResult {
    let point = |x: f64, ns: f64| {
        let s = samples(ns, 0.01);
        let cycles: Vec<f64> = s.iter().map(|v| v * TSC_GHZ).collect();
        SeriesPoint {
            x,
            summary: summary(&s),
            cycles: Some(summary(&cycles)),
        }
    };
    let mut result = experiment(
        "mem.latency",
        Status::Ok,
        about(
            "Memory latency",
            "Load-to-use latency by working-set size.",
            "A dependent pointer chase over a random cyclic permutation; the timed \
             interval holds `iters` loads.",
        ),
    );
    result.series = vec![Series {
        name: "load latency".to_string(),
        x_label: "working set".to_string(),
        x_unit: Unit::Bytes,
        y_unit: Unit::Ns,
        points: vec![
            point(16.0 * 1024.0, 1.63),
            point(256.0 * 1024.0, 4.9),
            point(64.0 * 1024.0 * 1024.0, 98.7),
        ],
    }];
    result.findings = vec![Finding {
        key: "l2_size_bytes".to_string(),
        text: "Latency rises past 512 KiB: the L2 cache size matches sysfs.".to_string(),
        value: Some(524_288.0),
    }];
    result.elapsed_ns = 12_800_000_000;
    result
}

fn direct_io() -> ExperimentResult {
    let mut result = experiment(
        "fs.direct",
        Status::Skipped,
        about(
            "Direct I/O read",
            "Block reads that bypass the page cache.",
            "O_DIRECT reads of aligned blocks from a temporary file.",
        ),
    );
    result.skip = Some(Skip {
        reason: "O_DIRECT is not supported on tmpfs (/tmp)".to_string(),
        hint: "pass --dir on a disk-backed file system, e.g. --dir /var/tmp".to_string(),
    });
    result
}

fn pipe() -> ExperimentResult {
    let mut result = experiment(
        "ipc.pipe",
        Status::Failed,
        about(
            "Pipe round trip",
            "One byte there and back through two pipes.",
            "Two processes ping-pong one byte; the timed interval holds `iters` round trips.",
        ),
    );
    result.error =
        Some("creating a pipe failed: too many open files (EMFILE); raise `ulimit -n`".to_string());
    result.elapsed_ns = 1_000_000;
    result
}

/// A machine state whose probe held still at `ghz` (throughput 3.9 adds per cycle, a 160 ns
/// null system call), for tests of what the harness and `compare` do with it.
pub fn steady_machine(ghz: f64) -> MachineState {
    MachineState {
        core_ghz_start: ghz,
        core_ghz_end: ghz,
        throughput_start: 3.9 * ghz,
        throughput_end: 3.9 * ghz,
        syscall_ns_start: 160.0,
        syscall_ns_end: 160.0,
        steal_ns: 0,
        involuntary_switches: 0,
        runqueue_wait_ns: 0,
        stable: true,
        reason: None,
        between: None,
        cache: None,
    }
}

/// Asserts that `text` holds each of `parts`, in this order.
pub fn assert_in_order(text: &str, parts: &[&str]) {
    let at = |what: &str| {
        text.find(what)
            .unwrap_or_else(|| panic!("no {what}:\n{text}"))
    };
    for pair in parts.windows(2) {
        assert!(at(pair[0]) < at(pair[1]), "{pair:?} out of order:\n{text}");
    }
}

/// Asserts that `text` holds each of `parts`, in any order.
pub fn assert_contains(text: &str, parts: &[&str]) {
    for part in parts {
        assert!(text.contains(part), "no {part}:\n{text}");
    }
}

/// Asserts that `f` turns each input of `cases` into its output.
pub fn assert_cases<T, R, W>(f: impl Fn(T) -> R, cases: &[(T, W)])
where
    T: Copy + std::fmt::Debug,
    R: PartialEq<W> + std::fmt::Debug,
    W: std::fmt::Debug,
{
    for (input, want) in cases {
        assert_eq!(f(*input), *want, "{input:?}");
    }
}

/// A `profile` result holding only its `folded` stacks (`main;f 3` lines).
pub fn folded_profile(folded: &str) -> ExperimentResult {
    let mut r = ExperimentResult::new("profile", About::default());
    r.artifacts.push(crate::model::Artifact {
        name: "folded".into(),
        media_type: "text/plain".into(),
        content: folded.into(),
    });
    r
}

/// One whole round of a profile of 1 s as `compare` tallies it: CPU samples per stack
/// (`main;f` …), each count its own number of events.
pub fn profile_round(counts: impl IntoIterator<Item = (String, f64)>) -> Tally {
    let rows = counts.into_iter().map(|(stack, n)| {
        let cell = Cell {
            value: n,
            events: Some(n),
        };
        (stack, cell)
    });
    Tally {
        wall_ns: 1_000_000_000,
        whole: true,
        tables: vec![Table {
            name: "CPU samples per stack".into(),
            unit: Unit::Count,
            stacks: true,
            rows: rows.collect(),
        }],
    }
}
