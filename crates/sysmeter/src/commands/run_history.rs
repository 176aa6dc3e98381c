//! The one rule for "this host's runs": the stored bench runs that tell a run's between-run
//! noise, loaded for `compare` (the history of each side that is one run) and for every
//! command that renders a bench run with its run-to-run intervals (`show`, `report`,
//! `export`, the end of `bench`; `stats::run_to_run`). The selection itself is
//! `stats::compare::history::stored_runs`; this module only reads the store.

use super::console;
use crate::model::{RunKind, RunRecord};
use crate::stats::compare::history::HISTORY_RUNS;
use crate::stats::run_to_run;
use crate::store::Store;

/// The stored runs that tell the machine's between-run noise: for each run of `runs`, up to
/// [`HISTORY_RUNS`] complete bench runs of its host with its profile and sysmeter version,
/// newest first, found among the host's `3 × HISTORY_RUNS` most recent stored runs — with
/// `up_to`, those that started no later than it — other than the runs `excluded` (what the
/// listing tells is checked before a run is loaded). A run that cannot be read is left out
/// with a warning; nothing fails for the history's sake.
pub(super) fn load_history(
    store: &Store,
    runs: &[&RunRecord],
    excluded: &[&str],
    up_to: Option<i64>,
) -> Vec<RunRecord> {
    let mut wanted: Vec<(&str, &str, &str)> = Vec::new();
    for run in runs {
        let host = run.host.hostname.as_str();
        let key = (host, run.config.profile.as_str(), run.tool_version.as_str());
        if !wanted.contains(&key) {
            wanted.push(key);
        }
    }
    let mut out: Vec<RunRecord> = Vec::new();
    for (host, profile, version) in wanted {
        let limit = up_to.map_or(HISTORY_RUNS * 3, |_| usize::MAX);
        let listed = match store.list_host_runs(limit, Some(host)) {
            Ok(l) => l,
            Err(e) => {
                console::errln(format!("warning: no run history for {host} ({e})"));
                continue;
            }
        };
        let listed = (listed.into_iter())
            .filter(|l| up_to.is_none_or(|t| l.started_ns <= t))
            .take(HISTORY_RUNS * 3);
        let mut kept = 0;
        for listing in listed {
            if kept == HISTORY_RUNS {
                break;
            }
            // Complete bench runs only: an interrupted one may hold a round or two.
            let usable = listing.kind == "bench"
                && listing.state() == "complete"
                && listing.tool_version == version
                && !excluded.contains(&listing.id.as_str());
            if !usable {
                continue;
            }
            match store.load_run(&listing.id) {
                Ok(run) if run.config.profile == profile => {
                    kept += 1;
                    out.push(run);
                }
                Ok(_) => {}
                Err(e) => console::errln(format!(
                    "warning: stored run {} left out of the run history ({e})",
                    listing.id
                )),
            }
        }
    }
    out
}

/// Gives every metric of a bench `run` its run-to-run interval (`stats::run_to_run`), from
/// the stored runs of its host up to it when there is a store; other kinds are left alone.
pub(super) fn annotate(store: Option<&Store>, run: &mut RunRecord) {
    if run.kind != RunKind::Bench {
        return;
    }
    let history = match store {
        Some(s) => load_history(s, &[&*run], &[run.id.as_str()], Some(run.started_ns)),
        None => Vec::new(),
    };
    let history: Vec<&RunRecord> = history.iter().collect();
    run_to_run::annotate(run, &history);
}
