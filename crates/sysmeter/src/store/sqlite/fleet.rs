//! SQLite statements of `sysmeter fleet`: the shared fleet SQL of `store::fleet`, read in one
//! snapshot. SQLite has no `percentile_cont`, so the fleet's spread is left to `stats`.

use rusqlite::params;

use super::{Sqlite, sql_error};
use crate::store::StoreError;
use crate::store::columns::{host_row, value_row};
use crate::store::fleet::{FleetRows, HOSTS_SQL, VALUES_SQL, with_latest};
use crate::store::retention::{BEYOND_SQL, Beyond};

impl Sqlite {
    pub(in crate::store) fn fleet_rows(&self, since_ns: i64) -> Result<FleetRows, StoreError> {
        let fail = |e| sql_error(&self.path, "read the fleet", e);
        let tx = self.conn.unchecked_transaction().map_err(fail)?;
        let hosts = tx
            .prepare(&with_latest(HOSTS_SQL))
            .and_then(|mut s| s.query_map(params![since_ns], |r| host_row(r))?.collect())
            .map_err(fail)?;
        let values = tx
            .prepare(&with_latest(VALUES_SQL))
            .and_then(|mut s| {
                s.query_map(params![since_ns], |r| Ok((value_row(r)?, None)))?
                    .collect()
            })
            .map_err(fail)?;
        tx.finish().map_err(fail)?;
        Ok(FleetRows {
            hosts,
            values,
            ..FleetRows::default()
        })
    }
}

impl Sqlite {
    pub(in crate::store) fn runs_beyond(&self, keep: i64) -> Result<Vec<Beyond>, StoreError> {
        let fail = |e| sql_error(&self.path, "list the runs to prune", e);
        self.conn
            .prepare(BEYOND_SQL)
            .and_then(|mut s| {
                s.query_map(params![keep], |r| {
                    Ok(Beyond {
                        hostname: r.get(0)?,
                        id: r.get(1)?,
                        ended: r.get(2)?,
                    })
                })?
                .collect()
            })
            .map_err(fail)
    }
}
