//! A real two-round `--quick` bench of the experiments whose findings quote their metrics
//! (`os.task`'s process create, `mem.latency`'s levels, `cpu.ops`, `cpu.timer`,
//! `os.lookup`, `ipc.pipe`, `ipc.tcp`, `fs.write`), read by the page checker
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
    // Each experiment with a finding that quotes its metrics.
    let quoting_findings = [
        ("cpu.ops", "div_vs_add"),
        ("cpu.timer", "clocks_without_syscall"),
        ("os.task", "process_vs_thread_creation"),
        ("os.lookup", "path_search"),
        ("mem.latency", "hierarchy."),
        ("ipc.pipe", "bandwidth_placement"),
        ("ipc.tcp", "connect_vs_round_trip"),
        ("fs.write", "small_sync_write"),
    ];
    let only = quoting_findings.map(|(id, _)| id.to_string());
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
    for r in &quoting {
        let (_, key) = (quoting_findings.iter().find(|(id, _)| *id == r.id))
            .unwrap_or_else(|| panic!("{} was not asked for", r.id));
        let quoted = r.findings.iter().filter(|f| f.key.starts_with(key));
        assert!(quoted.count() > 0, "{}: no finding {key}…", r.id);
    }
    let mismatches = truth::every_page_of(&run);
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}
