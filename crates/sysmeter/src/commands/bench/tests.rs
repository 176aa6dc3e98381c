//! A real two-round `--quick` bench of the experiments whose findings quote their metrics
//! (`os.task`'s process create, `mem.latency`'s levels), read by the page checker
//! (`report::truth`): every finding must say what the tables and the glance say.

use crate::harness::{Params, Profile, RunObserver, RunOptions, choose_cpu, run_experiments};
use crate::model::{ExperimentResult, RunRecord};
use crate::report::truth;
use crate::{experiments, host};

/// Sees nothing: the test reads the record at the end.
struct Quiet;

impl RunObserver for Quiet {
    fn run_started(&mut self, _: &RunRecord) {}
    fn experiment_started(&mut self, _: usize, _: usize, _: &str) {}
    fn progress(&mut self, _: &str) {}
    fn experiment_finished(&mut self, _: usize, _: &ExperimentResult) {}
}

#[test]
fn the_findings_of_two_quick_rounds_quote_the_pooled_figures() {
    let only = ["os.task", "mem.latency"].map(String::from);
    let selected = experiments::select(&[], &only).expect("known experiments");
    let (cpus, cpu) = choose_cpu(None).expect("a CPU to measure on");
    let opts = RunOptions {
        profile: Profile::quick(),
        cpu: Some(cpu),
        seed: 43,
        params: Params::default(),
        rounds: 2,
    };
    let run = run_experiments(&selected, host::read_host(), &opts, &cpus, cpu, &mut Quiet);
    let quoting: Vec<&ExperimentResult> = (run.results.iter())
        .filter(|r| r.metrics.iter().any(|m| m.rounds.is_some()))
        .collect();
    assert_eq!(quoting.len(), 2, "both pooled over two rounds");
    for r in &quoting {
        let quoted = r.findings.iter().filter(|f| {
            f.key.starts_with("hierarchy.") && f.key.ends_with(".latency_ns")
                || f.key == "process_vs_thread_creation"
        });
        assert!(quoted.count() > 0, "{}: no finding quotes a metric", r.id);
    }
    let mismatches = truth::every_page_of(&run);
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}
