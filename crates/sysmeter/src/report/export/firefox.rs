//! The Firefox Profiler's processed profile format (profiler.firefox.com, "Load a profile
//! from file") of a `profile` run, written through samply's `fxprof-processed-profile`
//! crate: the on-CPU samples in the category `On-CPU`, and the off-CPU time (`--off-cpu`,
//! `--both`) in one category per reason (`Off-CPU: lock`, `Off-CPU: disk`, …), as samply
//! writes off-CPU time: samples weighted by how many sampling periods the time spans.
//!
//! A record keeps its stacks per thread (`model::thread_stacks`, with each off-CPU stack's
//! reason): the profile has one track per thread, named as the thread was. The stacks are
//! summed over time, so each thread's samples are laid end to end, each stack's together:
//! the call tree, flame graph and inverted tree are the record's; the order along a track
//! is not time order. A record stored before threads were kept has only the folded stacks:
//! one track, "all threads", the off-CPU reason of a stack from its `blocked stacks` (its
//! top stacks) and the time of stacks past them in `Off-CPU: reason not kept`. Reads only
//! the run record (`model`).

use std::collections::HashMap;

use super::ExportError;
use crate::model::thread_stacks::{self, ThreadStacks};
use crate::model::{ExperimentResult, RunKind, RunRecord};
use fxprof_processed_profile::{
    CategoryColor, CategoryHandle, CpuDelta, Frame, FrameFlags, FrameInfo, ProcessHandle, Profile,
    ReferenceTimestamp, SamplingInterval, ThreadHandle, Timestamp,
};
use merged::{UNCLASSIFIED, merged};

mod merged;

/// The sampling period assumed for an off-CPU-only profile (none was sampled), ns: 1 ms.
const OFF_CPU_ONLY_PERIOD_NS: f64 = 1e6;

/// The profile of `run`, a `profile` run.
pub fn encode(run: &RunRecord) -> Result<Vec<u8>, ExportError> {
    if run.kind != RunKind::Profile {
        return Err(ExportError::WrongKind {
            format: "firefox",
            kind: run.kind.as_str().into(),
            fits: "`profile`",
        });
    }
    let on = result(run, "profile").and_then(|r| r.artifact("folded"));
    let off_result = result(run, "offcpu");
    let off = off_result.and_then(|r| r.artifact("offcpu folded"));
    if on.is_none() && off.is_none() {
        return Err(ExportError::Missing(format!(
            "run {} keeps no stacks (stopped before its end, or stored by an older sysmeter); \
             profile again with `sysmeter profile -- CMD`",
            run.id
        )));
    }
    let period_ns = result(run, "profile")
        .and_then(period_ns)
        .unwrap_or(OFF_CPU_ONLY_PERIOD_NS);
    let title = run
        .results
        .first()
        .map_or("", |r| r.about.measures.as_str());
    let mut w = Writer::new(run, title, period_ns);
    let on_threads = on.and(result(run, "profile")).map(thread_stacks::of);
    let off_threads = off.and(off_result).map(thread_stacks::of);
    // A record that keeps its threads (every part that has stacks): one track per thread.
    if !matches!(on_threads, Some(None)) && !matches!(off_threads, Some(None)) {
        if let Some(Some(t)) = on_threads {
            w.per_thread(&t, true);
        }
        if let Some(Some(t)) = off_threads {
            w.per_thread(&t, false);
        }
    } else {
        merged(&mut w, on, off.zip(off_result));
    }
    serde_json::to_vec(&w.profile).map_err(|e| ExportError::Missing(format!("{e}")))
}

fn result<'a>(run: &'a RunRecord, id: &str) -> Option<&'a ExperimentResult> {
    run.results.iter().find(|r| r.id == id)
}

/// The sampling period of the on-CPU profile: its `CPU time sampled` over its `samples`.
fn period_ns(r: &ExperimentResult) -> Option<f64> {
    let value = |name: &str| {
        let m = r.metrics.iter().find(|m| m.name == name)?;
        Some(m.summary.median)
    };
    let period = value("CPU time sampled")? / value("samples")?;
    period.is_finite().then_some(period).filter(|&p| p > 0.0)
}

/// The profile being written, with its threads and where the next sample of each goes.
struct Writer {
    profile: Profile,
    process: ProcessHandle,
    /// Per thread id: its track and where its next sample starts, ns since the run's start.
    threads: HashMap<u32, (ThreadHandle, u64)>,
    categories: HashMap<String, CategoryHandle>,
    period_ns: f64,
    /// Off-CPU time written so far, and the periods it was written as (the rounding carry).
    off_ns: u64,
    off_periods: u64,
}

/// The colours of the categories in the order they are made (On-CPU first).
const COLORS: [CategoryColor; 10] = [
    CategoryColor::Blue,
    CategoryColor::Red,
    CategoryColor::Orange,
    CategoryColor::Purple,
    CategoryColor::Brown,
    CategoryColor::Magenta,
    CategoryColor::Green,
    CategoryColor::LightRed,
    CategoryColor::Yellow,
    CategoryColor::Gray,
];

impl Writer {
    fn new(run: &RunRecord, title: &str, period_ns: f64) -> Writer {
        let start = ReferenceTimestamp::from_millis_since_unix_epoch(run.started_ns as f64 / 1e6);
        let interval = SamplingInterval::from_nanos(period_ns.round() as u64);
        let mut profile = Profile::new(&format!("sysmeter profile {title}"), start, interval);
        let zero = Timestamp::from_nanos_since_reference(0);
        let process = profile.add_process(title, 0, zero);
        Writer {
            profile,
            process,
            threads: HashMap::new(),
            categories: HashMap::new(),
            period_ns,
            off_ns: 0,
            off_periods: 0,
        }
    }

    /// The track of thread `tid` (0: all threads merged, a record that kept no threads),
    /// made on first use; the viewer names a `main` thread by its process.
    fn thread(&mut self, tid: u32, name: &str, main: bool) -> ThreadHandle {
        if let Some(&(t, _)) = self.threads.get(&tid) {
            return t;
        }
        let zero = Timestamp::from_nanos_since_reference(0);
        let t = self.profile.add_thread(self.process, tid, zero, main);
        self.profile.set_thread_name(t, name);
        self.threads.insert(tid, (t, 0));
        t
    }

    /// The per-thread stacks of one part (on the CPU or off it), one track per thread.
    fn per_thread(&mut self, t: &ThreadStacks, on: bool) {
        for s in &t.stacks {
            let frames: Vec<String> = (s.frames.iter())
                .filter_map(|&i| t.frames.get(i as usize))
                .map(|f| match f.kernel {
                    true => format!("{}_[k]", f.function),
                    false => f.function.clone(),
                })
                .collect();
            let main = t.threads.iter().any(|x| x.tid == s.tid && x.pid == s.tid);
            let thread = self.thread(s.tid, &t.thread_name(s.tid), main);
            match (on, s.reason.as_deref()) {
                (true, _) => {
                    let category = self.category("On-CPU");
                    self.sample(thread, s.tid, &frames, category, s.weight, true);
                }
                (false, reason) => {
                    let name = reason.map_or(UNCLASSIFIED.to_string(), |r| {
                        format!("Off-CPU: {}", r.replace('_', " "))
                    });
                    let category = self.category(&name);
                    let periods = self.off_periods(s.weight);
                    self.sample(thread, s.tid, &frames, category, periods, false);
                }
            }
        }
    }

    /// How many sampling periods `ns` more off-CPU time adds, by the running total, so
    /// rounding never adds up across stacks.
    fn off_periods(&mut self, ns: u64) -> u64 {
        self.off_ns += ns;
        let total = (self.off_ns as f64 / self.period_ns).round() as u64;
        let periods = total - self.off_periods;
        self.off_periods = total;
        periods
    }

    /// The category named `name`, made on first use.
    fn category(&mut self, name: &str) -> CategoryHandle {
        if let Some(&c) = self.categories.get(name) {
            return c;
        }
        let color = match name {
            UNCLASSIFIED => CategoryColor::Gray,
            _ => COLORS[self.categories.len() % COLORS.len()],
        };
        let c = self.profile.add_category(name, color);
        self.categories.insert(name.to_string(), c);
        c
    }

    /// One sample of `frames` on `thread` (`tid`) weighing `periods` sampling periods; on
    /// the CPU or not.
    fn sample(
        &mut self,
        thread: ThreadHandle,
        tid: u32,
        frames: &[String],
        category: CategoryHandle,
        periods: u64,
        on: bool,
    ) {
        if periods == 0 {
            return;
        }
        let infos: Vec<FrameInfo> = frames
            .iter()
            .map(|f| FrameInfo {
                frame: Frame::Label(self.profile.intern_string(f)),
                category_pair: category.into(),
                flags: FrameFlags::empty(),
            })
            .collect();
        let stack = self.profile.intern_stack_frames(thread, infos.into_iter());
        let span_ns = (periods as f64 * self.period_ns).round() as u64;
        let cpu = if on { span_ns } else { 0 };
        let clock = self.threads.get_mut(&tid).map(|(_, clock)| clock);
        let Some(clock) = clock else {
            return;
        };
        let at = Timestamp::from_nanos_since_reference(*clock);
        *clock += span_ns;
        let weight = i32::try_from(periods).unwrap_or(i32::MAX);
        let cpu = CpuDelta::from_nanos(cpu);
        self.profile.add_sample(thread, at, stack, cpu, weight);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{About, Artifact, Metric, Summary, Unit};

    fn metric(name: &str, value: f64) -> Metric {
        let summary = Summary {
            median: value,
            ..Summary::default()
        };
        Metric::new(name, Unit::Count, summary)
    }

    fn with(name: &str, content: &str) -> Artifact {
        Artifact {
            name: name.into(),
            media_type: "text/plain".into(),
            content: content.into(),
        }
    }

    /// A `profile --both` run: 5 on-CPU samples of 1 ms, 2.5 ms off the CPU in two stacks,
    /// one of them among the top blocked stacks (a lock).
    fn both() -> RunRecord {
        let mut run = crate::model::fixture::sample_run();
        run.kind = RunKind::Profile;
        let mut on = ExperimentResult::new("profile", About::default());
        on.metrics = vec![metric("samples", 5.0), metric("CPU time sampled", 5e6)];
        on.artifacts = vec![with("folded", "main;a 3\nmain;b 2\n")];
        let mut off = ExperimentResult::new("offcpu", About::default());
        let blocked = r#"[{"frames":["main","wait"],"reason":"lock","blocked_ns":2000000}]"#;
        off.artifacts = vec![
            with("offcpu folded", "main;wait 2000000\nmain;nap 500000\n"),
            with("blocked stacks", blocked),
        ];
        run.results = vec![on, off];
        run
    }

    #[test]
    fn weights_are_the_samples_and_the_off_cpu_periods_by_reason() {
        let json: serde_json::Value =
            serde_json::from_slice(&encode(&both()).expect("encodes")).expect("JSON");
        let names: Vec<&str> = json["meta"]["categories"]
            .as_array()
            .expect("categories")
            .iter()
            .filter_map(|c| c["name"].as_str())
            .collect();
        for name in ["On-CPU", "Off-CPU: lock", UNCLASSIFIED] {
            assert!(names.contains(&name), "{names:?}");
        }
        let weights = json["threads"][0]["samples"]["weight"]
            .as_array()
            .expect("weights");
        let weights: Vec<u64> = weights.iter().filter_map(|w| w.as_u64()).collect();
        // 3 + 2 on-CPU samples; 2 ms of lock and 0.5 ms (rounded: 1 period, the total
        // 2.5 periods rounded once) of a reason the record did not keep.
        assert_eq!(weights.iter().sum::<u64>(), 5 + 3, "{weights:?}");
        assert_eq!(weights[..2], [3, 2]);
    }

    /// `both()` with per-thread stacks: thread 7 (the main thread) 3 samples on the CPU;
    /// thread 8 ("worker") 2 on it and 2 ms off it on a lock.
    fn two_threads() -> RunRecord {
        use crate::model::thread_stacks::{SourceFrame, Thread, ThreadStack};
        let mut run = both();
        let frame = |function: &str| SourceFrame {
            function: function.into(),
            ..SourceFrame::default()
        };
        let stack = |tid, weight, reason: Option<&str>| ThreadStack {
            tid,
            frames: vec![0, 1],
            weight,
            reason: reason.map(str::to_string),
        };
        let thread = |tid, name: &str| Thread {
            tid,
            pid: 7,
            name: name.into(),
        };
        let on = ThreadStacks {
            frames: vec![frame("main"), frame("a")],
            threads: vec![thread(7, "main"), thread(8, "worker")],
            stacks: vec![stack(7, 3, None), stack(8, 2, None)],
            ..ThreadStacks::default()
        };
        let off = ThreadStacks {
            stacks: vec![stack(8, 2_000_000, Some("lock"))],
            ..on.clone()
        };
        run.results[0].artifacts.push(on.artifact());
        run.results[1].artifacts.push(off.artifact());
        run
    }

    #[test]
    fn a_record_that_keeps_threads_has_one_track_per_thread_and_reason_categories() {
        let run = two_threads();
        let json: serde_json::Value =
            serde_json::from_slice(&encode(&run).expect("encodes")).expect("JSON");
        let tracks = json["threads"].as_array().expect("threads");
        // The process's first thread is its main thread, which the viewer names by the
        // process; the others by their own names.
        let main: Vec<bool> = tracks
            .iter()
            .filter_map(|t| t["isMainThread"].as_bool())
            .collect();
        assert_eq!(main, [true, false]);
        assert_eq!(tracks[1]["name"], "worker");
        let weights = |t: &serde_json::Value| -> u64 {
            let w = t["samples"]["weight"].as_array().expect("weights");
            w.iter().filter_map(|w| w.as_u64()).sum()
        };
        // main: 3 samples on the CPU; worker: 2 on it and 2 ms (2 periods) of a lock.
        assert_eq!((weights(&tracks[0]), weights(&tracks[1])), (3, 4));
        let categories = json["meta"]["categories"].as_array().expect("categories");
        let categories: Vec<&str> = categories
            .iter()
            .filter_map(|c| c["name"].as_str())
            .collect();
        assert!(categories.contains(&"Off-CPU: lock"), "{categories:?}");
    }

    #[test]
    fn a_run_without_stacks_is_refused_with_the_command_that_makes_them() {
        let mut run = crate::model::fixture::sample_run();
        run.kind = RunKind::Profile;
        run.results.clear();
        let e = encode(&run).expect_err("no stacks");
        assert!(e.to_string().contains("sysmeter profile -- CMD"), "{e}");
        run.kind = RunKind::Alloc;
        let e = encode(&run).expect_err("not a profile");
        assert!(e.to_string().contains("fits `profile` runs"), "{e}");
    }
}
