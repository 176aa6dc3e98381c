//! The Firefox Profiler's processed profile format (profiler.firefox.com, "Load a profile
//! from file") of a `profile` run, written through samply's `fxprof-processed-profile`
//! crate: the on-CPU samples in the category `On-CPU`, and the off-CPU time (`--off-cpu`,
//! `--both`) in one category per reason (`Off-CPU: lock`, `Off-CPU: disk`, …), as samply
//! writes off-CPU time: samples weighted by how many sampling periods the time spans.
//!
//! The record keeps stacks summed over the target's threads and over time (folded stacks),
//! so the profile has one thread, "all threads", and its samples are laid end to end, each
//! stack's together: the call tree, flame graph and inverted tree are the record's; the
//! order along the track is not time order. The off-CPU reason of a stack comes from the
//! record's `blocked stacks` (its top stacks); time of stacks past them is in
//! `Off-CPU: reason not kept`. Reads only the run record (`model`).

use std::collections::HashMap;

use fxprof_processed_profile::{
    CategoryColor, CategoryHandle, CpuDelta, Frame, FrameFlags, FrameInfo, Profile,
    ReferenceTimestamp, SamplingInterval, ThreadHandle, Timestamp,
};
use serde::Deserialize;

use super::ExportError;
use crate::model::{ExperimentResult, RunKind, RunRecord};

/// The sampling period assumed for an off-CPU-only profile (none was sampled), ns: 1 ms.
const OFF_CPU_ONLY_PERIOD_NS: f64 = 1e6;
/// The category of off-CPU time whose stack is not among the record's top stacks.
const UNCLASSIFIED: &str = "Off-CPU: reason not kept";

/// One of the record's top blocked stacks (the `blocked stacks` artifact).
#[derive(Deserialize)]
struct Blocked {
    frames: Vec<String>,
    reason: String,
    blocked_ns: u64,
}

/// The profile of `run`, a `profile` run.
pub fn encode(run: &RunRecord) -> Result<Vec<u8>, ExportError> {
    if run.kind != RunKind::Profile {
        return Err(ExportError::WrongKind {
            format: "firefox",
            kind: run.kind.as_str().into(),
            fits: "`profile`",
        });
    }
    let on = result(run, "profile").and_then(|r| artifact(r, "folded"));
    let off_result = result(run, "offcpu");
    let off = off_result.and_then(|r| artifact(r, "offcpu folded"));
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
    if let Some(folded) = on {
        let category = w.category("On-CPU");
        for (frames, samples) in lines(folded) {
            w.sample(&frames, category, samples, true);
        }
    }
    if let Some(folded) = off {
        let blocked: Vec<Blocked> = off_result
            .and_then(|r| artifact(r, "blocked stacks"))
            .and_then(|j| serde_json::from_str(j).ok())
            .unwrap_or_default();
        w.off_cpu(folded, &blocked);
    }
    serde_json::to_vec(&w.profile).map_err(|e| ExportError::Missing(format!("{e}")))
}

fn result<'a>(run: &'a RunRecord, id: &str) -> Option<&'a ExperimentResult> {
    run.results.iter().find(|r| r.id == id)
}

fn artifact<'a>(r: &'a ExperimentResult, name: &str) -> Option<&'a str> {
    let a = r.artifacts.iter().find(|a| a.name == name)?;
    Some(a.content.as_str())
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

/// The lines of folded stacks: frames outermost first, and the line's count.
fn lines(folded: &str) -> impl Iterator<Item = (Vec<String>, u64)> + '_ {
    folded.lines().filter_map(|line| {
        let (stack, count) = line.rsplit_once(' ')?;
        let count = count.parse().ok()?;
        Some((stack.split(';').map(str::to_string).collect(), count))
    })
}

/// The profile being written, with its one thread and where the next sample goes.
struct Writer {
    profile: Profile,
    thread: ThreadHandle,
    categories: HashMap<String, CategoryHandle>,
    period_ns: f64,
    /// Where the next sample starts, ns since the run's start.
    clock_ns: u64,
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
        let thread = profile.add_thread(process, 0, zero, true);
        profile.set_thread_name(thread, "all threads (merged by sysmeter)");
        Writer {
            profile,
            thread,
            categories: HashMap::new(),
            period_ns,
            clock_ns: 0,
            off_ns: 0,
            off_periods: 0,
        }
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

    /// One sample of `frames` weighing `periods` sampling periods; on the CPU or not.
    fn sample(&mut self, frames: &[String], category: CategoryHandle, periods: u64, on: bool) {
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
        let stack = self
            .profile
            .intern_stack_frames(self.thread, infos.into_iter());
        let span_ns = (periods as f64 * self.period_ns).round() as u64;
        let cpu = if on { span_ns } else { 0 };
        let at = Timestamp::from_nanos_since_reference(self.clock_ns);
        let weight = i32::try_from(periods).unwrap_or(i32::MAX);
        let cpu = CpuDelta::from_nanos(cpu);
        self.profile.add_sample(self.thread, at, stack, cpu, weight);
        self.clock_ns += span_ns;
    }

    /// The off-CPU stacks, each line's time split by the reasons the record gives it.
    fn off_cpu(&mut self, folded: &str, blocked: &[Blocked]) {
        for (frames, ns) in lines(folded) {
            let mut left = ns;
            let known = blocked.iter().filter(|b| b.frames == frames);
            let mut parts: Vec<(String, u64)> = known
                .map(|b| {
                    let part = b.blocked_ns.min(left);
                    left -= part;
                    (format!("Off-CPU: {}", b.reason.replace('_', " ")), part)
                })
                .collect();
            parts.push((UNCLASSIFIED.to_string(), left));
            for (name, part) in parts.into_iter().filter(|p| p.1 > 0) {
                let category = self.category(&name);
                // Periods by the running total, so rounding never adds up across stacks.
                self.off_ns += part;
                let total = (self.off_ns as f64 / self.period_ns).round() as u64;
                let periods = total - self.off_periods;
                self.off_periods = total;
                self.sample(&frames, category, periods, false);
            }
        }
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
