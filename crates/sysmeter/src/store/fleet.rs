//! Reading a fleet and importing runs, whatever the backend. The fleet queries reduce the
//! database in SQL — each host's latest bench run (by the rule of `store/retention.rs`),
//! one value (the median) per metric of it, and on PostgreSQL the fleet's median and
//! p10–p90 per metric — so `sysmeter fleet` reads a few rows per host and metric, never
//! every run. The SQL is shared by both backends (it uses only what SQLite and PostgreSQL
//! both understand) and documented in docs/fleet.md, where users copy it into Grafana; a
//! test keeps the two the same.
//!
//! No formatting for people here; statements run in `sqlite/fleet.rs` and `pg/fleet.rs`.

pub mod sql;

use super::read::Reads;
use super::retention::{dated_sql, ended_sql, newest_sql};
use super::rows::{Decoder, Encoder};
use super::write::Writes;
use super::{Store, StoreError, on_backend, on_backend_mut};
use std::collections::BTreeSet;

use crate::model::{
    FleetData, FleetHost, FleetJudged, FleetSpread, FleetValue, HostInfo, RunRecord,
};
use crate::model::{showable, visible};

/// Each host's latest bench run, by the one rule of `store/retention.rs` (a run that ended,
/// with a possible date, the last the store received), as the common table `latest`, when
/// that run started at or after `$1` (ns since the epoch): a host whose latest run is older
/// is left out, not represented by an earlier one, as in PostgreSQL's `fleet_host`.
/// Shared by the queries below.
pub const LATEST_RUNS_SQL: &str = concat!(
    "WITH ranked AS (
    SELECT id, hostname, started_ns, host_json,
           row_number() OVER (PARTITION BY hostname
                              ORDER BY ",
    newest_sql!(),
    ") AS age
    FROM runs
    WHERE kind = 'bench' AND ",
    ended_sql!(),
    " AND ",
    dated_sql!(),
    "
), latest AS (SELECT * FROM ranked WHERE age = 1 AND started_ns >= $1)"
);

/// The hosts: name, run id, start and machine description of each latest run.
pub const HOSTS_SQL: &str = "SELECT hostname, id, started_ns, CAST(host_json AS TEXT)
FROM latest";

/// One row per host and metric of its latest run: the metric's median.
pub const VALUES_SQL: &str = "SELECT l.hostname, x.exp_id, m.name, m.unit, m.median
FROM latest l
JOIN results x ON x.run_id = l.id AND x.status = 'ok'
JOIN metrics m ON m.run_id = x.run_id AND m.seq = x.seq
WHERE m.median IS NOT NULL";

/// A host row as read: name, run id, start, machine description as JSON text.
pub(super) type HostRow = (String, String, i64, String);
/// A host read without its description (a reduced fleet): name, run id, start, CPU model,
/// kernel.
pub(super) type LightHost = (String, String, i64, String, String);
/// A value row as read: host name, experiment, metric, unit word, median.
pub(super) type ValueRow = (String, String, String, String, f64);
/// A value row with the database's judgment of it (a reduced fleet) or none.
pub(super) type JudgedRow = (ValueRow, Option<FleetJudged>);

/// What a backend reads for [`Store::fleet`].
#[derive(Default)]
pub(super) struct FleetRows {
    /// Hosts with their whole description.
    pub hosts: Vec<HostRow>,
    /// Hosts without it (a reduced fleet: the hosts none of whose values was read).
    pub light: Vec<LightHost>,
    /// The values read.
    pub values: Vec<JudgedRow>,
    /// The spreads with their unit words, when the database computed them.
    pub spreads: Option<Vec<(String, FleetSpread)>>,
    /// Whether the database reduced the fleet (`FleetData::reduced`).
    pub reduced: bool,
}

/// `statement` with the `latest` table in front.
pub(super) fn with_latest(statement: &str) -> String {
    format!("{LATEST_RUNS_SQL}\n{statement}")
}

impl Store {
    /// The fleet: each host's latest bench run (`LATEST_RUNS_SQL`), when it started at or
    /// after `since_ns` (always when `None`), and the metric medians of those runs, sorted by
    /// host name and by experiment, metric and host name. On PostgreSQL beyond
    /// `ROLL_CALL_HOSTS` hosts the database reduces it (`FleetData::reduced`).
    pub fn fleet(&self, since_ns: Option<i64>) -> Result<FleetData, StoreError> {
        let since = since_ns.unwrap_or(i64::MIN);
        let rows = on_backend!(self, b => b.fleet_rows(since))?;
        let mut hosts: Vec<FleetHost> = (rows.hosts.into_iter())
            .map(|h| self.fleet_host(h))
            .collect::<Result<_, _>>()?;
        let full: BTreeSet<String> = hosts.iter().map(|h| h.hostname.clone()).collect();
        hosts.extend(
            (rows.light.into_iter())
                .filter(|h| !full.contains(&h.0))
                .map(light_host),
        );
        let spreads = match rows.spreads {
            Some(s) => {
                let mut s: Vec<FleetSpread> = s
                    .into_iter()
                    .map(|s| self.spread(s))
                    .collect::<Result<_, _>>()?;
                s.sort_by(|a, b| (&a.experiment, &a.metric).cmp(&(&b.experiment, &b.metric)));
                Some(s)
            }
            None => None,
        };
        let mut data = FleetData {
            hosts,
            values: (rows.values.into_iter())
                .map(|(v, judged)| self.fleet_value(v, judged))
                .collect::<Result<_, _>>()?,
            spreads,
            reduced: rows.reduced,
        };
        data.hosts.sort_by(|a, b| a.hostname.cmp(&b.hostname));
        data.values.sort_by(|a, b| {
            (&a.experiment, &a.metric, &a.hostname).cmp(&(&b.experiment, &b.metric, &b.hostname))
        });
        Ok(data)
    }

    fn spread(&self, (unit, spread): (String, FleetSpread)) -> Result<FleetSpread, StoreError> {
        let d = Decoder {
            db: self.path(),
            id: &spread.experiment,
        };
        Ok(FleetSpread {
            unit: d.word("unit", unit)?,
            ..spread
        })
    }

    fn fleet_host(
        &self,
        (hostname, run_id, started_ns, json): HostRow,
    ) -> Result<FleetHost, StoreError> {
        let d = Decoder {
            db: self.path(),
            id: &run_id,
        };
        let host = d.json("host_json", &json)?;
        Ok(FleetHost {
            hostname,
            run_id,
            started_ns,
            host,
        })
    }

    fn fleet_value(
        &self,
        (hostname, experiment, metric, unit, value): ValueRow,
        judged: Option<FleetJudged>,
    ) -> Result<FleetValue, StoreError> {
        let d = Decoder {
            db: self.path(),
            id: &hostname,
        };
        Ok(FleetValue {
            unit: d.word("unit", unit)?,
            hostname,
            experiment,
            metric,
            value,
            run_to_run: None,
            judged,
        })
    }

    /// Whether a run with exactly this id is stored.
    pub fn has_run(&self, id: &str) -> Result<bool, StoreError> {
        let ids = on_backend!(self, b => b.ids_with_prefix(id))?;
        Ok(ids.iter().any(|i| i == id))
    }

    /// Stores a run written elsewhere (`sysmeter import`) under its own id and host; returns
    /// `false`, storing nothing, when a run with that id is already stored (also when a
    /// concurrent import stored it first). The whole run is checked and encoded before
    /// anything is written, so a record that cannot be stored is [`StoreError::Refused`]
    /// with nothing of it stored; a write that fails part way deletes what it wrote.
    pub fn import_run(&mut self, run: &RunRecord) -> Result<bool, StoreError> {
        let refused = |reason: String| StoreError::Refused {
            run_id: run.id.escape_debug().to_string(),
            reason,
        };
        printable("its id", &run.id).map_err(refused)?;
        printable("its hostname", &run.host.hostname).map_err(refused)?;
        terminal_safe(run).map_err(refused)?;
        let encoder = Encoder {
            db: self.path(),
            run_id: &run.id,
            samples: self.samples || !self.is_fleet(),
        };
        let encoded = encoder.run(run).and_then(|row| {
            let results = run.results.iter().enumerate();
            let rows = results.map(|(seq, r)| encoder.result(seq, r));
            Ok((row, rows.collect::<Result<Vec<_>, _>>()?))
        });
        let (row, results) = encoded.map_err(|e| match e {
            StoreError::Encode { field, cause, .. } => refused(format!("its {field}: {cause}")),
            other => refused(other.to_string()),
        })?;
        if self.has_run(&run.id)? {
            return Ok(false);
        }
        if let Err(e) = on_backend_mut!(self, b => b.begin_run(&row)) {
            // Stored meanwhile by another import of the same record: not an error.
            return match self.has_run(&run.id) {
                Ok(true) => Ok(false),
                _ => Err(e),
            };
        }
        let written = results
            .iter()
            .try_for_each(|r| on_backend_mut!(self, b => b.add_result(&run.id, r, false)))
            .and_then(|()| {
                on_backend_mut!(self, b => b.finish_run(&run.id, run.finished_ns, run.interrupted))
            });
        if let Err(e) = written {
            let _ = on_backend_mut!(self, b => b.delete_run(&run.id));
            return Err(e);
        }
        Ok(true)
    }
}

/// A host of a reduced fleet: its description holds only its name, CPU model and kernel.
fn light_host((hostname, run_id, started_ns, cpu, kernel): LightHost) -> FleetHost {
    let mut host = HostInfo {
        hostname: hostname.clone(),
        kernel,
        ..HostInfo::default()
    };
    host.cpu.model = cpu;
    FleetHost {
        hostname,
        run_id,
        started_ns,
        host,
    }
}

/// Refuses an empty, overlong or unprintable identifier (a control or bidi character would
/// reach every terminal that lists it; `model::visible`).
fn printable(what: &str, text: &str) -> Result<(), String> {
    if text.is_empty() || text.len() > 255 {
        return Err(format!("{what} is empty or longer than 255 bytes"));
    }
    match text.chars().find(|c| c.is_control() || visible::acts(*c)) {
        Some(c) => Err(format!(
            "{what} holds the character {}",
            visible::visible(&c.to_string())
        )),
        None => Ok(()),
    }
}

/// Refuses a record with a character that acts on a terminal or on the reading order
/// (`model::visible`: an escape sequence could rewrite the screen of whoever lists it) in
/// any of its texts, line breaks and tabs being text; and a record holding a number no
/// report can show (`model::showable`).
fn terminal_safe(run: &RunRecord) -> Result<(), String> {
    let value = serde_json::to_value(run).map_err(|e| e.to_string())?;
    let mut texts = vec![&value];
    while let Some(v) = texts.pop() {
        match v {
            serde_json::Value::String(s) => {
                if let Some(c) = s.chars().find(|c| visible::acts(*c) && *c != '\r') {
                    return Err(format!(
                        "a text holds the character {}",
                        visible::visible(&c.to_string())
                    ));
                }
            }
            serde_json::Value::Array(items) => texts.extend(items),
            serde_json::Value::Object(fields) => texts.extend(fields.values()),
            _ => {}
        }
    }
    match showable::unshowable_sentence(&value) {
        Some(said) => Err(said),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests;
