//! `sysmeter scale`: validate, measure every size, fit, store the run, print it.

use indicatif::{ProgressBar, ProgressStyle};

use super::diagnosis::{Diagnosed, DiagnosisError, diagnose, now_ns};
use super::output::Stream;
use super::{Outcome, UsageError};
use crate::cli::ScaleArgs;
use crate::diagnose::observe::session::CommandState;
use crate::diagnose::scale::{self, ScaleConfig, Stop};
use crate::host;

/// Run `sysmeter scale`.
pub fn scale(args: &ScaleArgs) -> anyhow::Result<Outcome> {
    let cfg = config(args)?;
    let bar = progress_bar();
    diagnose(
        (&args.output, Stream::Stdout),
        || {
            let measured = scale::measure(&cfg, &mut |done, total, n| {
                bar.set_length(total as u64);
                bar.set_position(done as u64);
                bar.set_message(format!("N = {n}"));
            });
            bar.finish_and_clear();
            measured.map_err(|e| MeasureError(e.to_string()))
        },
        |measured, _, started| {
            let run = scale::record(&cfg, host::read_host(), started, now_ns(), &measured);
            let epilogue = match &measured.stop {
                Some(Stop::Interrupted) => Some(format!(
                    "interrupted: kept {} of {} runs",
                    measured.runs.len(),
                    measured.planned
                )),
                Some(Stop::Failed(why)) => Some(format!("error: {why}")),
                None => None,
            };
            Ok(Diagnosed {
                failed: matches!(measured.stop, Some(Stop::Failed(_))),
                epilogue,
                ..Diagnosed::new(run, CommandState::NotLaunched)
            })
        },
    )
}

/// A size that could not be measured at all: bad input (exit 2), in one sentence.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct MeasureError(String);

impl DiagnosisError for MeasureError {
    fn is_usage(&self) -> bool {
        true
    }
}

/// Validated configuration from the arguments (usage errors exit 2).
fn config(args: &ScaleArgs) -> anyhow::Result<ScaleConfig> {
    let sizes = args
        .sizes
        .as_ref()
        .or(args.range.as_ref())
        .map(|s| s.0.clone())
        .unwrap_or_default();
    let cfg = ScaleConfig {
        command: args.command.clone(),
        sizes,
        repeat: args.repeat,
        warmup: args.warmup,
        timeout: args.timeout,
        seed: args.seed,
        show_output: args.show_output,
        predict: args.predict.clone(),
        basis: args.time,
        stat: args.stat,
    };
    cfg.validate()
        .map_err(|e| anyhow::Error::new(UsageError(e)))?;
    Ok(cfg)
}

/// Runs done of total on stderr; indicatif hides it when stderr is not a terminal.
fn progress_bar() -> ProgressBar {
    let bar = ProgressBar::new(0);
    if let Ok(style) = ProgressStyle::with_template(
        "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {msg} (ETA {eta})",
    ) {
        bar.set_style(style);
    }
    bar
}
