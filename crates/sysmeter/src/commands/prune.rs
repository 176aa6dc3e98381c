//! `sysmeter prune --keep N`: the retention of a store, fleet or not. Each host keeps its
//! latest N runs of each kind (bench, run, trace, …) that ended, by the time the store
//! received them, and the runs that never ended received after the last of those (the rule
//! is `store/retention.rs`'s, the one `latest` uses); every other run is deleted with its
//! results and metrics. `--dry-run` lists exactly them, with why, and deletes nothing.

use std::fmt::Write;

use super::{Outcome, emit, open_store};
use crate::cli::PruneArgs;

/// Deletes (or lists) the runs beyond each host's latest `--keep`.
pub fn prune(args: &PruneArgs) -> anyhow::Result<Outcome> {
    let mut store = open_store(&args.db)?;
    let keep = usize::try_from(args.keep).unwrap_or(usize::MAX);
    let old = store.runs_beyond(keep)?;
    let mut out = String::new();
    for run in &old {
        let why = match run.ended {
            true => format!("beyond the latest {} that ended", args.keep),
            false => format!(
                "never ended: a run that ended came after it, or beyond the latest {} that never ended",
                args.keep
            ),
        };
        let (id, host) = (&run.id, &run.hostname);
        writeln!(
            out,
            "{} run {id} of host {host} ({why})",
            verb(args.dry_run)
        )?;
    }
    if !args.dry_run {
        for run in &old {
            store.delete_run(&run.id)?;
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
