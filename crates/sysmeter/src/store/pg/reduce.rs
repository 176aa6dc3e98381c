//! A large fleet reduced on the server (PostgreSQL, beyond `ROLL_CALL_HOSTS` hosts), from the
//! values by metric number that schema 5 keeps per host (`fleet_schema.rs`): per
//! metric the fleet's median, p10–p90 and host count; the outlier rule of `stats::fleet`
//! (robust deviation of the logs, the factor, the fewest hosts) applied in SQL; and only the
//! values the report shows — each outlier, and per metric with one the non-outlier host
//! nearest the median — each with its percentile. The client reads a few hundred rows
//! whatever the number of hosts, so its memory stays flat (docs/fleet.md has the figures).
//!
//! The rule's constants come from `stats::fleet` as parameters, so the two judges cannot
//! drift apart; `tests/it/pg/reduce.rs` checks the SQL against the client's judgment.

use postgres::Transaction;

use super::fleet::spread_row;
use crate::model::{FleetJudged, FleetSpread};
use crate::store::fleet::JudgedRow;
use crate::store::fleet::sql::REDUCED_SQL;

/// The spreads, each with its unit word, and the values chosen.
type Reduced = (Vec<(String, FleetSpread)>, Vec<JudgedRow>);

/// The reduced spreads (each with its unit word) and the chosen values of the fleet since
/// `since_ns`.
pub(super) fn reduced(tx: &mut Transaction<'_>, since_ns: i64) -> Result<Reduced, postgres::Error> {
    use crate::model::fleet_rule::{MAD_TO_SD, MADS, MIN_FACTOR, MIN_HOSTS};
    let min_hosts = i64::try_from(MIN_HOSTS).unwrap_or(i64::MAX);
    let params: [&(dyn postgres::types::ToSql + Sync); 5] =
        [&since_ns, &min_hosts, &MAD_TO_SD, &MIN_FACTOR, &MADS];
    // The matrix of every host's values (16 MB at 10 000 hosts × 204 metrics) stays in
    // memory (the default 4 MB spills it to disk); for this transaction only.
    tx.batch_execute("SET LOCAL work_mem = '128MB'")?;
    let (mut spreads, mut values) = (Vec::new(), Vec::new());
    for r in tx.query(REDUCED_SQL, &params)? {
        let kind: i32 = r.try_get(0)?;
        if kind == 0 {
            spreads.push(spread_row(&r, 1)?);
        } else {
            let judged = FleetJudged {
                percentile: r.try_get(9)?,
                outlier: r.try_get(10)?,
            };
            let row = (
                r.try_get(8)?,
                r.try_get(1)?,
                r.try_get(2)?,
                r.try_get(3)?,
                r.try_get(5)?,
            );
            values.push((row, Some(judged)));
        }
    }
    Ok((spreads, values))
}
