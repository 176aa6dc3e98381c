//! The stored form of an off-CPU profile: the `offcpu` result (blocked time, time per
//! reason, records, cost and overhead as metrics; findings: the top stacks with their
//! wakers, and with `--both` the share of each thread's wall time accounted for; the
//! off-CPU flame graph, folded stacks, call graph and the blocked stacks as JSON) and the
//! `offcpu.stacks` result (one metric per top stack: its intervals' durations, so every
//! renderer shows their distribution). With `--both` the off-CPU flame graph goes into the
//! `profile` result, beside the on-CPU one.

use super::analysis::{BlockedStack, OffAnalysis};
use super::classify::Reason;
use super::overhead::Cost;
use super::raw::OffRaw;
use crate::diagnose::observe::sampled::callgraph;
use crate::diagnose::observe::sampled::results::{single, table};
use crate::diagnose::observe::sampled::session::Recording;
use crate::model::{About, Artifact, ExperimentResult, Finding, Metric, Unit, units};

/// Stacks stored as metrics and in the JSON artifact at most.
const TOP_STACKS: usize = 20;
/// Durations kept per stack metric at most (evenly strided beyond).
const MAX_DURATIONS: usize = 5000;

/// What the results are built from.
pub struct Inputs<'a> {
    /// The session (wall time, profiler CPU time, on-CPU samples of `--both`).
    pub recording: &'a Recording,
    /// The off-CPU records.
    pub raw: &'a OffRaw,
    /// The analysed profile.
    pub analysis: &'a OffAnalysis,
    /// The measured cost of a switch.
    pub cost: &'a Cost,
    /// The CPU clock was sampled too (`--both`).
    pub on_cpu: bool,
    /// The off-CPU flame graph.
    pub flamegraph: &'a str,
    /// Which backend recorded it.
    pub backend: super::Backend,
}

fn artifact(name: &str, media_type: &str, content: String) -> Artifact {
    Artifact {
        name: name.into(),
        media_type: media_type.into(),
        content,
    }
}

/// Appends `offcpu` and `offcpu.stacks` to `results` (which holds the on-CPU results with
/// `--both`, or nothing).
pub fn add(results: &mut Vec<ExperimentResult>, i: &Inputs) {
    let a = i.analysis;
    let flame = artifact(
        "off-cpu flamegraph",
        "image/svg+xml",
        i.flamegraph.to_string(),
    );
    let entries = callgraph::entries(&a.analysis.stacks, 0.01, 30);
    let top: Vec<&BlockedStack> = a.stacks.iter().take(TOP_STACKS).collect();
    let mut main = ExperimentResult::new("offcpu", about(i));
    main.metrics = metrics(i);
    let (said, end) = super::loss::judged(i, findings(i));
    main.findings = said;
    main.findings
        .extend(i.raw.side.stops.finding("switch-out and waker"));
    // With --both the on-CPU result says it already.
    let exited = i.recording.exited().filter(|_| results.is_empty());
    main.findings.extend(exited);
    main.elapsed_ns = i.recording.wall_ns;
    main.session = Some(end);
    main.artifacts = vec![
        artifact("offcpu folded", "text/plain", a.analysis.stacks.folded()),
        artifact(
            "offcpu callgraph",
            "text/plain",
            callgraph::render(&a.analysis.stacks, &entries),
        ),
        artifact(
            "blocked stacks",
            "application/json",
            serde_json::to_string(&top).unwrap_or_else(|_| "[]".into()),
        ),
        a.per_thread.artifact(),
    ];
    match results.first_mut().filter(|r| r.id == "profile") {
        Some(on_cpu) => on_cpu.artifacts.push(flame),
        None => main.artifacts.insert(0, flame),
    }
    results.push(main);
    results.push(stacks_result(a, i.recording.wall_ns));
}

fn about(i: &Inputs) -> About {
    About {
        title: "Off-CPU profile (scheduler tracepoints)".into(),
        measures: "Where threads wait: each interval from a thread's switch-out to its next \
                   switch-in, charged to the user and kernel stack at the switch-out, classed \
                   by the kernel stack, with the thread that woke it."
            .into(),
        methodology: match i.backend {
            super::Backend::Bpf => super::loss::bpf_methodology(i.recording.exit.is_some()),
            super::Backend::Perf => perf_methodology(i),
        },
        references: vec![
            "B. Gregg: Off-CPU Analysis, https://www.brendangregg.com/offcpuanalysis.html".into(),
            "perf_event_open(2)".into(),
        ],
    }
}

fn perf_methodology(i: &Inputs) -> String {
    format!(
        "perf_event_open: sched:sched_switch on {} with call chains, the user registers \
             and a 4 KiB user stack copy (unwound with the binaries' DWARF CFI, frame \
             pointers where there is none), and context-switch records \
             for the switch-in; sched:sched_waking on every CPU for the waker. Symbolised like \
             the CPU profile. Overhead: the CPU time one recorded switch adds, measured before \
             the run on two threads bouncing a byte (median of 5 pairs of 200 round trips), \
             × the switches recorded.",
        match i.recording.exit {
            Some(_) => "a command, its threads and children (inherited per-CPU events)",
            None => "every thread of a running process (per-thread events)",
        }
    )
}

fn metrics(i: &Inputs) -> Vec<Metric> {
    let (a, rec) = (i.analysis, i.recording);
    let wall = rec.wall_ns as f64;
    let mut m = vec![
        single(
            "off-CPU time",
            Unit::Ns,
            a.total_ns as f64,
            Some(format!(
                "{} intervals in {} stacks",
                a.blocks.list.len(),
                a.stacks.len()
            )),
        ),
        single("intervals", Unit::Count, a.blocks.list.len() as f64, None),
        single("wall time", Unit::Ns, wall, Some("while recording".into())),
    ];
    for &(reason, ns, count) in &a.by_reason {
        m.push(single(
            &crate::model::offcpu::reason_metric(reason.label()),
            Unit::Ns,
            ns as f64,
            Some(format!(
                "{count} intervals · {}",
                units::percent(ns as f64 / a.total_ns.max(1) as f64)
            )),
        ));
    }
    let (pre_ns, pre_n) = a.preempted;
    m.push(single(
        "preempted (runnable)",
        Unit::Ns,
        pre_ns as f64,
        Some(format!(
            "{pre_n} intervals waiting for a CPU; not in the off-CPU time, in the wall accounting"
        )),
    ));
    m.extend(record_metrics(i));
    m
}

/// What was lost, and the intervals closed at their waking (in-kernel backend).
fn loss_metrics(i: &Inputs) -> Vec<Metric> {
    let raw = i.raw;
    let mut m = Vec::new();
    m.push(single(
        "lost records",
        Unit::Count,
        raw.side.lost as f64,
        Some(match i.backend {
            super::Backend::Perf => "ring buffer full".into(),
            super::Backend::Bpf => {
                "maps full, stacks not stored, or a switch the kernel did not report".into()
            }
        }),
    ));
    if raw.closed_at_waking > 0 {
        m.push(single(
            "intervals closed at their waking",
            Unit::Count,
            raw.closed_at_waking as f64,
            Some("the kernel did not report their switch-in".into()),
        ));
    }
    m
}

/// Records, losses, cost and overhead, and the wall-time coverage of `--both`.
fn record_metrics(i: &Inputs) -> Vec<Metric> {
    let (a, rec, raw) = (i.analysis, i.recording, i.raw);
    let wall = rec.wall_ns as f64;
    let mut m = Vec::new();
    m.push(single(
        "unfinished intervals",
        Unit::Count,
        a.blocks.unfinished as f64,
        Some("switched out and not back before the end (exits, or still waiting)".into()),
    ));
    m.extend(loss_metrics(i));
    m.push(single(
        "wakings read",
        Unit::Count,
        raw.wakings_read as f64,
        Some(match i.backend {
            super::Backend::Perf => format!("all processes; {} woke the target", raw.wakings.len()),
            super::Backend::Bpf => "of blocked target threads (filtered in the kernel)".into(),
        }),
    ));
    // Switches × cost counts only the switches kept: with records lost it is too low by an
    // unknown amount, so no number is given (the `lost` finding says why).
    if let Some(cost) = i.cost.per_switch_ns.filter(|_| raw.side.lost == 0) {
        let added = cost * raw.outs.len() as f64;
        m.push(single(
            "cost per switch",
            Unit::Ns,
            cost,
            Some("measured before the run".into()),
        ));
        m.push(single(
            "in-target overhead (% of wall)",
            Unit::Count,
            100.0 * added / wall.max(1.0),
            Some(format!("{} switches × cost per switch", raw.outs.len())),
        ));
    }
    m.push(single(
        "profiler CPU (% of wall)",
        Unit::Count,
        100.0 * rec.own_cpu_ns as f64 / wall.max(1.0),
        Some("reading the rings".into()),
    ));
    if let Some(c) = coverage(i).into_iter().map(|c| c.1).reduce(f64::min) {
        m.push(single(
            "wall covered, lowest thread (%)",
            Unit::Count,
            100.0 * c,
            Some("(on-CPU samples × period + off-CPU) / the thread's wall time".into()),
        ));
    }
    m
}

/// With `--both`: per thread, (tid, share of its wall time covered, on ns, off ns, span).
pub fn coverage(i: &Inputs) -> Vec<(u32, f64, f64, u64, u64)> {
    if !i.on_cpu {
        return Vec::new();
    }
    let period = 1e9 / i.recording.data.frequency.max(1) as f64;
    let mut on = std::collections::HashMap::<u32, f64>::new();
    for s in &i.recording.data.raw.samples {
        *on.entry(s.tid).or_default() += period;
    }
    i.analysis
        .threads
        .iter()
        .filter(|t| t.span_ns > 0)
        .map(|t| {
            let on_ns = on.get(&t.tid).copied().unwrap_or(0.0);
            let share = (on_ns + t.off_ns as f64) / t.span_ns as f64;
            (t.tid, share, on_ns, t.off_ns, t.span_ns)
        })
        .collect()
}

fn stack_line(s: &BlockedStack, total: u64) -> String {
    let waker = s.wakers.first().map_or(String::new(), |w| {
        let at = w.stack.iter().rev().find(|f| !f.ends_with("_[k]"));
        format!(
            "; woken by {}{}",
            w.who,
            at.map_or(String::new(), |f| format!(" in {f}"))
        )
    });
    format!(
        "{} of off-CPU time ({} in {} interval{}) blocked in {}{} ({}){waker}",
        units::percent(s.blocked_ns as f64 / total.max(1) as f64),
        units::duration_ns(s.blocked_ns as f64),
        s.count,
        if s.count == 1 { "" } else { "s" },
        s.caller,
        if s.caller == s.user_leaf {
            String::new()
        } else {
            format!(" → {}", s.user_leaf)
        },
        s.reason.label(),
    )
}

fn findings(i: &Inputs) -> Vec<Finding> {
    let a = i.analysis;
    let mut f: Vec<Finding> = a
        .stacks
        .iter()
        .take(3)
        .enumerate()
        .map(|(n, s)| {
            let share = s.blocked_ns as f64 / a.total_ns.max(1) as f64;
            Finding::new(
                &format!("blocked_{}", n + 1),
                stack_line(s, a.total_ns),
                Some(share),
            )
        })
        .collect();
    // `loss::judged` takes this out when the switches were hidden from the recording.
    if a.stacks.is_empty() {
        f.push(Finding::new(
            "no_blocking",
            "No thread of the target went off the CPU while \
            it was recorded."
                .into(),
            None,
        ));
    }
    f.extend(super::summed::finding(
        a.total_ns,
        i.recording.wall_ns,
        a.threads.len(),
    ));
    for (tid, share, on, off, span) in coverage(i).into_iter().take(8) {
        f.push(Finding::new(
            "wall_covered",
            format!(
                "thread {tid}: on-CPU {} + off-CPU {} = {} of its wall time {}",
                units::duration_ns(on),
                units::duration_ns(off as f64),
                units::percent(share),
                units::duration_ns(span as f64)
            ),
            Some(share),
        ));
    }
    if let Some(r) = a.by_reason.first().filter(|r| r.0 == Reason::Lock) {
        f.push(Finding::new(
            "futex_waits",
            format!(
                "futex waits are {} of off-CPU time: \
            `sysmeter locks` shows which locks",
                units::percent(r.1 as f64 / a.total_ns.max(1) as f64)
            ),
            None,
        ));
    }
    f
}

fn stacks_result(a: &OffAnalysis, elapsed_ns: u64) -> ExperimentResult {
    let mut seen = std::collections::HashMap::<String, usize>::new();
    let metrics = a
        .stacks
        .iter()
        .take(TOP_STACKS)
        .map(|s| {
            let base = format!("{} · {}", s.caller, s.reason.label());
            let n = seen.entry(base.clone()).or_default();
            *n += 1;
            let name = if *n > 1 { format!("{base} #{n}") } else { base };
            let step = s.durations.len().div_ceil(MAX_DURATIONS).max(1);
            let kept: Vec<f64> = s.durations.iter().step_by(step).copied().collect();
            let waker = s
                .wakers
                .first()
                .map_or("not seen".to_string(), |w| w.who.clone());
            let note = format!(
                "{}× · total {} · {} of off-CPU · woken by {waker}",
                s.count,
                units::duration_ns(s.blocked_ns as f64),
                units::percent(s.blocked_ns as f64 / a.total_ns.max(1) as f64)
            );
            let mut m = single(&name, Unit::Ns, s.blocked_ns as f64, Some(note));
            if let Ok(summary) = crate::stats::summarize(&kept, 0) {
                m.summary = summary;
                m.samples = kept;
            }
            m
        })
        .collect();
    let about = About {
        title: "Blocked stacks: time off the CPU per stack".into(),
        measures: "Each top stack's intervals off the CPU (their distribution), its total and \
                   count, and who woke it most."
            .into(),
        methodology: "From the `offcpu` result's intervals.".into(),
        references: Vec::new(),
    };
    table("offcpu.stacks", about, metrics, elapsed_ns)
}
