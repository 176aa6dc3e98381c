//! PostgreSQL statements of `sysmeter fleet`: the shared fleet SQL of `store::fleet` and the
//! fleet's spread with `percentile_cont`, all in the database and in one snapshot.

use super::{Pg, snapshot};
use crate::model::FleetSpread;
use crate::store::StoreError;
use crate::store::columns::{host_row, value_row};
use crate::store::fleet::{FleetRows, HOSTS_SQL, SPREAD_SQL, VALUES_SQL, with_latest};

impl Pg {
    pub(in crate::store) fn fleet_rows(&self, since_ns: i64) -> Result<FleetRows, StoreError> {
        let fail = |e: postgres::Error| self.error("read the fleet", &e);
        let mut client = self.client.borrow_mut();
        let mut tx = snapshot(&mut client).map_err(fail)?;
        let hosts = tx
            .query(&with_latest(HOSTS_SQL), &[&since_ns])
            .and_then(|rows| rows.iter().map(host_row).collect())
            .map_err(fail)?;
        let values = tx
            .query(&with_latest(VALUES_SQL), &[&since_ns])
            .and_then(|rows| rows.iter().map(value_row).collect())
            .map_err(fail)?;
        let spreads = tx
            .query(&with_latest(SPREAD_SQL), &[&since_ns])
            .and_then(|rows| {
                rows.iter()
                    .map(|r| {
                        Ok(FleetSpread {
                            experiment: r.try_get(0)?,
                            metric: r.try_get(1)?,
                            median: r.try_get(2)?,
                            p10: r.try_get(3)?,
                            p90: r.try_get(4)?,
                        })
                    })
                    .collect()
            })
            .map_err(fail)?;
        tx.commit().map_err(fail)?;
        Ok((hosts, values, Some(spreads)))
    }
}
