//! SQLite statements of `sysmeter fleet`: the shared fleet SQL of `store::fleet`, read in one
//! snapshot. SQLite has no `percentile_cont`, so the fleet's spread is left to `stats`.

use rusqlite::params;

use super::{Sqlite, sql_error};
use crate::store::StoreError;
use crate::store::columns::{host_row, value_row};
use crate::store::fleet::{FleetRows, HOSTS_SQL, VALUES_SQL, with_latest};

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
            .and_then(|mut s| s.query_map(params![since_ns], |r| value_row(r))?.collect())
            .map_err(fail)?;
        tx.finish().map_err(fail)?;
        Ok((hosts, values, None))
    }
}
