//! Writing runs, whatever the backend: the run row first, then each experiment's result in
//! its own transaction as soon as it finishes (with several rounds, again after each round,
//! replacing the one before), then the end time. Each call commits, so whatever happens to
//! the process afterwards, the results written so far are stored.
//!
//! Only model → row encoding happens here; the statements are in `sqlite/write.rs` and
//! `pg/write.rs`.

use super::rows::Encoder;
use super::{Store, StoreError, on_backend_mut};
use crate::model::{ExperimentResult, RunRecord};

/// Whether a result may take the place of one stored under its number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Put {
    /// The first result under its number.
    New,
    /// A later round's result in place of the earlier one.
    Replace,
}

impl Store {
    /// Inserts the run row for `run` (its `results` are ignored; add them with
    /// [`Store::put_result`]). Fails if a run with the same id is already stored.
    pub fn begin_run(&mut self, run: &RunRecord) -> Result<(), StoreError> {
        let row = self.encoder(&run.id).run(run)?;
        on_backend_mut!(self, b => b.begin_run(&row))
    }

    /// Stores experiment result number `seq` of run `run_id` with all its metrics and raw
    /// samples in one transaction: after it returns, the result survives any crash. With
    /// [`Put::Replace`] it takes the place of the one stored under that number (if any), and a
    /// reader sees the old result or the new one, never neither (`bench` with several rounds
    /// stores an experiment after each round); with [`Put::New`] a result already stored
    /// under that number is an error.
    pub fn put_result(
        &mut self,
        (run_id, seq): (&str, usize),
        r: &ExperimentResult,
        put: Put,
    ) -> Result<(), StoreError> {
        let row = self.encoder(run_id).result(seq, r)?;
        on_backend_mut!(self, b => b.add_result(run_id, &row, put == Put::Replace))
    }

    /// Records the end of run `run_id`: when it finished (`None` if it did not get that far)
    /// and whether Ctrl-C interrupted it.
    pub fn finish_run(
        &mut self,
        run_id: &str,
        finished_ns: Option<i64>,
        interrupted: bool,
    ) -> Result<(), StoreError> {
        on_backend_mut!(self, b => b.finish_run(run_id, finished_ns, interrupted))
    }

    /// Stores a whole run at once — the run row, every result in order, its end — for the
    /// commands that have the record only when they are done (`run`, `trace`, `profile`,
    /// `scale`). `bench` stores as it goes with the three calls above instead.
    pub fn save_run(&mut self, run: &RunRecord) -> Result<(), StoreError> {
        self.begin_run(run)?;
        for (seq, result) in run.results.iter().enumerate() {
            self.put_result((&run.id, seq), result, Put::New)?;
        }
        self.finish_run(&run.id, run.finished_ns, run.interrupted)
    }

    fn encoder<'a>(&'a self, run_id: &'a str) -> Encoder<'a> {
        Encoder {
            db: self.path(),
            run_id,
            samples: self.samples || !self.is_fleet(),
        }
    }
}
