//! `sysmeter scale`: validate, measure every size, fit, store the run, print it.

use std::io::Write;

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};

use super::{Outcome, UsageError, color_allowed, open_outputs};
use crate::cli::ScaleArgs;
use crate::diagnose::scale::{self, ScaleConfig, Stop};
use crate::model::{RunRecord, Status};
use crate::store::Store;
use crate::{host, report};

/// Run `sysmeter scale`.
pub fn scale(args: &ScaleArgs) -> anyhow::Result<Outcome> {
    sysmeter_sys::signal::install_interrupt_flag().context("installing the Ctrl-C handler")?;
    let cfg = config(args)?;
    // Fail on a bad --out or database before running anything.
    let (mut out_file, mut store) = open_outputs(&args.output)?;
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
    let store_error = store.as_mut().and_then(|s| save(s, &run));
    let text = report::render(
        &run,
        args.output.format,
        out_file.is_none() && color_allowed(),
    )?;
    match out_file.as_mut() {
        Some(f) => f.write_all(text.as_bytes()).context("writing --out")?,
        None => print!("{text}"),
    }
    if let Some(e) = &store_error {
        eprintln!("warning: results were printed but not stored: {e}");
    }
    Ok(match &measured.stop {
        Some(Stop::Interrupted) => {
            eprintln!(
                "interrupted: kept {} of {} runs",
                measured.runs.len(),
                measured.planned
            );
            Outcome::Interrupted
        }
        Some(Stop::Failed(why)) => {
            eprintln!("error: {why}");
            Outcome::MeasurementFailed
        }
        None if run.results[0].status == Status::Failed || store_error.is_some() => {
            Outcome::MeasurementFailed
        }
        None => Outcome::Success,
    })
}

/// Stores the run with its one result; the error text if that failed.
fn save(store: &mut Store, run: &RunRecord) -> Option<String> {
    let stored = store
        .begin_run(run)
        .and_then(|()| store.add_result(&run.id, 0, &run.results[0]))
        .and_then(|()| store.finish_run(&run.id, run.finished_ns, run.interrupted));
    match stored {
        Ok(()) => {
            eprintln!("stored as run {} in {}", run.id, store.path().display());
            None
        }
        Err(e) => Some(e.to_string()),
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

fn now_ns() -> i64 {
    jiff::Timestamp::now().as_nanosecond() as i64
}
