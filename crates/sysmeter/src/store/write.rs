//! Writing runs, whatever the backend: the run row first, then each experiment's result in
//! its own transaction as soon as it finishes (with several rounds, again after each round,
//! replacing the one before), then the end time. Each call commits, so whatever happens to
//! the process afterwards, the results written so far are stored.
//!
//! Only model → row encoding happens here, and the statements both backends run alike
//! ([`Writes`]: the run row and its end, in `$n` placeholders, which SQLite reads too); how
//! a result is stored and a run deleted differs, in `sqlite/write.rs` and `pg/write.rs`.

use std::path::Path;

use super::rows::{Encoder, ResultRow, RunRow};
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

    /// Moves what SQLite's write-ahead log holds into the database file (PostgreSQL has
    /// nothing to do): called when a run is stored whole, so a full disk that the run's
    /// commits just fit on is said now, not on the next run. The run is stored either way.
    pub fn checkpoint(&mut self) -> Result<(), StoreError> {
        match &mut self.backend {
            super::Backend::Sqlite(b) => b.checkpoint(),
            #[cfg(feature = "pg")]
            super::Backend::Pg(_) => Ok(()),
        }
    }

    fn encoder<'a>(&'a self, run_id: &'a str) -> Encoder<'a> {
        Encoder {
            db: self.path(),
            run_id,
            samples: self.samples || !self.is_fleet(),
        }
    }
}

/// A value bound to a statement of [`Writes`], which each backend passes to its driver.
#[cfg(feature = "pg")]
pub(super) trait Param: rusqlite::ToSql + postgres::types::ToSql + Sync {}
#[cfg(feature = "pg")]
impl<T: rusqlite::ToSql + postgres::types::ToSql + Sync> Param for T {}

/// A value bound to a statement of [`Writes`], which each backend passes to its driver.
#[cfg(not(feature = "pg"))]
pub(super) trait Param: rusqlite::ToSql {}
#[cfg(not(feature = "pg"))]
impl<T: rusqlite::ToSql> Param for T {}

/// What a backend does to write runs: what it does its own way (a result, a deletion) and
/// the few things the statements of both dialects need, which the shared statements use.
/// A shared statement must number its `$n` in order of first appearance: SQLite reads `$1`
/// as a named parameter and numbers those by where they first appear.
pub(super) trait Writes {
    /// What follows a parameter bound to a JSON column of `runs` (PostgreSQL's are JSONB,
    /// which takes the text through a cast).
    const JSON_PARAM: &'static str;

    /// The driver's error.
    type Error;

    /// Runs `sql` with `params`, returning the number of rows it changed.
    fn execute(&mut self, sql: &str, params: &[&dyn Param]) -> Result<usize, Self::Error>;

    /// Error `e` of a statement as the store's error; `action` says what failed.
    fn failed(&self, action: &str, e: Self::Error) -> StoreError;

    /// Where the database is, for messages: the SQLite file, or the PostgreSQL URL without
    /// its password.
    fn location(&self) -> &Path;

    /// Inserts result `r` of run `run_id`; with `replace`, after deleting the result stored
    /// under its number (if any) with its metrics.
    fn add_result(&mut self, run_id: &str, r: &ResultRow, replace: bool) -> Result<(), StoreError>;

    /// Deletes run `run_id` with its results and metrics (an import that failed part way
    /// takes back what it wrote).
    fn delete_run(&mut self, run_id: &str) -> Result<(), StoreError>;

    /// Inserts the run row.
    fn begin_run(&mut self, run: &RunRow) -> Result<(), StoreError> {
        let json = Self::JSON_PARAM;
        let sql = format!(
            "INSERT INTO runs (id, schema, kind, started_ns, finished_ns, interrupted,
                               tool_version, hostname, host_json, config_json)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9{json}, $10{json})"
        );
        let params: [&dyn Param; 10] = [
            &run.id,
            &run.schema,
            &run.kind,
            &run.started_ns,
            &run.finished_ns,
            &run.interrupted,
            &run.tool_version,
            &run.hostname,
            &run.host_json,
            &run.config_json,
        ];
        match self.execute(&sql, &params) {
            Ok(_) => Ok(()),
            Err(e) => Err(self.failed(&format!("store run {}", run.id), e)),
        }
    }

    /// Records the end of run `run_id`; a run that is not stored is [`StoreError::RunNotFound`].
    fn finish_run(
        &mut self,
        run_id: &str,
        finished_ns: Option<i64>,
        interrupted: bool,
    ) -> Result<(), StoreError> {
        let changed = self
            .execute(
                "UPDATE runs SET finished_ns = $1, interrupted = $2 WHERE id = $3",
                &[&finished_ns, &interrupted, &run_id],
            )
            .map_err(|e| self.failed(&format!("finish run {run_id}"), e))?;
        if changed == 0 {
            return Err(StoreError::RunNotFound {
                reference: run_id.to_string(),
                path: self.location().to_path_buf(),
            });
        }
        Ok(())
    }
}
