//! `sysmeter scale`: validate, measure every size, fit, store the run, print it.

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};

use super::output::{Ending, Sink, Stream};
use super::{Outcome, UsageError};
use crate::cli::ScaleArgs;
use crate::diagnose::scale::{self, ScaleConfig, Stop};
use crate::host;

/// Run `sysmeter scale`.
pub fn scale(args: &ScaleArgs) -> anyhow::Result<Outcome> {
    sysmeter_sys::signal::install_interrupt_flag().context("installing the Ctrl-C handler")?;
    let cfg = config(args)?;
    // Fail on a bad --out or database before running anything.
    let sink = Sink::open(&args.output, Stream::Stdout)?;
    let started = now_ns();
    let bar = progress_bar();
    let measured = scale::measure(&cfg, &mut |done, total, n| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
        bar.set_message(format!("N = {n}"));
    });
    bar.finish_and_clear();
    let measured = measured.map_err(|e| anyhow::Error::new(UsageError(e.to_string())))?;
    let run = scale::record(&cfg, host::read_host(), started, now_ns(), &measured);
    let failed = matches!(measured.stop, Some(Stop::Failed(_)));
    let ending = Ending {
        failed,
        ..Ending::default()
    };
    let finished = sink.finish(&run, ending)?;
    match &measured.stop {
        Some(Stop::Interrupted) => super::console::errln(format!(
            "interrupted: kept {} of {} runs",
            measured.runs.len(),
            measured.planned
        )),
        Some(Stop::Failed(why)) => super::console::errln(format!("error: {why}")),
        None => {}
    }
    Ok(finished.outcome(None))
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

fn now_ns() -> i64 {
    jiff::Timestamp::now().as_nanosecond() as i64
}
