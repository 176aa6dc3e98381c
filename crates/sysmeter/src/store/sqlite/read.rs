//! SQLite queries that read: the run listing, reference lookups and all rows of one run.

use rusqlite::types::FromSql;
use rusqlite::{OptionalExtension, Row, params};

use super::{Sqlite, sql_error};
use crate::store::StoreError;
use crate::store::columns::{
    Get, METRICS_SELECT, RESULTS_SELECT, listing_row, metric_row, result_row, run_row,
};
use crate::store::read::{LATEST_SQL, PREFIX_MATCHES, Reads, RunListing, RunRows};

impl Reads for Sqlite {
    fn list_runs(&self, limit: i64, hostname: Option<&str>) -> Result<Vec<RunListing>, StoreError> {
        let fail = |e| sql_error(&self.path, "list the runs", e);
        let mut stmt = self
            .conn
            .prepare(
                "SELECT r.id, r.kind, r.started_ns, r.finished_ns, r.interrupted, r.hostname,
                        r.tool_version, count(x.seq),
                        coalesce(sum(x.status = 'ok'), 0),
                        coalesce(sum(x.status = 'skipped'), 0),
                        coalesce(sum(x.status = 'failed'), 0)
                 FROM runs r LEFT JOIN results x ON x.run_id = r.id
                 WHERE ?2 IS NULL OR r.hostname = ?2
                 GROUP BY r.id
                 ORDER BY r.started_ns DESC, r.id DESC
                 LIMIT ?1",
            )
            .map_err(fail)?;
        let rows = stmt
            .query_map(params![limit, hostname], |row| {
                listing_row(row, rusqlite::Error::IntegralValueOutOfRange)
            })
            .map_err(fail)?;
        rows.collect::<Result<_, _>>().map_err(fail)
    }

    fn latest(
        &self,
        back: i64,
        hostname: Option<&str>,
        kind: Option<&str>,
    ) -> Result<Option<String>, StoreError> {
        self.conn
            .query_row(LATEST_SQL, params![hostname, kind, back], |row| row.get(0))
            .optional()
            .map_err(|e| sql_error(&self.path, &format!("look up run 'latest~{back}'"), e))
    }

    fn ids_with_prefix(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        let fail = |e| sql_error(&self.path, &format!("look up run '{prefix}'"), e);
        // Compared with substr rather than LIKE, whose `_` and `%` are wildcards and which
        // ignores case.
        let mut stmt = self
            .conn
            .prepare(
                "SELECT id FROM runs WHERE substr(id, 1, length(?1)) = ?1
                 ORDER BY id = ?1 DESC, id LIMIT ?2",
            )
            .map_err(fail)?;
        stmt.query_map(params![prefix, PREFIX_MATCHES], |row| {
            row.get::<_, String>(0)
        })
        .map_err(fail)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(fail)
    }

    fn load_rows(&self, id: &str) -> Result<RunRows, StoreError> {
        let fail = |what: &str| {
            let action = format!("read the {what} of run {id}");
            move |e| sql_error(&self.path, &action, e)
        };
        let tx = self.conn.unchecked_transaction().map_err(fail("rows"))?;
        let run = tx
            .query_row(
                "SELECT id, schema, kind, started_ns, finished_ns, interrupted, tool_version,
                        hostname, host_json, config_json
                 FROM runs WHERE id = ?1",
                [id],
                |row| run_row(row),
            )
            .map_err(fail("run row"))?;
        let results = tx
            .prepare(RESULTS_SELECT)
            .and_then(|mut s| s.query_map([id], |row| result_row(row))?.collect())
            .map_err(fail("results"))?;
        let metrics = tx
            .prepare(METRICS_SELECT)
            .and_then(|mut s| s.query_map([id], |row| metric_row(row))?.collect())
            .map_err(fail("metrics"))?;
        tx.finish().map_err(fail("rows"))?;
        Ok(RunRows {
            run,
            results,
            metrics,
        })
    }
}

impl<T: FromSql> Get<T, rusqlite::Error> for Row<'_> {
    fn at(&self, i: usize) -> rusqlite::Result<T> {
        self.get(i)
    }
}
