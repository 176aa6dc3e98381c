//! PostgreSQL statements of `sysmeter fleet`, all in one snapshot: up to `ROLL_CALL_HOSTS`
//! hosts the shared fleet SQL of `store::fleet` with the fleet's spread from
//! `percentile_cont`; beyond, the fleet reduced on the server (`reduce.rs`): the spreads,
//! the outliers and the hosts nearest the median, and every host without its description.
//! The number of hosts and the hosts of a reduced fleet come from schema 5's `fleet_host`
//! (one row per host) rather than from ranking every stored run.

use postgres::{Row, Transaction};

use super::reduce::reduced;
use super::{Pg, snapshot};
use crate::model::{FleetSpread, ROLL_CALL_HOSTS, Unit};
use crate::store::StoreError;
use crate::store::columns::{host_row, value_row};
use crate::store::fleet::sql::{
    CHOSEN_HOSTS_SQL, FLEET_COUNT_SQL, LIGHT_HOSTS_SQL, PG_SPREAD_SQL, PG_VALUES_SQL, VALS_SQL,
};
use crate::store::fleet::{FleetRows, HOSTS_SQL, LATEST_RUNS_SQL, with_latest};
use crate::store::retention::{BEYOND_SQL, Beyond};

impl Pg {
    pub(in crate::store) fn fleet_rows(&self, since_ns: i64) -> Result<FleetRows, StoreError> {
        let fail = |e: postgres::Error| self.error("read the fleet", &e);
        let mut client = self.client.borrow_mut();
        let mut tx = snapshot(&mut client).map_err(fail)?;
        let count: i64 = tx
            .query_one(FLEET_COUNT_SQL, &[&since_ns])
            .and_then(|r| r.try_get(0))
            .map_err(fail)?;
        let rows = match usize::try_from(count).is_ok_and(|n| n <= ROLL_CALL_HOSTS) {
            true => whole(&mut tx, since_ns),
            false => reduced_rows(&mut tx, since_ns),
        }
        .map_err(fail)?;
        tx.commit().map_err(fail)?;
        Ok(rows)
    }
}

/// Every host with its description, every value, and the spreads.
fn whole(tx: &mut Transaction<'_>, since_ns: i64) -> Result<FleetRows, postgres::Error> {
    let hosts = tx
        .query(&with_latest(HOSTS_SQL), &[&since_ns])?
        .iter()
        .map(host_row)
        .collect::<Result<_, _>>()?;
    let values = tx
        .query(
            &format!("{LATEST_RUNS_SQL}{VALS_SQL}{PG_VALUES_SQL}"),
            &[&since_ns],
        )?
        .iter()
        .map(|r| Ok((value_row(r)?, None)))
        .collect::<Result<_, postgres::Error>>()?;
    let spreads = tx
        .query(
            &format!("{LATEST_RUNS_SQL}{VALS_SQL}{PG_SPREAD_SQL}"),
            &[&since_ns],
        )?
        .iter()
        .map(|r| spread_row(r, 0))
        .collect::<Result<_, postgres::Error>>()?;
    Ok(FleetRows {
        hosts,
        values,
        spreads: Some(spreads),
        ..FleetRows::default()
    })
}

/// A metric's spread with its unit word, from the columns experiment, metric, unit, host
/// count, median, p10 and p90 from column `at` on (`PG_SPREAD_SQL`, and `REDUCED_SQL`'s rows
/// of kind 0). Its `unit` waits for the word to be read by `Store::fleet`.
pub(super) fn spread_row(r: &Row, at: usize) -> Result<(String, FleetSpread), postgres::Error> {
    let n: i64 = r.try_get(at + 3)?;
    let spread = FleetSpread {
        experiment: r.try_get(at)?,
        metric: r.try_get(at + 1)?,
        unit: Unit::Count,
        hosts: usize::try_from(n).unwrap_or(0),
        median: r.try_get(at + 4)?,
        p10: r.try_get(at + 5)?,
        p90: r.try_get(at + 6)?,
    };
    Ok((r.try_get(at + 2)?, spread))
}

/// The fleet reduced on the server; full descriptions only of the hosts of the values read.
fn reduced_rows(tx: &mut Transaction<'_>, since_ns: i64) -> Result<FleetRows, postgres::Error> {
    let (spreads, values) = reduced(tx, since_ns)?;
    let mut names: Vec<&str> = values.iter().map(|(v, _)| v.0.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    let hosts = tx
        .query(CHOSEN_HOSTS_SQL, &[&since_ns, &names])?
        .iter()
        .map(host_row)
        .collect::<Result<_, _>>()?;
    let light = tx
        .query(LIGHT_HOSTS_SQL, &[&since_ns])?
        .iter()
        .map(|r| {
            Ok((
                r.try_get(0)?,
                r.try_get(1)?,
                r.try_get(2)?,
                r.try_get(3)?,
                r.try_get(4)?,
            ))
        })
        .collect::<Result<_, postgres::Error>>()?;
    Ok(FleetRows {
        hosts,
        light,
        values,
        spreads: Some(spreads),
        reduced: true,
    })
}

impl Pg {
    pub(in crate::store) fn runs_beyond(&self, keep: i64) -> Result<Vec<Beyond>, StoreError> {
        let fail = |e: postgres::Error| self.error("list the runs to prune", &e);
        let rows = self
            .client
            .borrow_mut()
            .query(BEYOND_SQL, &[&keep])
            .map_err(fail)?;
        rows.iter()
            .map(|r| {
                Ok(Beyond {
                    hostname: r.try_get(0)?,
                    id: r.try_get(1)?,
                    ended: r.try_get(2)?,
                })
            })
            .collect::<Result<_, postgres::Error>>()
            .map_err(fail)
    }
}
