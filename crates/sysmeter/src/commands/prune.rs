//! `sysmeter prune --keep N`: the retention of a store, fleet or not. Each host keeps its
//! latest N runs of each kind (bench, run, trace, …, by start time); every older run is
//! deleted with its results and metrics. `--dry-run` lists them and deletes nothing.

use std::fmt::Write;

use super::{Outcome, emit, open_store};
use crate::cli::PruneArgs;

/// Deletes (or lists) the runs beyond each host's latest `--keep`.
pub fn prune(args: &PruneArgs) -> anyhow::Result<Outcome> {
    let mut store = open_store(&args.db)?;
    let keep = usize::try_from(args.keep).unwrap_or(usize::MAX);
    let old = store.runs_beyond(keep)?;
    let mut out = String::new();
    for (host, id) in &old {
        writeln!(out, "{} run {id} of host {host}", verb(args.dry_run))?;
    }
    if !args.dry_run {
        for (_, id) in &old {
            store.delete_run(id)?;
        }
    }
    writeln!(
        out,
        "{} {} run(s) beyond each host's latest {} of each kind, in {}.",
        verb(args.dry_run),
        old.len(),
        args.keep,
        store.path().display()
    )?;
    emit(&out)?;
    Ok(Outcome::Success)
}

fn verb(dry_run: bool) -> &'static str {
    if dry_run { "would delete" } else { "deleted" }
}
