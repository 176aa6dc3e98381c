//! `sysmeter list`: the groups and experiments, one line each.

use crate::cli::{ListArgs, SimpleFormat};
use crate::experiments::{GROUPS, all};

use std::fmt::Write;

use serde::{Deserialize, Serialize};

use super::{Outcome, emit};

/// One experiment in `list --format json` (docs/json-schema.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ListEntry {
    /// Experiment id, `group.name`.
    pub id: String,
    /// Its group.
    pub group: Option<String>,
    /// Short title.
    pub title: String,
    /// What it measures.
    pub measures: String,
}

/// Every experiment, in run order, as listed.
pub fn entries() -> Vec<ListEntry> {
    all()
        .iter()
        .map(|e| {
            let a = e.about();
            ListEntry {
                id: e.id().to_string(),
                group: e.id().split('.').next().map(str::to_string),
                title: a.title,
                measures: a.measures,
            }
        })
        .collect()
}

/// Print the experiment list.
pub fn list(args: &ListArgs) -> anyhow::Result<Outcome> {
    let exps = all();
    let mut out = String::new();
    match args.format {
        SimpleFormat::Json => {
            let v: Vec<serde_json::Value> = entries()
                .iter()
                .map(serde_json::to_value)
                .collect::<Result<_, _>>()?;
            writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
        }
        SimpleFormat::Text => {
            // One column for every id: the longest decides (`fs.remote_read` is 14).
            let width = exps
                .iter()
                .map(|e| e.id().chars().count())
                .max()
                .unwrap_or(0);
            for (group, about) in GROUPS {
                writeln!(out, "{group} — {about}")?;
                for e in exps
                    .iter()
                    .filter(|e| e.id().split('.').next() == Some(group))
                {
                    writeln!(out, "  {:<width$}  {}", e.id(), e.about().title)?;
                }
            }
            writeln!(
                out,
                "\nRun `sysmeter bench GROUP…` or `sysmeter bench --only ID`."
            )?;
        }
    }
    emit(&out)?;
    Ok(Outcome::Success)
}
