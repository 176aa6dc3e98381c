//! The Chrome trace event format (JSON, read by ui.perfetto.dev and chrome://tracing). Of a
//! `run` run: the command as one complete (`X`) slice from its start for its real time, and
//! every series of the /proc timeline as a counter track (`C` events at each sample's time).
//! Timestamps are microseconds since the run's start.
//!
//! An off-CPU profile (`profile --off-cpu`, `--both`) recorded by the perf backend keeps
//! its longest intervals (`model::thread_stacks`): each is a complete slice on its thread's
//! track, named by its reason, with its stack; timestamps are microseconds after the first
//! switch-out recorded.
//!
//! What the record does not keep is refused, never made up: the in-kernel backend sums the
//! intervals in the kernel, a record stored before intervals were kept has none, and
//! `calls --functions` keeps exact counts and times per edge, not each call's start; each
//! refusal names what shows what is kept. Reads only the run record (`model`).

use serde_json::{Value, json};

use super::ExportError;
use crate::model::callgraph::FUNCTIONS_ID;
use crate::model::thread_stacks::{self, ThreadStacks};
use crate::model::{RunKind, RunRecord};

/// The process id every event carries (the record keeps no pid of the command).
const PID: u32 = 1;
/// The thread of the command's slice.
const COMMAND_TID: u32 = 1;

/// The trace of `run`: a `run` run's command and /proc timeline, or an off-CPU profile's
/// intervals.
pub fn encode(run: &RunRecord) -> Result<Vec<u8>, ExportError> {
    if let Some(per_thread) = fits(run)? {
        return write(run, off_cpu(&per_thread));
    }
    let result = run.results.iter().find(|r| r.id == "run").ok_or_else(|| {
        ExportError::Missing(format!(
            "run {} has no result (it was stopped before its end); run the command again with \
             `sysmeter run -- CMD`",
            run.id
        ))
    })?;
    let mut events = vec![
        metadata("process_name", 0, &result.about.measures),
        metadata("thread_name", COMMAND_TID, "command"),
    ];
    if let Some(real) = result.metrics.iter().find(|m| m.name == "real time") {
        events.push(json!({
            "name": "command",
            "cat": "run",
            "ph": "X",
            "ts": 0.0,
            "dur": real.summary.median / 1e3,
            "pid": PID,
            "tid": COMMAND_TID,
            "args": {"verdict": verdict(run)},
        }));
    }
    for s in &result.series {
        for p in &s.points {
            events.push(json!({
                "name": s.name,
                "cat": "proc",
                "ph": "C",
                "ts": p.x * 1e6,
                "pid": PID,
                "tid": 0,
                "args": {"value": p.summary.median},
            }));
        }
    }
    write(run, events)
}

/// The trace file of `events`.
fn write(run: &RunRecord, events: Vec<Value>) -> Result<Vec<u8>, ExportError> {
    let trace = json!({
        "traceEvents": events,
        "displayTimeUnit": "ms",
        "otherData": {
            "run": run.id,
            "started_ns": run.started_ns,
            "tool": format!("sysmeter {}", run.tool_version),
        },
    });
    serde_json::to_vec(&trace).map_err(|e| ExportError::Missing(format!("{e}")))
}

/// A metadata (`M`) event naming the process or a thread.
fn metadata(name: &str, tid: u32, value: &str) -> Value {
    json!({
        "name": name,
        "ph": "M",
        "ts": 0,
        "pid": PID,
        "tid": tid,
        "args": {"name": value},
    })
}

/// The verdict finding's text, shown on the command's slice.
fn verdict(run: &RunRecord) -> String {
    run.results
        .iter()
        .flat_map(|r| &r.findings)
        .find(|f| f.key == "verdict")
        .map_or_else(String::new, |f| f.text.clone())
}

/// Every kept interval off the CPU as a complete (`X`) slice on its thread's track, named
/// by its reason, with its stack (folded: outermost first) and source lines.
fn off_cpu(t: &ThreadStacks) -> Vec<Value> {
    let mut events = vec![metadata("process_name", 0, "off-CPU intervals")];
    for thread in &t.threads {
        events.push(metadata(
            "thread_name",
            thread.tid,
            &t.thread_name(thread.tid),
        ));
    }
    for i in &t.intervals {
        let frames = t
            .stacks
            .get(i.stack as usize)
            .map_or(&[][..], |s| &s.frames[..]);
        let frames = frames.iter().filter_map(|&f| t.frames.get(f as usize));
        let stack: Vec<String> = frames
            .map(|f| match (&f.file, f.line) {
                (Some(file), Some(line)) => format!("{} ({file}:{line})", f.function),
                _ => f.function.clone(),
            })
            .collect();
        events.push(json!({
            "name": i.reason.replace('_', " "),
            "cat": "off-cpu",
            "ph": "X",
            "ts": i.start_ns as f64 / 1e3,
            "dur": i.duration_ns as f64 / 1e3,
            "pid": PID,
            "tid": i.tid,
            "args": {"stack": stack.join(";")},
        }));
    }
    events
}

/// Whether `run` has a timeline (`Some`: an off-CPU profile's intervals); else why not,
/// with what shows what it keeps.
fn fits(run: &RunRecord) -> Result<Option<ThreadStacks>, ExportError> {
    let has = |id: &str| run.results.iter().any(|r| r.id == id);
    let off = run.results.iter().find(|r| r.id == "offcpu");
    match run.kind {
        RunKind::Run => Ok(None),
        RunKind::Profile if has("offcpu") => match off.and_then(thread_stacks::of) {
            Some(t) if t.timed => Ok(Some(t)),
            Some(_) => Err(ExportError::Missing(
                "this off-CPU profile was summed in the kernel (--backend bpf), which keeps no \
                 interval with its thread and start; profile again with `sysmeter profile \
                 --off-cpu --backend perf -- CMD`, or open this one with --format firefox"
                    .into(),
            )),
            None => Err(ExportError::Missing(
                "this off-CPU profile was stored before sysmeter kept each interval with its \
                 thread and start, so there are no slices to draw; profile again with \
                 `sysmeter profile --off-cpu --backend perf -- CMD`, or open it with \
                 --format firefox"
                    .into(),
            )),
        },
        RunKind::Calls if has(FUNCTIONS_ID) => Err(ExportError::Missing(
            "`calls --functions` keeps exact counts and times per caller → callee edge, not \
             each call's start, so there is no timeline to draw; open it with --format \
             callgrind"
                .into(),
        )),
        kind => Err(ExportError::WrongKind {
            format: "chrome-trace",
            kind: kind.as_str().into(),
            fits: "`run` and `profile --off-cpu`",
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::RunKind;

    #[test]
    fn kept_intervals_are_slices_and_a_profile_summed_in_the_kernel_is_refused() {
        use crate::model::thread_stacks::{Interval, SourceFrame, Thread, ThreadStack};
        use crate::model::{About, ExperimentResult};
        let mut per_thread = ThreadStacks {
            frames: vec![SourceFrame {
                function: "wait".into(),
                file: Some("w.c".into()),
                line: Some(3),
                ..SourceFrame::default()
            }],
            threads: vec![Thread {
                tid: 8,
                pid: 7,
                name: "worker".into(),
            }],
            stacks: vec![ThreadStack {
                tid: 8,
                frames: vec![0],
                weight: 5000,
                reason: None,
            }],
            timed: true,
            ..ThreadStacks::default()
        };
        let interval = Interval {
            start_ns: 2000,
            duration_ns: 5000,
            tid: 8,
            reason: "page_fault".into(),
            stack: 0,
        };
        per_thread.keep_intervals(vec![interval], 10);
        let mut run = crate::model::fixture::sample_run();
        run.kind = RunKind::Profile;
        let mut off = ExperimentResult::new("offcpu", About::default());
        off.artifacts = vec![per_thread.artifact()];
        run.results = vec![off];
        let trace: Value = serde_json::from_slice(&encode(&run).expect("encodes")).expect("JSON");
        let events = trace["traceEvents"].as_array().expect("events");
        let slice = events.iter().find(|e| e["ph"] == "X").expect("a slice");
        assert_eq!(
            (slice["ts"].as_f64(), slice["dur"].as_f64()),
            (Some(2.0), Some(5.0))
        );
        assert_eq!(
            (&slice["name"], &slice["tid"]),
            (&json!("page fault"), &json!(8))
        );
        assert_eq!(slice["args"]["stack"], "wait (w.c:3)");
        per_thread.timed = false;
        run.results[0].artifacts = vec![per_thread.artifact()];
        let e = encode(&run).expect_err("no intervals");
        assert!(e.to_string().contains("--backend perf"), "{e}");
    }

    #[test]
    fn only_a_run_run_has_a_timeline() {
        let mut run = crate::model::fixture::sample_run();
        run.kind = RunKind::Bench;
        let e = encode(&run).expect_err("a bench has no timeline");
        assert!(
            e.to_string()
                .contains("fits `run` and `profile --off-cpu` runs"),
            "{e}"
        );
    }
}
