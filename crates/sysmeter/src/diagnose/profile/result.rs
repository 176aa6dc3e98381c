//! The stored form of a profile: the `profile` result (samples, lost samples, cost and
//! overhead as metrics; findings; the folded stacks, flame graph, call graph and flat
//! profile as artifacts) and the `profile.flat` result (one metric per function with self
//! samples, so every renderer shows the flat profile as a table), and the run record that
//! holds them.

use serde::Serialize;

use super::Settings;
use super::findings;
use super::overhead::Calibration;
use crate::diagnose::observe::sampled::aggregate::Analysis;
use crate::diagnose::observe::sampled::callgraph;
use crate::diagnose::observe::sampled::results::{single, table};
use crate::diagnose::observe::sampled::session::Recording;
use crate::diagnose::observe::target::Target;
use crate::model::{
    About, Artifact, ExperimentResult, HostInfo, Metric, RunConfig, RunKind, RunRecord, Unit,
};

/// One flat-profile row as stored in the `flat` artifact (JSON array).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FlatEntry {
    /// Function name.
    pub function: String,
    /// Short module name.
    pub module: String,
    /// A kernel function.
    pub kernel: bool,
    /// Samples with the function as leaf.
    pub self_samples: u64,
    /// Samples with the function on the stack.
    pub total_samples: u64,
}

/// Both results of a profile.
pub fn build(
    rec: &Recording,
    a: &Analysis,
    cal: &Calibration,
    settings: &Settings,
    flamegraph: &str,
) -> Vec<ExperimentResult> {
    let entries = callgraph::entries(
        &a.stacks,
        settings.call_graph_min_share,
        settings.call_graph_entries,
    );
    let artifacts = vec![
        artifact("folded", "text/plain", a.stacks.folded()),
        artifact(
            "callgraph",
            "text/plain",
            callgraph::render(&a.stacks, &entries),
        ),
        artifact("flat", "application/json", flat_json(a)),
        artifact("flamegraph", "image/svg+xml", flamegraph.to_string()),
    ];
    let mut main = ExperimentResult::new("profile", about(rec));
    main.metrics = summary_metrics(rec, a, cal);
    main.findings = findings::all(rec, a, cal);
    main.elapsed_ns = rec.wall_ns;
    main.session = Some(rec.end(rec.data.raw.lost, None));
    main.artifacts = artifacts;
    vec![main, flat_result(a, settings.flat_rows, rec.wall_ns)]
}

fn artifact(name: &str, media_type: &str, content: String) -> Artifact {
    Artifact {
        name: name.into(),
        media_type: media_type.into(),
        content,
    }
}

fn about(rec: &Recording) -> About {
    let stacks = if rec.data.kernel {
        "user and kernel"
    } else {
        "user (kernel call chains need root or perf_event_paranoid ≤ 1)"
    };
    About {
        title: "CPU profile (sampling the software CPU clock)".into(),
        measures: "Where CPU time goes: each sample stands for 1/F s of one thread's CPU time \
                   and carries its call stack."
            .into(),
        methodology: format!(
            "perf_event_open, software CPU clock at {} Hz per thread ({}); {stacks} call chains \
             from the kernel, with user stacks unwound from the user registers and a 16 KiB \
             stack copy with the binaries' DWARF CFI (frame pointers where there is none), \
             symbolised from ELF symbols (blazesym; code without symbols per unwind-table \
             entry) with the mappings recorded while sampling; stacks that still end early \
             are counted in the findings with what stopped them. Overhead: \
             cost per sample measured before the run (a spin loop's thread CPU time with and \
             without sampling at 10 kHz, median of 10 pairs) × frequency, an estimate (a \
             sample at 1 kHz can cost up to about twice as much; scripts/profile-overhead.sh \
             measures the slowdown side by side); the reader's own CPU time measured around \
             the run.",
            rec.data.frequency,
            match rec.exit {
                Some(_) => "a command, its threads and children (inherited per-CPU events)",
                None => "every thread of a running process (per-thread events)",
            },
        ),
        references: vec![
            "perf_event_open(2)".into(),
            "S. L. Graham, P. B. Kessler, M. K. McKusick: gprof: a Call Graph Execution \
             Profiler (1982)"
                .into(),
            "B. Gregg: Flame Graphs, https://www.brendangregg.com/flamegraphs.html".into(),
        ],
    }
}

/// What "CPU time sampled" is, beside the kernel's own count ("target CPU time").
const SAMPLED_NOTE: &str =
    "samples × period: the sampler's view (the kernel's count is target CPU time)";
/// What "target CPU time" is, beside the sampler's view of it.
const KERNEL_CPU_NOTE: &str = "the kernel's count: user + system of the command and the children \
     it waited for (CPU time sampled is the sampler's view)";

fn summary_metrics(rec: &Recording, a: &Analysis, cal: &Calibration) -> Vec<Metric> {
    let samples = a.stacks.total() as f64;
    let period_ns = 1e9 / rec.data.frequency.max(1) as f64;
    let mut m = vec![
        single(
            "samples",
            Unit::Count,
            samples,
            Some(format!("at {} Hz", rec.data.frequency)),
        ),
        single(
            "lost samples",
            Unit::Count,
            rec.data.raw.lost as f64,
            Some("ring buffer full".into()),
        ),
        single(
            "CPU time sampled",
            Unit::Ns,
            samples * period_ns,
            Some(SAMPLED_NOTE.into()),
        ),
        single(
            "wall time",
            Unit::Ns,
            rec.wall_ns as f64,
            Some("while sampling".into()),
        ),
        single(
            "cost per sample",
            Unit::Ns,
            cal.per_sample_ns,
            Some(format!("measured at {} Hz before the run", cal.frequency)),
        ),
        single(
            "in-target overhead (%)",
            Unit::Count,
            100.0 * cal.in_target_share(rec.data.frequency),
            Some("estimate: cost per sample × frequency".into()),
        ),
    ];
    if let Some(cpu) = rec.data.target_cpu_ns.filter(|&c| c > 0) {
        m.push(single(
            "target CPU time",
            Unit::Ns,
            cpu as f64,
            Some(KERNEL_CPU_NOTE.into()),
        ));
    }
    if let Some(share) = rec.profiler_share() {
        m.push(single(
            "profiler CPU (% of sampled CPU)",
            Unit::Count,
            100.0 * share,
            Some("reading ring buffers; competes only when all CPUs are busy".into()),
        ));
    }
    m
}

fn flat_json(a: &Analysis) -> String {
    let rows: Vec<FlatEntry> = a
        .stacks
        .flat()
        .into_iter()
        .map(|r| {
            let f = a.stacks.frame(r.frame);
            FlatEntry {
                function: f.name.clone(),
                module: f.module.clone(),
                kernel: f.kernel,
                self_samples: r.self_samples,
                total_samples: r.total_samples,
            }
        })
        .collect();
    serde_json::to_string(&rows).unwrap_or_else(|_| "[]".into())
}

/// `profile.flat`: the functions with self samples, most first, at most `max`.
fn flat_result(a: &Analysis, max: usize, elapsed_ns: u64) -> ExperimentResult {
    let total = a.stacks.total().max(1) as f64;
    let rows: Vec<_> = a
        .stacks
        .flat()
        .into_iter()
        .filter(|r| r.self_samples > 0)
        .take(max)
        .collect();
    let mut names = std::collections::HashMap::<String, usize>::new();
    for r in &rows {
        *names
            .entry(a.stacks.frame(r.frame).name.clone())
            .or_default() += 1;
    }
    let metrics = rows
        .iter()
        .map(|r| {
            let f = a.stacks.frame(r.frame);
            // Same name in two modules (two programs' `main`): keep metric names unique.
            let name = if names.get(&f.name).copied().unwrap_or(0) > 1 {
                format!("{} ({})", f.name, f.module)
            } else {
                f.name.clone()
            };
            let note = format!(
                "self {:.1}% · total {:.1}% ({} samples) · {}",
                100.0 * r.self_samples as f64 / total,
                100.0 * r.total_samples as f64 / total,
                r.total_samples,
                if f.module.is_empty() { "?" } else { &f.module },
            );
            single(&name, Unit::Count, r.self_samples as f64, Some(note))
        })
        .collect();
    let about = About {
        title: "Flat profile: self samples per function".into(),
        measures: "Samples whose innermost frame is the function (its own code), with its \
                       share and the share of samples with it anywhere on the stack."
            .into(),
        methodology: "Counted from the symbolised stacks of the `profile` result.".into(),
        references: Vec::new(),
    };
    table("profile.flat", about, metrics, elapsed_ns)
}

/// The run record of a profile that started at `started_ns`.
pub fn run_record(
    target: &Target,
    settings: &Settings,
    host: HostInfo,
    started_ns: i64,
    results: Vec<ExperimentResult>,
    interrupted: bool,
) -> RunRecord {
    let config = RunConfig {
        profile: match (settings.on_cpu, settings.off_cpu) {
            (true, false) => format!("{} Hz", settings.frequency),
            (false, _) => "off-CPU".to_string(),
            (true, true) => format!("{} Hz + off-CPU", settings.frequency),
        },
        cpu: None,
        selected: vec![target.describe()],
        target_ci_width: 0.0,
        calibration: None,
        seed: 0,
    };
    let mut run = RunRecord::new(RunKind::Profile, started_ns, host, config);
    run.finished_ns = Some(jiff::Timestamp::now().as_nanosecond() as i64);
    run.interrupted = interrupted;
    run.results = results;
    run
}
