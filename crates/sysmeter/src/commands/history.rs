//! `sysmeter history`: the stored runs, newest first. In a fleet (PostgreSQL) database only
//! this machine's runs unless `--all-hosts`; an SQLite database lists all its runs.

use comfy_table::Table;

use crate::cli::{HistoryArgs, SimpleFormat};
use crate::store::RunListing;

use std::fmt::Write;

use super::{Outcome, emit, open_store_to_read};

/// Print the run list.
pub fn history(args: &HistoryArgs) -> anyhow::Result<Outcome> {
    let store = open_store_to_read(&args.db)?;
    // open_store sets the home host only for a fleet database.
    let host = store.home_host().filter(|_| !args.all_hosts);
    let runs = store.list_host_runs(args.limit, host)?;
    let mut out = String::new();
    let scope = match host {
        Some(h) => format!("of host {h} "),
        None => String::new(),
    };
    match args.format {
        SimpleFormat::Json => {
            let v: Vec<serde_json::Value> = runs.iter().map(listing_json).collect();
            writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
        }
        SimpleFormat::Text if runs.is_empty() => {
            writeln!(
                out,
                "No runs {scope}in {} yet; `sysmeter bench` makes one.",
                store.path().display()
            )?;
        }
        SimpleFormat::Text => {
            writeln!(out, "{}", runs_table(&runs))?;
            let others = if host.is_some() {
                " (`--all-hosts` lists every machine's)"
            } else {
                ""
            };
            writeln!(
                out,
                "{} run(s) {scope}in {}{others}; `sysmeter show RUN` shows one.",
                runs.len(),
                store.path().display()
            )?;
        }
    }
    emit(&out)?;
    Ok(Outcome::Success)
}

/// The text table of `runs`, one row each.
fn runs_table(runs: &[RunListing]) -> Table {
    let mut t = Table::new();
    t.load_style(comfy_table::presets::UTF8_FULL_CONDENSED);
    t.set_header([
        "run",
        "kind",
        "started (UTC)",
        "took",
        "host",
        "experiments",
        "status",
    ]);
    for r in runs {
        t.add_row([
            r.id.clone(),
            r.kind.clone(),
            utc(r.started_ns),
            r.finished_ns.map_or("-".into(), |f| {
                format!("{:.1} s", (f - r.started_ns) as f64 / 1e9)
            }),
            r.hostname.clone(),
            format!("{} ok, {} skipped, {} failed", r.ok, r.skipped, r.failed),
            r.state().into(),
        ]);
    }
    t
}

fn utc(ns: i64) -> String {
    jiff::Timestamp::from_nanosecond(ns as i128)
        .map(|t| t.strftime("%Y-%m-%d %H:%M:%S").to_string())
        .unwrap_or_else(|_| ns.to_string())
}

/// One listed run as JSON (docs/json-schema.md), keys in alphabetical order.
pub(super) fn listing_json(r: &RunListing) -> serde_json::Value {
    serde_json::to_value(r).unwrap_or_default()
}
