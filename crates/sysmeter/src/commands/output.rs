//! The one ending of every measuring command (`bench`, `run`, `trace`, `profile`, `scale`):
//! store the run, render it, write it, and turn how it went into the exit code.
//!
//! [`Sink::open`] opens the store and checks `--out` (by the one rule of `outfile`) before
//! anything is measured, so a bad path or database fails at once; an `--out` that is the
//! database itself is refused. [`Sink::finish`] then stores the run (or, for `bench`,
//! which stores each experiment as it finishes, only its end), renders it with
//! `report::render`, writes it to `--out` or the command's stream (an `--out` that cannot
//! be written, a full disk, gets one error sentence and the report on the stream instead:
//! nothing measured is lost), warns about a store that failed, and applies [`outcome`].
//! The outcome rule, in order:
//!
//! 1. a launched command's own non-zero exit code passes through (`run`, `trace`, `profile`);
//! 2. a run that Ctrl-C stopped exits 130;
//! 3. a failed measurement, a run that could not be stored, or an `--out` that could not be
//!    written exits 1;
//! 4. otherwise 0.

use std::io::IsTerminal;

use super::outfile::OutFile;
use super::{Outcome, console, emit, open_store, protected, run_history};
use crate::cli::OutputArgs;
use crate::model::{RunKind, RunRecord, Status};
use crate::report::{self, Format};
use crate::store::Store;

/// Where the report goes without `--out`: stdout for `bench` and `scale`; stderr for the
/// commands that run a program of the user's, whose stdout is the program's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

impl Stream {
    /// Whether this stream may carry ANSI colour: a terminal, and `NO_COLOR` unset or empty.
    pub fn color(self) -> bool {
        let tty = match self {
            Stream::Stdout => std::io::stdout().is_terminal(),
            Stream::Stderr => std::io::stderr().is_terminal(),
        };
        tty && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
    }
}

/// How the measuring part of a command ended, beyond what the run record says.
#[derive(Debug, Clone, Default)]
pub struct Ending {
    /// The measurement itself failed (beyond a failed experiment in the record).
    pub failed: bool,
    /// The run was already stored as it went (`bench`): only its end is left to store.
    pub stored_as_it_went: bool,
    /// Errors from storing while measuring (`bench`'s per-experiment writes).
    pub store_errors: Vec<String>,
}

/// The outputs of a measuring command, opened before it measures.
pub struct Sink {
    out: Option<OutFile>,
    store: Option<Store>,
    format: Format,
    stream: Stream,
    full: bool,
}

impl Sink {
    /// Opens the store (unless `--no-store`) and checks `--out`: both fail here, before
    /// anything runs.
    pub fn open(output: &OutputArgs, stream: Stream) -> anyhow::Result<Sink> {
        crate::host::check_hostname_override().map_err(super::UsageError)?;
        let (store, protect) = match output.no_store {
            true => (None, Vec::new()),
            false => (Some(open_store(&output.db)?), protected(&output.db)),
        };
        let out = super::outfile::open_opt(output.out.as_deref(), "--out", &protect)?;
        if stream == Stream::Stdout && out.as_ref().is_none_or(|o| o.is_stdout()) {
            console::check_stdout()?;
        }
        Ok(Sink {
            out,
            store,
            format: output.format,
            stream,
            full: false,
        })
    }

    /// Keeps the raw samples also in a fleet store (`bench --with-samples`).
    pub fn keep_samples(&mut self) {
        if let Some(store) = &mut self.store {
            store.keep_samples(true);
        }
    }

    /// Every table in full in the terminal (`bench --full`) instead of the concise view.
    pub fn full(&mut self, full: bool) {
        self.full = full;
    }

    /// The store, for a command that writes as it measures (`bench`); give it back with
    /// [`Sink::put_store`].
    pub fn take_store(&mut self) -> Option<Store> {
        self.store.take()
    }

    /// Returns the store taken with [`Sink::take_store`] (`None` if it failed on the way).
    pub fn put_store(&mut self, store: Option<Store>) {
        self.store = store;
    }

    /// Stores, renders and writes `run`; what [`Finished::outcome`] needs.
    pub fn finish(mut self, run: &RunRecord, ending: Ending) -> anyhow::Result<Finished> {
        let mut store_errors = ending.store_errors.clone();
        if let Some(e) = self.store(run, ending.stored_as_it_went) {
            store_errors.push(e);
        }
        let color = self.out.is_none() && self.stream.color();
        // A bench run is shown with its run-to-run intervals, from the runs stored before it.
        let annotated = (run.kind == RunKind::Bench).then(|| {
            let mut shown = run.clone();
            run_history::annotate(self.store.as_ref(), &mut shown);
            shown
        });
        let text = report::render_view(
            annotated.as_ref().unwrap_or(run),
            self.format,
            color,
            self.full,
        )?;
        let out_failed = self.write(&text, run, store_errors.is_empty())?;
        for e in &store_errors {
            console::errln(format!(
                "warning: the results were written but not stored: {e}"
            ));
        }
        let failed = ending.failed
            || out_failed
            || !store_errors.is_empty()
            || run.results.iter().any(|r| r.status == Status::Failed);
        Ok(Finished {
            interrupted: run.interrupted,
            failed,
        })
    }

    /// Writes the report `text` of `run` to `--out`, or to the command's stream. An `--out`
    /// that cannot be written (a full disk, an exhausted quota) loses nothing: the report
    /// goes to the command's stream instead, after one error sentence that says so and
    /// where the run is stored (`stored`). Whether `--out` failed.
    fn write(&mut self, text: &str, run: &RunRecord, stored: bool) -> anyhow::Result<bool> {
        let Some(out) = self.out.take() else {
            self.show(text)?;
            return Ok(false);
        };
        let Err(e) = out.write(text) else {
            return Ok(false);
        };
        let stream = match self.stream {
            Stream::Stdout => "stdout",
            Stream::Stderr => "stderr",
        };
        let kept = match (&self.store, stored) {
            (Some(s), true) => format!(
                ", and the run is stored as {} in {}",
                run.id,
                s.path().display()
            ),
            _ => String::new(),
        };
        console::errln(format!(
            "error: {e:#}; the report follows on {stream} instead{kept}"
        ));
        self.show(text)?;
        Ok(true)
    }

    /// Writes `text` to the command's stream.
    fn show(&self, text: &str) -> anyhow::Result<()> {
        match self.stream {
            Stream::Stdout => emit(text),
            Stream::Stderr => {
                console::err(text);
                Ok(())
            }
        }
    }

    /// Stores the run (or its end); the error text when that failed.
    fn store(&mut self, run: &RunRecord, stored_as_it_went: bool) -> Option<String> {
        let s = self.store.as_mut()?;
        let stored = match stored_as_it_went {
            true => s.finish_run(&run.id, run.finished_ns, run.interrupted),
            false => s.save_run(run),
        };
        match stored {
            Ok(()) => {
                console::errln(format!(
                    "stored as run {} in {}",
                    run.id,
                    s.path().display()
                ));
                super::full_disk::checkpoint(s);
                None
            }
            Err(e) => Some(super::full_disk::said(&e)),
        }
    }
}

/// A run that was stored (or not) and written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use = "the outcome is the command's exit code"]
pub struct Finished {
    interrupted: bool,
    failed: bool,
}

impl Finished {
    /// The exit outcome, given the launched command's exit code as a shell reports it
    /// (128+N for signal N; `None` when sysmeter launched nothing).
    pub fn outcome(self, command_exit: Option<i32>) -> Outcome {
        outcome(command_exit, self.interrupted, self.failed)
    }
}

/// The exit outcome of a measuring command (the rule in the module documentation).
pub fn outcome(command_exit: Option<i32>, interrupted: bool, failed: bool) -> Outcome {
    match command_exit {
        Some(code) if code != 0 => Outcome::Code(code.clamp(1, 255) as u8),
        _ if interrupted => Outcome::Interrupted,
        _ if failed => Outcome::MeasurementFailed,
        _ => Outcome::Success,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_outcome_rule_in_order() {
        // The command's own failure wins over everything of ours.
        assert_eq!(outcome(Some(3), true, true), Outcome::Code(3));
        assert_eq!(outcome(Some(300), false, false), Outcome::Code(255));
        // A command that succeeded leaves the decision to the run.
        assert_eq!(outcome(Some(0), true, false), Outcome::Interrupted);
        assert_eq!(outcome(Some(0), false, true), Outcome::MeasurementFailed);
        assert_eq!(outcome(Some(0), false, false), Outcome::Success);
        assert_eq!(outcome(None, true, true), Outcome::Interrupted);
        assert_eq!(outcome(None, false, true), Outcome::MeasurementFailed);
        assert_eq!(outcome(None, false, false), Outcome::Success);
    }
}
