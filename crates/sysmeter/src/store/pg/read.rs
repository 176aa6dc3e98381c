//! PostgreSQL queries that read: the run listing (of one machine or all), reference lookups
//! and all rows of one run.

use postgres::Row;
use postgres::types::{FromSql, ToSql};

use super::{Pg, snapshot};
use crate::store::StoreError;
use crate::store::columns::{
    Get, METRICS_SELECT, RESULTS_SELECT, listing_row, metric_row, result_row, run_row,
};
use crate::store::read::{LATEST_SQL, PREFIX_MATCHES, Reads, RunListing, RunRows};

impl Reads for Pg {
    fn list_runs(&self, limit: i64, hostname: Option<&str>) -> Result<Vec<RunListing>, StoreError> {
        let fail = |e: postgres::Error| self.error("list the runs", &e);
        let rows = self
            .client
            .borrow_mut()
            .query(
                "SELECT r.id, r.kind, r.started_ns, r.finished_ns, r.interrupted, r.hostname,
                        r.tool_version, count(x.seq),
                        count(*) FILTER (WHERE x.status = 'ok'),
                        count(*) FILTER (WHERE x.status = 'skipped'),
                        count(*) FILTER (WHERE x.status = 'failed')
                 FROM runs r LEFT JOIN results x ON x.run_id = r.id
                 WHERE $2::text IS NULL OR r.hostname = $2
                 GROUP BY r.id
                 ORDER BY r.started_ns DESC, r.id DESC
                 LIMIT $1",
                &[&limit, &hostname],
            )
            .map_err(fail)?;
        rows.iter()
            .map(|row| {
                listing_row(row, |_, v| ReadError::Range(v))
                    .map_err(|e| self.read_error("list the runs", e))
            })
            .collect()
    }

    fn latest(
        &self,
        back: i64,
        hostname: Option<&str>,
        kind: Option<&str>,
    ) -> Result<Option<String>, StoreError> {
        let action = format!("look up run 'latest~{back}'");
        let ids = self.ids(&action, LATEST_SQL, &[&hostname, &kind, &back])?;
        Ok(ids.into_iter().next())
    }

    fn ids_with_prefix(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        // left() rather than LIKE, whose `_` and `%` are wildcards.
        self.ids(
            &format!("look up run '{prefix}'"),
            "SELECT id FROM runs WHERE left(id, length($1)) = $1
             ORDER BY id = $1 DESC, id LIMIT $2",
            &[&prefix, &PREFIX_MATCHES],
        )
    }

    fn load_rows(&self, id: &str) -> Result<RunRows, StoreError> {
        let fail = |what: &str| {
            let action = format!("read the {what} of run {id}");
            move |e: postgres::Error| self.error(&action, &e)
        };
        let mut client = self.client.borrow_mut();
        let mut tx = snapshot(&mut client).map_err(fail("rows"))?;
        let run = tx
            .query_one(
                "SELECT id, schema, kind, started_ns, finished_ns, interrupted, tool_version,
                        hostname, host_json::text, config_json::text
                 FROM runs WHERE id = $1",
                &[&id],
            )
            .and_then(|row| run_row(&row))
            .map_err(fail("run row"))?;
        let results = tx
            .query(RESULTS_SELECT, &[&id])
            .and_then(|rows| rows.iter().map(result_row).collect())
            .map_err(fail("results"))?;
        let metrics = tx
            .query(METRICS_SELECT, &[&id])
            .and_then(|rows| rows.iter().map(metric_row).collect())
            .map_err(fail("metrics"))?;
        tx.commit().map_err(fail("rows"))?;
        Ok(RunRows {
            run,
            results,
            metrics,
        })
    }
}

impl Pg {
    /// The run ids that query `sql` selects with `params`; `action` says what failed.
    fn ids(
        &self,
        action: &str,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<String>, StoreError> {
        let fail = |e: postgres::Error| self.error(action, &e);
        let rows = self.client.borrow_mut().query(sql, params).map_err(fail)?;
        rows.iter()
            .map(|r| r.try_get(0))
            .collect::<Result<_, _>>()
            .map_err(fail)
    }

    /// A row that does not convert (e.g. a count that does not fit `usize`).
    fn read_error(&self, action: &str, e: ReadError) -> StoreError {
        match e {
            ReadError::Driver(e) => self.error(action, &e),
            ReadError::Range(v) => StoreError::Server {
                action: action.to_string(),
                url: self.location.display().to_string(),
                reason: format!("a count of {v} does not fit this machine's integers"),
                hint: "this is a bug in sysmeter, please report it",
            },
        }
    }
}

/// Why a listing row did not convert.
enum ReadError {
    Driver(postgres::Error),
    Range(i64),
}

impl From<postgres::Error> for ReadError {
    fn from(e: postgres::Error) -> ReadError {
        ReadError::Driver(e)
    }
}

impl<T: for<'a> FromSql<'a>> Get<T, postgres::Error> for Row {
    fn at(&self, i: usize) -> Result<T, postgres::Error> {
        self.try_get(i)
    }
}
