//! Turning a [`Measurement`] into the stored and rendered result: the evidence the verdict
//! reads, one [`ExperimentResult`] `run` with a single-sample metric per figure, the timeline
//! series and the findings (verdict, next command, remedies, exit status, notes), and the
//! [`RunRecord`] around it.
//!
//! Pure apart from nothing: all inputs are passed in (host, clock readings).

use super::measure::Measurement;
use super::procfs::PidIo;
use super::timeline;
use crate::diagnose::observe::lookups::LOOKUPS_LOST;
use crate::diagnose::observe::session::{Stopped, exit_of};
use crate::diagnose::observe::target::Target;
use crate::diagnose::run::classify::{self, Evidence, Verdict};
use crate::model::{
    About, ExperimentResult, Finding, HostInfo, Metric, RunConfig, RunKind, RunRecord, Unit,
};
use crate::stats::summarize;

/// Seed of the single-sample summaries.
const SEED: u64 = 1;

/// How the next commands name the target.
fn target_args(target: &Target) -> String {
    match target {
        Target::Launch(argv) => format!("-- {}", super::command_line(argv)),
        Target::Attach(pid) => format!("-p {pid}"),
    }
}

/// The verdict's inputs, from a measurement.
pub fn evidence(m: &Measurement, target: &Target) -> Evidence {
    Evidence {
        target: target_args(target),
        real_s: m.real_ns as f64 / 1e9,
        user_s: m.user_ns as f64 / 1e9,
        system_s: m.system_ns as f64 / 1e9,
        cpus: m.cpus,
        runqueue_s: m.runqueue_ns.map(|q| q as f64 / 1e9),
        major_faults: m.major_faults.unwrap_or(0),
        voluntary_switches: m.voluntary.unwrap_or(0),
        storage_bytes: m.io.map(|io| io.read_bytes + io.write_bytes),
        disk_wait_share: m.disk_wait_share,
        futex_wait_share: m.futex_wait_share,
        disk: m.totals.disk.clone(),
        net: m.totals.net.clone(),
        sockets: m.inet_sockets,
        swap_pages_per_s: m.totals.swap_pages_per_s,
        idle_pct: m.totals.cpu.map(|c| c[3]),
    }
}

/// A metric with one sample.
fn single(name: &str, unit: Unit, value: f64, note: &str) -> Option<Metric> {
    Some(Metric {
        note: (!note.is_empty()).then(|| note.to_string()),
        samples: vec![value],
        ..Metric::new(name, unit, summarize(&[value], SEED).ok()?)
    })
}

fn metrics(m: &Measurement, v: &Verdict) -> Vec<Metric> {
    use Unit::{Bytes, Count, Ns};
    let real = m.real_ns as f64;
    let cpu = (m.user_ns + m.system_ns) as f64;
    let busy = if real > 0.0 { cpu / real } else { 0.0 };
    let util = busy / m.cpus.max(1) as f64 * 100.0;
    let f = |x: Option<u64>| x.map(|v| v as f64);
    let io = |pick: fn(&PidIo) -> u64| m.io.as_ref().map(|i| pick(i) as f64);
    let cpus_note = format!("% of {} usable CPUs", m.cpus);
    // One row per figure; kept one per line so the table reads like the report.
    #[rustfmt::skip]
    let rows: [(&str, Unit, Option<f64>, &str); 19] = [
        ("real time", Ns, Some(real), "wall clock"),
        ("user time", Ns, Some(m.user_ns as f64), ""),
        ("system time", Ns, Some(m.system_ns as f64), ""),
        ("run-queue wait", Ns, f(m.runqueue_ns), "runnable, waiting for a CPU"),
        ("CPUs busy", Count, Some(busy), "(user + system) / real"),
        ("CPU utilisation", Count, Some(util), &cpus_note),
        ("CPU demand", Count, Some(v.demand), "(user + system + run-queue) / real"),
        ("max RSS", Bytes, f(m.max_rss_kib).map(|k| k * 1024.0), "peak resident set"),
        ("minor faults", Count, f(m.minor_faults), ""),
        ("major faults", Count, f(m.major_faults), "needed I/O"),
        ("voluntary switches", Count, f(m.voluntary), "blocked"),
        ("involuntary switches", Count, f(m.involuntary), "preempted"),
        ("bytes read", Bytes, io(|i| i.rchar), "read calls, any file"),
        ("bytes written", Bytes, io(|i| i.wchar), "write calls, any file"),
        ("storage read", Bytes, io(|i| i.read_bytes), "from the device"),
        ("storage written", Bytes, io(|i| i.write_bytes), "toward the device"),
        ("sockets held", Count, Some(m.sockets as f64), "most at one sample"),
        ("TCP/UDP sockets", Count, Some(m.inet_sockets as f64), "most at one sample"),
        ("disk-wait samples", Count, m.disk_wait_share.map(|s| s * 100.0), "% in state D"),
    ];
    let mut out: Vec<Metric> = rows
        .into_iter()
        .filter_map(|(name, unit, value, note)| single(name, unit, value?, note))
        .collect();
    if let Some(l) = &m.lookups {
        let rows = super::lookups::metric_rows(l);
        out.extend(
            rows.iter()
                .filter_map(|(n, u, v, note)| single(n, *u, *v, note)),
        );
    }
    out
}

fn findings(m: &Measurement, v: &Verdict, target: &Target, exit: Option<i32>) -> Vec<Finding> {
    let mut f = vec![
        Finding::new(
            "verdict",
            format!("Verdict: {}. {}", v.label, v.reason),
            Some(v.demand),
        ),
        Finding::new("next", format!("Next: {}.", v.next), None),
        Finding::new("remedies", format!("Usual remedies: {}.", v.remedies), None),
    ];
    if let (Target::Launch(argv), Some(code)) = (target, exit) {
        let name = argv
            .first()
            .map_or_else(String::new, |a| a.to_string_lossy().into_owned());
        let text = if code > 128 {
            format!(
                "`{name}` was killed by signal {} (exit code {code})",
                code - 128
            )
        } else {
            format!("`{name}` exited with code {code}")
        };
        f.push(Finding::new("exit", text, Some(f64::from(code))));
    }
    if m.signal != 0 {
        f.push(Finding::new(
            "interrupted",
            format!("sysmeter received signal {} during the run", m.signal),
            Some(f64::from(m.signal)),
        ));
    }
    if let Some(l) = &m.lookups {
        f.extend(super::lookups::findings(l));
    }
    for (i, note) in m.notes.iter().enumerate() {
        f.push(Finding::new(&format!("note{}", i + 1), note.clone(), None));
    }
    f
}

fn about(target: &Target, interval_ms: u64) -> About {
    let (title, measures, source) = match target {
        Target::Launch(argv) => (
            "Run: time split, resources, timeline and verdict".to_string(),
            format!("`{}`", super::command_line(argv)),
            "user/system time, max RSS, faults and context switches from wait4(2) (the \
             command and every descendant it waited for); bytes from /proc/PID/io of the \
             exited child, read before it was reaped; run-queue wait from \
             /proc/PID/task/*/schedstat",
        ),
        Target::Attach(pid) => (
            format!("Watch process {pid}: time split, resources, timeline and verdict"),
            format!("process {pid}"),
            "differences between the first and the last sample of /proc/PID/stat (utime, \
             stime, cutime, cstime, faults), /proc/PID/io and, summed over \
             /proc/PID/task/*, status (context switches) and schedstat (run-queue wait); \
             max RSS is VmHWM, the peak over the process's whole life",
        ),
    };
    About {
        title,
        measures,
        methodology: format!(
            "{source}. Timeline every {interval_ms} ms from /proc/stat, /proc/diskstats \
             (physical disks), /proc/net/dev (physical interfaces) and /proc/vmstat; x is the \
             end of each interval in seconds since the start. Verdict rules: see `sysmeter \
             run --help` and the classify module."
        ),
        references: vec![
            "D. Spinellis, Code Quality, ch. 4 Time Performance, 4.1 Workload \
             Characterization (Table 4.1)"
                .to_string(),
            "wait4(2), getrusage(2), proc(5)".to_string(),
        ],
    }
}

/// Everything a run record is built from.
#[derive(Debug)]
pub struct Parts<'a> {
    /// What was run or watched.
    pub target: &'a Target,
    /// The measurement.
    pub measurement: &'a Measurement,
    /// How the session ended: why, the launched command's exit, what watching took (the
    /// records lost are the lookup trace's, counted by its finding).
    pub session: Stopped,
    /// Sampling interval, ms.
    pub interval_ms: u64,
    /// The machine.
    pub host: HostInfo,
    /// Start and end, ns since the epoch.
    pub started_ns: i64,
    /// End, ns since the epoch.
    pub finished_ns: i64,
}

/// The run record of kind `run`, with its verdict.
pub fn build(p: Parts<'_>) -> (RunRecord, Verdict) {
    let m = p.measurement;
    let verdict = classify::classify(&evidence(m, p.target));
    let mut result = ExperimentResult::new("run", about(p.target, p.interval_ms));
    result.metrics = metrics(m, &verdict);
    result.series = timeline::to_series(&m.points);
    result.findings = findings(m, &verdict, p.target, exit_of(&p.session.command));
    result.elapsed_ns = m.real_ns;
    let lost = result.findings.iter().find(|f| f.key == LOOKUPS_LOST);
    let lost = lost.and_then(|f| f.value).map_or(0, |n| n as u64);
    result.session = Some(Stopped { lost, ..p.session }.end(None));
    result
        .artifacts
        .extend(m.lookups.as_ref().and_then(super::lookups::artifact));
    let config = RunConfig {
        profile: "run".to_string(),
        cpu: None,
        selected: vec!["run".to_string()],
        target_ci_width: 0.0,
        calibration: None,
        seed: SEED,
    };
    let mut record = RunRecord::new(RunKind::Run, p.started_ns, p.host, config);
    record.finished_ns = Some(p.finished_ns);
    record.interrupted = m.signal != 0;
    record.results = vec![result];
    (record, verdict)
}
