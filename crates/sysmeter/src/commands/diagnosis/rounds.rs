//! The one record of a diagnosis observed in several rounds (`--rounds N`): the last round's
//! record, each result carrying every round's aggregation (`model::tally`, its `rounds`
//! artifact, read by `compare`) and a finding of how many rounds were made. A run of one
//! round is never passed here, so its record looks as it always did.

use anyhow::Context;

use super::Diagnosed;
use crate::model::tally::{self, Tally};
use crate::model::{Finding, Status};

/// The key of the finding that says how many rounds a result was observed in.
pub const ROUNDS_FINDING: &str = "rounds";

/// One record of the rounds `kept` (in round order) of `planned`.
pub(super) fn merged(kept: Vec<Diagnosed>, planned: u32) -> anyhow::Result<Diagnosed> {
    let made = kept.len();
    let per_round: Vec<Vec<(String, Tally)>> = kept
        .iter()
        .map(|d| {
            let results = d.run.results.iter();
            results
                .filter_map(|r| Some((r.id.clone(), tally::of(r)?)))
                .collect()
        })
        .collect();
    let failed = kept.iter().any(|d| d.failed);
    let mut last = kept.into_iter().last().context("no round was observed")?;
    last.failed |= failed;
    for r in last.run.results.iter_mut() {
        let rounds: Vec<Tally> = per_round
            .iter()
            .filter_map(|round| round.iter().find(|(id, _)| *id == r.id))
            .map(|(_, t)| t.clone())
            .collect();
        if rounds.len() < 2 || r.status != Status::Ok {
            continue;
        }
        r.artifacts.extend(tally::rounds_artifact(&rounds));
        r.findings.push(finding(rounds.len(), made, planned));
    }
    Ok(last)
}

/// The finding of a result kept from `kept` rounds of the `made` of `planned`.
fn finding(kept: usize, made: usize, planned: u32) -> Finding {
    let short = match made < planned as usize {
        true => format!(" of {planned} planned (the run ended before the rest)"),
        false => String::new(),
    };
    Finding::new(
        ROUNDS_FINDING,
        format!(
            "Observed in {kept} rounds{short}: the tables show the last round; `sysmeter \
             compare` judges changes against the spread between the rounds."
        ),
        Some(kept as f64),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::observe::session::CommandState;
    use crate::model::fixture::folded_profile;
    use crate::model::{RunConfig, RunKind, RunRecord};

    fn round(folded: &str) -> Diagnosed {
        let r = folded_profile(folded);
        let host = crate::model::fixture::sample_run().host;
        let mut run = RunRecord::new(RunKind::Profile, 0, host, RunConfig::default());
        run.results.push(r);
        Diagnosed::new(run, CommandState::Exited(0))
    }

    #[test]
    fn every_round_is_kept_in_the_last_record() {
        let kept = vec![
            round("main;f 3\n"),
            round("main;f 5\n"),
            round("main;f 7\n"),
        ];
        let merged = merged(kept, 4).unwrap();
        let r = &merged.run.results[0];
        let rounds = tally::rounds(r);
        let f: Vec<f64> = rounds
            .iter()
            .map(|t| t.tables[0].rows["main;f"].value)
            .collect();
        assert_eq!(f, [3.0, 5.0, 7.0]);
        let said = r.findings.iter().find(|f| f.key == ROUNDS_FINDING).unwrap();
        assert!(said.text.contains("3 rounds of 4 planned"), "{}", said.text);
    }
}
