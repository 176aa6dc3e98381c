//! `os.task`: the cost of creating a thread and a process, and of starting a program.

use std::hint::black_box;

use sysmeter_sys::process::{self, ExecTarget};

use crate::harness::{Ctx, Experiment, ExperimentError, Measured, Spec};
use crate::model::{HostInfo, units};

/// The experiment.
pub struct OsTask;

const THREAD: &str = "thread create+join";
const FORK: &str = "fork+exit+wait";
const SPAWN: &str = "posix_spawn /bin/true + wait";
const EXEC: &str = "fork+exec /bin/true + wait";
const TRUE: &str = "/bin/true";

impl Experiment for OsTask {
    fn page(&self) -> &'static str {
        include_str!("task.md")
    }

    fn run(&self, ctx: &mut Ctx<'_>) -> Result<Measured, ExperimentError> {
        let mut out = Measured::default();
        out.metrics.push(ctx.try_measure(Spec::new(THREAD), |n| {
            for _ in 0..n {
                std::thread::Builder::new()
                    .spawn(|| black_box(1))
                    .map_err(|e| ExperimentError::io("create a thread", e))?
                    .join()
                    .map_err(|_| ExperimentError::Failed("a thread panicked".into()))?;
            }
            Ok(())
        })?);
        out.metrics.push(ctx.try_measure(Spec::new(FORK), |n| {
            for _ in 0..n {
                process::fork_exit_wait().map_err(|e| ExperimentError::io("fork", e))?;
            }
            Ok(())
        })?);
        if std::path::Path::new(TRUE).exists() {
            exec_metrics(ctx, &mut out)?;
        } else {
            out.find(
                "no_bin_true",
                format!("{TRUE} is missing, so exec costs were not measured."),
                None,
            );
        }
        Ok(out)
    }

    fn metric_findings(&self, _host: &HostInfo, out: &mut Measured) {
        findings(out);
    }
}

fn exec_metrics(ctx: &mut Ctx<'_>, out: &mut Measured) -> Result<(), ExperimentError> {
    let target = ExecTarget::new(&[c"/bin/true"]);
    let check = |status: i32| {
        if status == 0 {
            Ok(())
        } else {
            Err(ExperimentError::Failed(format!(
                "{TRUE} exited with wait status {status}"
            )))
        }
    };
    out.metrics.push(ctx.try_measure(Spec::new(SPAWN), |n| {
        for _ in 0..n {
            check(
                process::spawn_wait(&target).map_err(|e| ExperimentError::io("posix_spawn", e))?,
            )?;
        }
        Ok(())
    })?);
    out.metrics.push(ctx.try_measure(Spec::new(EXEC), |n| {
        for _ in 0..n {
            check(
                process::fork_exec_wait(&target)
                    .map_err(|e| ExperimentError::io("fork+exec", e))?,
            )?;
        }
        Ok(())
    })?);
    Ok(())
}

/// The findings of the four costs, each quoting a metric beside its name.
fn findings(out: &mut Measured) {
    let ns = units::duration_ns;
    if let (Some(p), Some(t)) = (out.median(FORK), out.median(THREAD))
        && let Some(r) = crate::stats::ratio(p, t)
    {
        out.find(
            "process_vs_thread_creation",
            format!(
                "Creating a process ({FORK} {}) costs {r:.1}x creating a thread ({THREAD} \
                 {}): fork must copy the address space's page tables and file table, a thread \
                 shares them.",
                ns(p),
                ns(t)
            ),
            Some(r),
        );
    }
    if let (Some(e), Some(f)) = (out.median(EXEC), out.median(FORK)) {
        out.find(
            "exec_cost",
            format!(
                "Loading and running /bin/true adds {} on top of fork ({EXEC} {}).",
                ns(e - f),
                ns(e)
            ),
            Some(e - f),
        );
    }
    if let (Some(e), Some(s)) = (out.median(EXEC), out.median(SPAWN)) {
        out.find(
            "spawn_vs_fork_exec",
            format!(
                "{SPAWN} {} vs {EXEC} {}: spawning without copying page tables saves {:.0}%.",
                ns(s),
                ns(e),
                100.0 * (1.0 - s / e)
            ),
            crate::stats::ratio(s, e),
        );
    }
}
