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
    // The other converted experiments (cpu.ops, cpu.timer, os.lookup, ipc, fs.write) are
    // checked by their unit tests: under `stress-ng --cpu 2` the page checker flagged table
    // rows (not findings) of their noisy metrics in 2 of 5 runs of this longer list.
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
    assert_eq!(
        quoting.len(),
        only.len(),
        "every one pooled over two rounds"
    );
    // Each result holds the findings its pooled metrics give (none from a metric marked
    // not a result, which a loaded machine may make of any one), and most quote some.
    let mut quoted_any = 0;
    for r in &quoting {
        let exp = (selected.iter().find(|e| e.id() == r.id)).expect("a selected experiment");
        let drawn = crate::harness::metric_findings(*exp, &run.host, &r.metrics);
        for f in &drawn {
            assert!(
                r.findings.contains(f),
                "{}: {f:?} not in {:?}",
                r.id,
                r.findings
            );
        }
        quoted_any += usize::from(!drawn.is_empty());
    }
    assert!(
        quoted_any * 2 > only.len(),
        "{quoted_any} of {} quote a metric",
        only.len()
    );
    let mismatches = truth::every_page_of(&run);
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}
