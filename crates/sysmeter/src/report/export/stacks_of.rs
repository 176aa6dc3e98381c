//! The weighted stacks a run record stores, read once for every stack export: `profile`'s
//! folded stacks (on-CPU samples, and with `--off-cpu` or `--both` the off-CPU nanoseconds),
//! `alloc`'s typed site rows, `locks`' typed rows. Every number comes from one value of the
//! record: on-CPU nanoseconds are samples × the period the record states (its `CPU time
//! sampled` over its `samples`), a lock's delay its metric's count × mean wait. Depends on
//! `model` only.

use std::collections::HashMap;

use serde::Deserialize;

use super::ExportError;
use super::stacks::{Frame, Stacks, ValueType};
use crate::model::thread_stacks::{self, ThreadStacks};
use crate::model::{ExperimentResult, RunKind, RunRecord, alloc, locks};

const SAMPLES: ValueType = ValueType {
    name: "samples",
    unit: "count",
};
const CPU: ValueType = ValueType {
    name: "cpu",
    unit: "nanoseconds",
};
const OFF_CPU: ValueType = ValueType {
    name: "off_cpu",
    unit: "nanoseconds",
};

/// The stacks of a `profile`, `alloc` or `locks` run; `None` for another kind.
pub fn stacks(run: &RunRecord) -> Option<Result<Stacks, ExportError>> {
    let mut stacks = match run.kind {
        RunKind::Profile => profile(run),
        RunKind::Alloc => alloc(run),
        RunKind::Locks => locks(run),
        _ => return None,
    };
    if let Ok(s) = &mut stacks {
        let end = run.finished_ns.unwrap_or(run.started_ns);
        s.time = (run.started_ns, (end - run.started_ns).max(0));
    }
    Some(stacks)
}

/// One result of the run, by id.
fn result<'a>(run: &'a RunRecord, id: &str) -> Option<&'a ExperimentResult> {
    run.results.iter().find(|r| r.id == id)
}

fn metric(r: &ExperimentResult, name: &str) -> Option<f64> {
    r.metrics
        .iter()
        .find(|m| m.name == name)
        .map(|m| m.summary.median)
}

fn missing(run: &RunRecord, what: &str) -> ExportError {
    ExportError::Missing(format!(
        "run {} holds no {what} to export (stored by an older sysmeter, or the session ended \
         before it had any); run the diagnosis again and export the new run",
        run.id
    ))
}

/// One row of `profile`'s `flat` artifact, as far as the module of a frame goes.
#[derive(Deserialize)]
struct FlatModule {
    function: String,
    module: String,
    kernel: bool,
}

/// `profile`: on-CPU samples and nanoseconds, off-CPU nanoseconds, or all three (`--both`).
fn profile(run: &RunRecord) -> Result<Stacks, ExportError> {
    let on = result(run, "profile").and_then(|r| Some((r, r.artifact("folded")?)));
    let off = result(run, "offcpu").and_then(|r| Some((r, r.artifact("offcpu folded")?)));
    let mut types = Vec::new();
    if on.is_some() {
        types.extend([SAMPLES, CPU]);
    }
    if off.is_some() {
        types.push(OFF_CPU);
    }
    if types.is_empty() {
        return Err(missing(run, "folded stacks"));
    }
    let mut stacks = Stacks::new(types);
    let modules = on.map(|(r, _)| modules(r)).unwrap_or_default();
    let width = stacks.types.len();
    if let Some((r, folded)) = on {
        let samples = metric(r, "samples").unwrap_or(0.0);
        let cpu = metric(r, "CPU time sampled").unwrap_or(0.0);
        let period = if samples > 0.0 { cpu / samples } else { 0.0 };
        stacks.period = Some((CPU, period.round() as i64));
        stacks.default_type = Some(CPU.name);
        let values = |n: u64| {
            let mut v = vec![0; width];
            v[0] = n as i64;
            v[1] = (n as f64 * period).round() as i64;
            v
        };
        match thread_stacks::of(r) {
            Some(per_thread) => add_per_thread(&mut stacks, &per_thread, values),
            None => add_folded(&mut stacks, folded, &modules, values),
        }
    }
    if let Some((r, folded)) = off {
        stacks.default_type.get_or_insert(OFF_CPU.name);
        let values = |ns: u64| {
            let mut v = vec![0; width];
            v[width - 1] = ns as i64;
            v
        };
        match thread_stacks::of(r) {
            Some(per_thread) => add_per_thread(&mut stacks, &per_thread, values),
            None => add_folded(&mut stacks, folded, &modules, values),
        }
    }
    Ok(stacks)
}

/// Adds the per-thread stacks of a record that keeps them (frames with source lines), each
/// labelled with its thread and, off the CPU, its reason.
fn add_per_thread(
    stacks: &mut Stacks,
    per_thread: &ThreadStacks,
    values: impl Fn(u64) -> Vec<i64>,
) {
    let frames: Vec<Frame> = (per_thread.frames.iter())
        .map(|f| Frame {
            function: f.function.clone(),
            file: f.file.clone(),
            line: f.line.map(u64::from),
            module: (!f.module.is_empty()).then(|| f.module.clone()),
        })
        .collect();
    for s in &per_thread.stacks {
        let innermost_first: Vec<Frame> = (s.frames.iter().rev())
            .filter_map(|&i| frames.get(i as usize).cloned())
            .collect();
        let sample = stacks.add(&innermost_first, values(s.weight));
        let thread = format!("{} ({})", per_thread.thread_name(s.tid), s.tid);
        sample.labels.push(("thread", thread));
        if let Some(reason) = &s.reason {
            sample.labels.push(("reason", reason.clone()));
        }
    }
}

/// The module of each function of the flat profile, by (name, kernel).
fn modules(r: &ExperimentResult) -> HashMap<(String, bool), String> {
    let rows: Vec<FlatModule> = r.artifact_json("flat").unwrap_or_default();
    rows.into_iter()
        .filter(|f| !f.module.is_empty())
        .map(|f| ((f.function.replace(';', ":"), f.kernel), f.module))
        .collect()
}

/// Adds folded stacks (`outer;…;leaf N` lines, kernel frames marked `_[k]`).
fn add_folded(
    stacks: &mut Stacks,
    folded: &str,
    modules: &HashMap<(String, bool), String>,
    values: impl Fn(u64) -> Vec<i64>,
) {
    for line in folded.lines() {
        let Some((path, n)) = line.rsplit_once(' ') else {
            continue;
        };
        let Ok(n) = n.parse::<u64>() else {
            continue;
        };
        let frames: Vec<Frame> = path
            .split(';')
            .rev()
            .map(|name| {
                let (name, kernel) = match name.strip_suffix("_[k]") {
                    Some(bare) => (bare, true),
                    None => (name, false),
                };
                let mut frame = Frame::from_label(name);
                frame.module = match kernel {
                    true => Some("[kernel]".to_string()),
                    false => modules.get(&(name.to_string(), false)).cloned(),
                };
                frame
            })
            .collect();
        stacks.add(&frames, values(n));
    }
}

/// `alloc`: Go's heap profile (allocated and still live, objects and bytes) per site.
fn alloc(run: &RunRecord) -> Result<Stacks, ExportError> {
    let r = result(run, alloc::ALLOC_ID).ok_or_else(|| missing(run, "alloc result"))?;
    let sites = alloc::sites(r);
    if !r.artifacts.iter().any(|a| a.name == alloc::ALLOC_SITES) {
        return Err(missing(run, "allocation sites"));
    }
    let vt = |name, unit| ValueType { name, unit };
    let mut stacks = Stacks::new(vec![
        vt("alloc_objects", "count"),
        vt("alloc_space", "bytes"),
        vt("inuse_objects", "count"),
        vt("inuse_space", "bytes"),
    ]);
    stacks.default_type = Some("inuse_space");
    stacks.period = Some((vt("space", "bytes"), 1));
    for site in &sites {
        let labels = match site.stack.is_empty() {
            true => std::slice::from_ref(&site.site),
            false => site.stack.as_slice(),
        };
        let frames: Vec<Frame> = labels.iter().map(|l| Frame::from_label(l)).collect();
        let values = [site.allocations, site.bytes, site.leaked, site.leaked_bytes];
        stacks.add(&frames, values.iter().map(|&v| v as i64).collect());
    }
    Ok(stacks)
}

/// `locks`: Go's mutex profile (contentions and delay) per lock and acquiring site.
fn locks(run: &RunRecord) -> Result<Stacks, ExportError> {
    let r = result(run, locks::LOCKS_ID).ok_or_else(|| missing(run, "locks result"))?;
    let contentions = ValueType {
        name: "contentions",
        unit: "count",
    };
    let delay = ValueType {
        name: "delay",
        unit: "nanoseconds",
    };
    let mut stacks = Stacks::new(vec![contentions, delay]);
    stacks.period = Some((contentions, 1));
    stacks.default_type = Some(delay.name);
    // A run without contention has no rows: an empty profile, not an error.
    for (m, row) in locks::rows(r).unwrap_or_default() {
        let waits = m.summary.n as i64;
        let total = (m.summary.mean * m.summary.n as f64).round() as i64;
        let sample = stacks.add(&[Frame::from_label(&row.site)], vec![waits, total]);
        sample
            .labels
            .push(("class", row.class.as_str().to_string()));
        sample.labels.push(("kind", row.kind.clone()));
    }
    Ok(stacks)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::fixture::sample_run;
    use crate::model::{About, Artifact, Metric, Summary, Unit};

    fn with_artifacts(id: &str, artifacts: &[(&str, &str)]) -> ExperimentResult {
        let mut r = ExperimentResult::new(id, About::default());
        r.artifacts = artifacts
            .iter()
            .map(|(name, content)| Artifact {
                name: name.to_string(),
                media_type: "text/plain".into(),
                content: content.to_string(),
            })
            .collect();
        r
    }

    fn single(name: &str, unit: Unit, value: f64) -> Metric {
        let summary = Summary {
            n: 1,
            median: value,
            ..Summary::default()
        };
        Metric::new(name, unit, summary)
    }

    #[test]
    fn a_profile_weighs_samples_by_the_period_it_states() {
        let mut run = sample_run();
        run.kind = RunKind::Profile;
        let flat = r#"[{"function":"hot","module":"fx","kernel":false,"self_samples":3,"total_samples":3}]"#;
        let mut on = with_artifacts(
            "profile",
            &[
                ("folded", "main;hot 3\nmain;hot;schedule_[k] 1\n"),
                ("flat", flat),
            ],
        );
        on.metrics = vec![
            single("samples", Unit::Count, 4.0),
            single("CPU time sampled", Unit::Ns, 4e6),
        ];
        run.results = vec![
            on,
            with_artifacts("offcpu", &[("offcpu folded", "main;nap 900\n")]),
        ];
        let s = stacks(&run).expect("a profile").expect("stacks");
        let names: Vec<&str> = s.types.iter().map(|t| t.name).collect();
        assert_eq!(names, ["samples", "cpu", "off_cpu"]);
        assert_eq!(s.samples[0].values, [3, 3_000_000, 0]);
        assert_eq!(s.samples[2].values, [0, 0, 900]);
        let leaf = |i: usize| &s.frames[s.samples[i].stack[0]];
        assert_eq!(leaf(0).module.as_deref(), Some("fx"));
        assert_eq!(
            (leaf(1).function.as_str(), leaf(1).module.as_deref()),
            ("schedule", Some("[kernel]"))
        );
        assert_eq!(s.default_type, Some("cpu"));
    }

    #[test]
    fn a_run_without_its_stacks_says_so_and_other_kinds_have_none() {
        let mut run = sample_run();
        assert!(stacks(&run).is_none(), "a bench run has no stacks");
        run.kind = RunKind::Profile;
        run.results = vec![ExperimentResult::new("profile", About::default())];
        let e = stacks(&run)
            .expect("a profile")
            .expect_err("no folded stacks");
        assert!(e.to_string().contains("holds no folded stacks"), "{e}");
    }
}
