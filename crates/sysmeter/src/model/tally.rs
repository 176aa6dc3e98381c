//! One round's aggregation of a diagnosis result in the one neutral form `compare` reads: per
//! quantity (samples per call stack, bytes per heap site, wait time per lock site, calls per
//! system call, …) a [`Table`] of keyed values, each with the number of events behind it
//! when the quantity is a sum of counted events (so the noise of one round can be told from
//! the events). [`of`] reads it from a result as every diagnosis stores it today (its
//! artifacts and metrics); `--rounds N` keeps every round's tally in the result's
//! [`ROUNDS`] artifact ([`rounds_artifact`]), and [`rounds`] reads it back (a result without
//! it is one round: [`of`] itself). Records of one round therefore look as they always did.
//!
//! Pure data and its reading; depends on `model` types, serde and serde_json only.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::alloc::{ALLOC_ID, sites};
use super::callgraph::FUNCTIONS_ID;
use super::held::held_rows;
use super::locks::{LOCKS_ID, rows as lock_rows};
use super::{Artifact, ExperimentResult, Unit};

/// The artifact that holds a result's rounds (JSON array of [`Tally`]), written only with
/// two or more rounds.
pub const ROUNDS: &str = "rounds";

/// One round of one result: its wall time and its tables.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Tally {
    /// Wall time the round observed, ns (0 when unknown).
    pub wall_ns: u64,
    /// Whether the round saw a launched command from its start to its exit (not `-p`, not
    /// cut by `--duration` or Ctrl-C): its values are then per run of the command.
    #[serde(default)]
    pub whole: bool,
    /// The quantities, each keyed by stack, site or call.
    pub tables: Vec<Table>,
}

/// One quantity of a round, keyed by what it is counted per.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Table {
    /// What it counts: `CPU samples per stack`, `bytes per heap site`, ….
    pub name: String,
    /// Unit of the values.
    pub unit: Unit,
    /// Whether the keys are call stacks (`a;b;c`, outermost first): per-function self and
    /// inclusive tables are derived from them ([`with_functions`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stacks: bool,
    /// Per key: the value, and the counted events it sums (`None` when not counted, e.g.
    /// measured off-CPU time).
    pub rows: BTreeMap<String, Cell>,
}

/// One value of a [`Table`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    /// The value, in the table's unit.
    pub value: f64,
    /// The events it sums (samples, calls, allocations, waits), when they were counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<f64>,
}

impl Table {
    fn new(name: &str, unit: Unit) -> Table {
        Table {
            name: name.into(),
            unit,
            stacks: false,
            rows: BTreeMap::new(),
        }
    }

    /// Adds `value` of `events` (if counted) to `key`'s cell.
    pub fn add(&mut self, key: &str, value: f64, events: Option<f64>) {
        match self.rows.get_mut(key) {
            None => {
                self.rows.insert(key.to_string(), Cell { value, events });
            }
            Some(cell) => {
                cell.value += value;
                cell.events = cell.events.zip(events).map(|(a, b)| a + b);
            }
        }
    }

    /// The sum of the values.
    pub fn total(&self) -> f64 {
        self.rows.values().map(|c| c.value).sum()
    }
}

/// The tally of `r` as it is stored, or `None` for a result `compare` does not tally.
pub fn of(r: &ExperimentResult) -> Option<Tally> {
    let tables = match r.id.as_str() {
        "profile" => vec![folded(r, "folded", "CPU samples per stack", Unit::Count)?],
        "offcpu" => vec![folded(
            r,
            "offcpu folded",
            "off-CPU time per stack",
            Unit::Ns,
        )?],
        FUNCTIONS_ID => vec![folded(r, "folded", "self time per stack", Unit::Ns)?],
        ALLOC_ID => alloc_tables(r),
        LOCKS_ID => lock_tables(r),
        "trace" => call_tables(r, "system call"),
        "calls" => call_tables(r, "library call"),
        _ => return None,
    };
    let wall_ns = r.session.as_ref().map_or(r.elapsed_ns, |s| s.wall_ns);
    let whole = (r.session.as_ref()).is_none_or(|s| s.ended == "finished" && s.exit_code.is_some());
    Some(Tally {
        wall_ns,
        whole,
        tables,
    })
}

/// Every round of `r`: its [`ROUNDS`] artifact, else the one round it is ([`of`]).
pub fn rounds(r: &ExperimentResult) -> Vec<Tally> {
    match r.artifact_json::<Vec<Tally>>(ROUNDS) {
        Some(all) if !all.is_empty() => all,
        _ => of(r).into_iter().collect(),
    }
}

/// The [`ROUNDS`] artifact of `tallies`; `None` if they cannot be encoded.
pub fn rounds_artifact(tallies: &[Tally]) -> Option<Artifact> {
    Some(Artifact {
        name: ROUNDS.into(),
        media_type: "application/json".into(),
        content: serde_json::to_string(tallies).ok()?,
    })
}

/// The folded stacks of artifact `artifact` (`a;b;c N` lines) as a table of stacks.
fn folded(r: &ExperimentResult, artifact: &str, name: &str, unit: Unit) -> Option<Table> {
    let text = r.artifact(artifact)?;
    let mut t = Table::new(name, unit);
    t.stacks = true;
    let counted = unit == Unit::Count;
    for line in text.lines() {
        let Some((stack, n)) = line.rsplit_once(' ') else {
            continue;
        };
        if let Ok(n) = n.trim().parse::<f64>() {
            t.add(stack, n, counted.then_some(n));
        }
    }
    Some(t)
}

fn alloc_tables(r: &ExperimentResult) -> Vec<Table> {
    let mut bytes = Table::new("bytes per heap site", Unit::Bytes);
    let mut count = Table::new("allocations per heap site", Unit::Count);
    let mut live = Table::new("bytes live at end per heap site", Unit::Bytes);
    let mut temporary = Table::new("temporaries per heap site", Unit::Count);
    for s in sites(r) {
        let n = |v: u64| Some(v as f64);
        bytes.add(&s.site, s.bytes as f64, n(s.allocations));
        count.add(&s.site, s.allocations as f64, n(s.allocations));
        live.add(&s.site, s.leaked_bytes as f64, n(s.leaked));
        temporary.add(&s.site, s.temporary as f64, n(s.temporary));
    }
    vec![bytes, count, live, temporary]
}

fn lock_tables(r: &ExperimentResult) -> Vec<Table> {
    let mut waits = Table::new("waits per lock site", Unit::Count);
    let mut wait_time = Table::new("wait time per lock site", Unit::Ns);
    for (m, row) in lock_rows(r).unwrap_or_default() {
        let key = format!("{} {}: {}", row.class.as_str(), row.kind, row.site);
        let n = m.summary.n as f64;
        waits.add(&key, n, Some(n));
        wait_time.add(&key, n * m.summary.mean, Some(n));
    }
    let mut tables = vec![waits, wait_time];
    if let Some(held) = held_rows(r) {
        let mut hold = Table::new("hold time per lock site", Unit::Ns);
        for h in held {
            hold.add(
                &format!("{}: {}", h.kind, h.site),
                h.hold_ns as f64,
                Some(h.locked as f64),
            );
        }
        tables.push(hold);
    }
    tables
}

fn call_tables(r: &ExperimentResult, what: &str) -> Vec<Table> {
    let mut calls = Table::new(&format!("calls per {what}"), Unit::Count);
    let mut time = Table::new(&format!("total time per {what}"), Unit::Ns);
    for m in r.metrics.iter().filter(|m| m.unit == Unit::Ns) {
        let n = m.summary.n as f64;
        calls.add(&m.name, n, Some(n));
        time.add(&m.name, n * m.summary.mean, Some(n));
    }
    vec![calls, time]
}

/// `tables` with, after each table of stacks, the per-function tables derived from it: self
/// (the innermost frame) and inclusive (every function on the stack, once per stack).
pub fn with_functions(tables: &[Table]) -> Vec<Table> {
    let mut out = Vec::new();
    for t in tables {
        out.push(t.clone());
        if !t.stacks {
            continue;
        }
        let what = t.name.split(" per ").next().unwrap_or(&t.name);
        let mut own = Table::new(&format!("{what} per function (self)"), t.unit);
        let mut incl = Table::new(&format!("{what} per function (inclusive)"), t.unit);
        for (stack, c) in &t.rows {
            let frames: Vec<&str> = stack.split(';').collect();
            if let Some(leaf) = frames.last() {
                own.add(leaf, c.value, c.events);
            }
            let mut seen: Vec<&str> = Vec::with_capacity(frames.len());
            for f in frames {
                if !seen.contains(&f) {
                    seen.push(f);
                    incl.add(f, c.value, c.events);
                }
            }
        }
        out.push(own);
        out.push(incl);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::About;
    use crate::model::fixture::folded_profile as profile;

    #[test]
    fn stacks_give_self_and_inclusive_functions_once_per_stack() {
        let r = profile("main;f;g 3\nmain;f;f 2\nmain;h 5\n");
        let t = of(&r).unwrap();
        let all = with_functions(&t.tables);
        assert_eq!(all.len(), 3);
        let (own, incl) = (&all[1], &all[2]);
        assert_eq!(own.rows["g"].value, 3.0);
        assert_eq!(own.rows["f"].value, 2.0);
        assert_eq!(
            incl.rows["f"].value, 5.0,
            "recursion counted once per stack"
        );
        assert_eq!(incl.rows["main"].value, 10.0);
        assert_eq!(incl.rows["main"].events, Some(10.0));
        assert_eq!(own.name, "CPU samples per function (self)");
    }

    #[test]
    fn a_result_without_rounds_is_one_round_and_rounds_read_back() {
        let mut r = profile("main 4\n");
        assert_eq!(rounds(&r).len(), 1);
        let two = vec![of(&r).unwrap(), of(&profile("main 6\n")).unwrap()];
        r.artifacts.push(rounds_artifact(&two).unwrap());
        let back = rounds(&r);
        assert_eq!(back, two);
        assert_eq!(back[1].tables[0].rows["main"].value, 6.0);
        assert!(of(&ExperimentResult::new("scale", About::default())).is_none());
    }
}
