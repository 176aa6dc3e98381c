//! The bench run observer: a progress bar with ETA on stderr (only when stderr is a
//! terminal; indicatif hides itself otherwise), the sentence of a failed experiment on
//! stderr as it fails, and the store write after each experiment (with several rounds, after
//! each round, replacing the experiment's result stored after the round before).

use std::collections::HashMap;

use indicatif::{ProgressBar, ProgressStyle};

use crate::harness::RunObserver;
use crate::model::{ExperimentResult, RunRecord, Status};
use crate::store::{Put, Store};

/// Draws progress and stores each finished experiment at once.
pub struct BenchObserver {
    bar: ProgressBar,
    store: Option<Store>,
    run_id: String,
    current: String,
    /// The status of each experiment handed over so far, by number.
    seen: HashMap<usize, Status>,
    /// Store errors, reported after the run (measurements are still printed).
    pub store_errors: Vec<String>,
}

impl BenchObserver {
    /// An observer for `total` experiments, storing into `store` if given.
    pub fn new(total: usize, store: Option<Store>) -> BenchObserver {
        let bar = ProgressBar::new(total as u64);
        if let Ok(style) = ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {msg} (ETA {eta})",
        ) {
            bar.set_style(style);
        }
        BenchObserver {
            bar,
            store,
            run_id: String::new(),
            current: String::new(),
            seen: HashMap::new(),
            store_errors: Vec::new(),
        }
    }

    /// Stop drawing and give the store back.
    pub fn finish(self) -> (Option<Store>, Vec<String>) {
        self.bar.finish_and_clear();
        (self.store, self.store_errors)
    }
}

impl RunObserver for BenchObserver {
    fn run_started(&mut self, run: &RunRecord) {
        self.run_id = run.id.clone();
        if let Some(s) = self.store.as_mut()
            && let Err(e) = s.begin_run(run)
        {
            self.store_errors.push(super::full_disk::said(&e));
            self.store = None;
        }
    }

    fn experiment_started(&mut self, index: usize, _total: usize, id: &str) {
        self.current = id.to_string();
        self.bar.set_position(index as u64);
        self.bar.set_message(id.to_string());
    }

    fn progress(&mut self, metric: &str) {
        self.bar.set_message(format!("{}: {metric}", self.current));
    }

    fn experiment_finished(&mut self, seq: usize, result: &ExperimentResult) {
        self.bar.inc(1);
        let before = self.seen.insert(seq, result.status);
        // The report says it too, but only at the end (or in a file): stderr says it now,
        // once per experiment.
        if result.status == Status::Failed && before != Some(Status::Failed) {
            let why = result.error.as_deref().unwrap_or("no reason given");
            let line = format!("error: {} failed: {why}", result.id);
            self.bar.suspend(|| super::console::errln(line));
        }
        let Some(s) = self.store.as_mut() else {
            return;
        };
        let put = match before {
            None => Put::New,
            Some(_) => Put::Replace,
        };
        let stored = s.put_result((&self.run_id, seq), result, put);
        if let Err(e) = stored {
            self.store_errors.push(super::full_disk::said(&e));
        }
    }
}
