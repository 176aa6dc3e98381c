//! The Chrome trace event format (JSON, read by ui.perfetto.dev and chrome://tracing) of a
//! `run` run: the command as one complete (`X`) slice from its start for its real time, and
//! every series of the /proc timeline as a counter track (`C` events at each sample's time).
//! Timestamps are microseconds since the run's start.
//!
//! What the record does not keep is refused, never made up: `profile --off-cpu` stores the
//! blocked time per stack and reason, not each interval with its thread and start, and
//! `calls --functions` exact counts and times per edge, not each call's start; both
//! refusals name the format that shows what is kept. Reads only the run record (`model`).

use serde_json::{Value, json};

use super::ExportError;
use crate::model::callgraph::FUNCTIONS_ID;
use crate::model::{RunKind, RunRecord};

/// The process id every event carries (the record keeps no pid of the command).
const PID: u32 = 1;
/// The thread of the command's slice.
const COMMAND_TID: u32 = 1;

/// The trace of `run`, a `run` run.
pub fn encode(run: &RunRecord) -> Result<Vec<u8>, ExportError> {
    fits(run)?;
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

/// Whether `run` has a timeline; else why not, with what shows what it keeps.
fn fits(run: &RunRecord) -> Result<(), ExportError> {
    let has = |id: &str| run.results.iter().any(|r| r.id == id);
    match run.kind {
        RunKind::Run => Ok(()),
        RunKind::Profile if has("offcpu") => Err(ExportError::Missing(
            "an off-CPU profile keeps the blocked time per stack and reason, not each \
             interval with its thread and start, so there are no slices to draw; open it with \
             --format firefox, or record a timeline with `sysmeter run`"
                .into(),
        )),
        RunKind::Calls if has(FUNCTIONS_ID) => Err(ExportError::Missing(
            "`calls --functions` keeps exact counts and times per caller → callee edge, not \
             each call's start, so there is no timeline to draw; open it with --format \
             callgrind"
                .into(),
        )),
        kind => Err(ExportError::WrongKind {
            format: "chrome-trace",
            kind: kind.as_str().into(),
            fits: "`run`",
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::RunKind;

    #[test]
    fn only_a_run_run_has_a_timeline() {
        let mut run = crate::model::fixture::sample_run();
        run.kind = RunKind::Bench;
        let e = encode(&run).expect_err("a bench has no timeline");
        assert!(e.to_string().contains("fits `run` runs"), "{e}");
    }
}
