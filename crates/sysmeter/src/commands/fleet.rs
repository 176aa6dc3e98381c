//! `sysmeter fleet`: the machines of a store side by side. The store reduces the database to
//! each host's latest bench run and its metric medians (in SQL), `--metric` keeps the
//! matching metrics, `stats::fleet` finds the spread and the outliers — a host that stands
//! out is judged again with its own run-to-run intervals (`run_history`), so one that moves
//! that far between its own runs is not called an outlier — and `report::fleet` renders
//! them.

use super::{Outcome, UsageError, emit, open_store_to_read, run_history};
use crate::cli::FleetArgs;
use crate::diagnose::calls::select::glob_match as glob;
use crate::model::FleetData;
use crate::report::fleet;
use crate::stats::fleet::{FleetView, fleet_view};
use crate::store::Store;

/// Prints the fleet.
pub fn fleet(args: &FleetArgs) -> anyhow::Result<Outcome> {
    let since = args.since.as_deref().map(parse_since).transpose()?;
    let store = open_store_to_read(&args.db)?;
    let mut data = store.fleet(since)?;
    if data.hosts.len() < 2 {
        return Err(UsageError(format!(
            "{} holds bench runs of {} host(s){}, and a fleet needs two or more; gather other \
             machines' runs with `sysmeter import FILE…` or a shared PostgreSQL --db",
            store.path().display(),
            data.hosts.len(),
            args.since
                .as_ref()
                .map_or(String::new(), |s| format!(" since {s}"))
        ))
        .into());
    }
    if let Some(pattern) = &args.metric {
        keep_matching(&mut data, pattern)?;
    }
    let mut view = fleet_view(&data);
    if own_spreads(&store, &view, &mut data) {
        view = fleet_view(&data);
    }
    emit(&fleet::render(&view, &data.hosts, args.format)?)?;
    Ok(Outcome::Success)
}

/// Gives the values of every host that stands out its own run-to-run interval: its latest
/// run with the stored runs of its host up to it (`run_history::annotate`). Whether any was
/// found (then the view is computed again).
fn own_spreads(store: &Store, view: &FleetView, data: &mut FleetData) -> bool {
    let mut hosts: Vec<&str> = view
        .outliers()
        .iter()
        .map(|(_, h)| h.hostname.as_str())
        .collect();
    hosts.sort_unstable();
    hosts.dedup();
    let mut found = false;
    for host in hosts {
        let Some(h) = data.hosts.iter().find(|h| h.hostname == host) else {
            continue;
        };
        let Ok(mut run) = store.load_run(&h.run_id) else {
            continue;
        };
        run_history::annotate(Some(store), &mut run);
        for v in data.values.iter_mut().filter(|v| v.hostname == host) {
            let r = run.results.iter().find(|r| r.id == v.experiment);
            let m = r.and_then(|r| r.metrics.iter().find(|m| m.name == v.metric));
            v.run_to_run = m.and_then(|m| m.run_to_run);
            found |= v.run_to_run.is_some();
        }
    }
    found
}

/// `--since DATE`: a civil date (midnight UTC) or an RFC 3339 timestamp, as ns.
fn parse_since(text: &str) -> anyhow::Result<i64> {
    let at = text
        .parse::<jiff::Timestamp>()
        .or_else(|_| {
            text.parse::<jiff::civil::Date>()
                .and_then(|d| d.to_zoned(jiff::tz::TimeZone::UTC))
                .map(|z| z.timestamp())
        })
        .map_err(|_| {
            UsageError(format!(
                "--since {text} is not a date; write e.g. 2026-11-01 or 2026-11-01T08:00:00Z"
            ))
        })?;
    Ok(i64::try_from(at.as_nanosecond()).unwrap_or(i64::MAX))
}

/// Keeps the metrics whose experiment id or `EXPERIMENT/METRIC` matches `pattern`.
fn keep_matching(data: &mut FleetData, pattern: &str) -> anyhow::Result<()> {
    // `*` is any text and `?` one character: the glob of `calls -e`.
    let matches = |e: &str, m: &str| glob(pattern, e) || glob(pattern, &format!("{e}/{m}"));
    data.values.retain(|v| matches(&v.experiment, &v.metric));
    if let Some(spreads) = &mut data.spreads {
        spreads.retain(|s| matches(&s.experiment, &s.metric));
    }
    if data.values.is_empty() {
        return Err(UsageError(format!(
            "--metric {pattern} matches no metric of the fleet; give an experiment id such as \
             os.syscall, a pattern such as 'os.*', or EXPERIMENT/METRIC"
        ))
        .into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::parse_since;

    #[test]
    fn since_takes_dates_and_timestamps() {
        let day = parse_since("2026-11-22").unwrap();
        assert_eq!(day, 1_795_305_600_000_000_000);
        assert_eq!(
            parse_since("2026-11-22T18:32:42Z").unwrap(),
            1_795_372_362_000_000_000
        );
        let e = parse_since("last week").unwrap_err().to_string();
        assert!(e.contains("2026-11-01"), "{e}");
    }
}
