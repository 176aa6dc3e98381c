//! Integration tests of what the two off-CPU backends add: the in-kernel backend (`--backend
//! bpf`, picked by `auto` where it may run) charges known sleeps to the right functions with
//! exact counts and totals inside the sleeps' own wall time (fixture `offcpu_naps`, which
//! prints them), also in a child of the command — a sleep whose switch the kernel did not
//! report may be missing only when the run counts it as lost; the perf backend, made to lose records (a two-thread pipe ping-pong on one
//! CPU with sysmeter at the lowest priority, so it cannot drain the rings in time), says so
//! right under the title, with the share lost.
//!
//! Needs root (capabilities `tracepoints` and `bpf`), `cc` (capability `cc`), and for the
//! second taskset(1) from util-linux (capability `script`, the same package) and nice(1).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::blinder::{NAME as BLINDER, blind};
use crate::support::needs::{bpf, off_cpu};
use crate::support::skip::Missing;
use crate::support::starved::{Starved, says_lost_under_title};
use crate::support::{Event, compile_fixture, need, sysmeter};

/// (calls, wall ns of its sleeps) per function, as the naps fixture prints them.
pub(crate) fn printed(stdout: &str, function: &str) -> (u64, f64) {
    let line = stdout
        .lines()
        .find(|l| l.starts_with(function))
        .unwrap_or_else(|| panic!("no {function} in {stdout:?}"));
    let f: Vec<&str> = line.split_whitespace().collect();
    (f[1].parse().expect("calls"), f[2].parse().expect("wall ns"))
}

/// `profile --off-cpu` (backend auto) on `prog`: the JSON report and the program's stdout.
fn auto_run(dir: &Path, prog: &Path) -> (Value, String) {
    let out = dir.join("run.json");
    let done = sysmeter()
        .args([
            "profile",
            "--off-cpu",
            "--no-store",
            "--format",
            "json",
            "--out",
        ])
        .arg(&out)
        .arg("--")
        .arg(prog)
        .output()
        .expect("run sysmeter");
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert!(
        stderr.starts_with("off-CPU backend: bpf"),
        "auto picks the in-kernel backend here: {stderr}"
    );
    assert_eq!(done.status.code(), Some(0), "{stderr}");
    let run: Value = serde_json::from_slice(&std::fs::read(&out).expect("report")).expect("JSON");
    let stdout = String::from_utf8_lossy(&done.stdout);
    (run, stdout.into_owned())
}

/// The naps fixture built in `dir`, where the in-kernel backend may run.
fn naps(dir: &Path) -> Result<PathBuf, Missing> {
    bpf()?;
    compile_fixture("offcpu_naps", dir, &[])
}

/// The intervals the run reports as lost.
pub(crate) fn lost(run: &Value) -> u64 {
    let off = crate::support::record::result(run, "offcpu");
    crate::support::record::median(off, "lost records").expect("lost records") as u64
}

#[test]
fn the_in_kernel_backend_charges_known_sleeps_exactly() {
    let _alone = crate::support::observing_alone(&[crate::support::Event::Sched]);
    let dir = tempfile::tempdir().expect("tempdir");
    let prog = need!(naps(dir.path()));
    let (run, stdout) = auto_run(dir.path(), &prog);
    let stacks = crate::offcpu::stacks(&run);
    // Under heavy load the kernel now and then reports no switch-in (or no switch-out) of a
    // sleep: bpftrace misses the same ones. An interval that cannot be closed at its waking
    // must then be counted as lost, never silently missing.
    let lost = lost(&run);
    let mut missing = 0;
    for (function, asked_ns) in [("nap_short", 200e6), ("nap_long", 200e6)] {
        let (calls, wall) = printed(&stdout, function);
        let here: Vec<&Value> = stacks.iter().filter(|s| s["caller"] == function).collect();
        let count: u64 = here.iter().filter_map(|s| s["count"].as_u64()).sum();
        let ns: f64 = here.iter().filter_map(|s| s["blocked_ns"].as_f64()).sum();
        assert!(count <= calls, "{function}: {here:?}");
        missing += calls - count;
        let asked_here = asked_ns * count as f64 / calls as f64;
        assert!(
            ns >= asked_here * 0.999 && ns <= wall,
            "{function}: {ns} ns blocked, asked {asked_here}, its sleeps took {wall}: {here:?}"
        );
        assert!(here.iter().all(|s| s["reason"] == "sleep"), "{here:?}");
        assert!(
            here.iter().all(|s| s["frames"]
                .as_array()
                .is_some_and(|f| f.iter().any(|x| x == "main"))),
            "the stack reaches main: {here:?}"
        );
    }
    assert!(
        missing <= lost,
        "{missing} sleeps not charged, {lost} reported lost: {stacks:?}"
    );
    if missing > 0 {
        eprintln!("note: {missing} sleeps lost by the kernel and reported as lost");
    }
}

#[test]
fn the_in_kernel_backend_follows_children() {
    let _alone = crate::support::observing_alone(&[crate::support::Event::Sched]);
    let dir = tempfile::tempdir().expect("tempdir");
    let prog = need!(naps(dir.path()));
    let out = dir.path().join("run.json");
    // `; true` keeps the shell from exec'ing the program itself: it forks a child.
    let script = format!("{} ; true", prog.display());
    let done = sysmeter()
        .args(["profile", "--off-cpu", "--backend", "bpf", "--no-store"])
        .args(["--format", "json", "--out"])
        .arg(&out)
        .args(["--", "sh", "-c", &script])
        .output()
        .expect("run sysmeter");
    assert_eq!(done.status.code(), Some(0));
    let run: Value = serde_json::from_slice(&std::fs::read(&out).expect("report")).expect("JSON");
    let stacks = crate::offcpu::stacks(&run);
    let count: u64 = stacks
        .iter()
        .filter(|s| s["caller"] == "nap_short")
        .filter_map(|s| s["count"].as_u64())
        .sum();
    // As above: a sleep the kernel did not report is counted as lost, never missing.
    let lost = lost(&run);
    assert!(
        count <= 10 && count + lost >= 10,
        "the child's naps: {count}, {lost} lost: {stacks:?}"
    );
    // The shell waits while its child naps: off-CPU time is summed over both, and where the
    // sum exceeds the wall time a finding says why (never two figures that look contradictory).
    let r = crate::support::record::result(&run, "offcpu");
    let metric = |name: &str| {
        r["metrics"]
            .as_array()
            .and_then(|m| m.iter().find(|m| m["name"] == name))
            .and_then(|m| m["summary"]["median"].as_f64())
            .unwrap_or_else(|| panic!("metric {name}: {r}"))
    };
    let (off, wall) = (metric("off-CPU time"), metric("wall time"));
    let summed = r["findings"]
        .as_array()
        .and_then(|f| f.iter().find(|f| f["key"] == "summed"));
    assert_eq!(
        summed.is_some(),
        off > wall,
        "off {off}, wall {wall}: {summed:?}"
    );
    if let Some(f) = summed {
        assert!(
            f["text"]
                .as_str()
                .unwrap_or_default()
                .contains("summed over"),
            "{f}"
        );
    }
}

#[test]
fn a_perf_run_that_lost_records_says_so_under_its_title() {
    let _alone = crate::support::observing_alone(&[crate::support::Event::Sched]);
    need!(off_cpu());
    need!(says_lost_under_title(Starved {
        fixture: "offcpu_pingpong",
        rounds: "100000",
        diagnosis: &["profile", "--off-cpu", "--backend", "perf"],
        title: "sysmeter profile run",
        lost: "records lost (",
    }));
}

/// Whether process `pid` holds a BPF link (a program attached): its fdinfo names a link type.
pub(crate) fn holds_bpf_link(pid: u32) -> bool {
    std::fs::read_dir(format!("/proc/{pid}/fdinfo"))
        .into_iter()
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.ok()?.path()).ok())
        .any(|info| info.contains("link_type:"))
}

/// The texts of the `offcpu` findings of the JSON report at `out`.
fn finding_texts(out: &Path) -> Vec<String> {
    let run: Value = serde_json::from_slice(&std::fs::read(out).expect("report")).expect("JSON");
    let findings = &crate::support::record::result(&run, "offcpu")["findings"];
    findings
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f["text"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn a_perf_run_hidden_by_a_bpf_program_says_so() {
    let _alone = crate::support::observing_alone(&[Event::Sched]);
    let dir = tempfile::tempdir().expect("tempdir");
    let naps = need!(naps(dir.path()));
    // sysmeter's own programs return 1 since issue 42 and hide nothing: a program that
    // returns 0 on sched_switch (an older sysmeter, a bcc tool) is what hides it.
    let beside = need!(blind(Event::Sched, dir.path()));
    let out = dir.path().join("run.json");
    let done = sysmeter()
        .args(["profile", "--off-cpu", "--backend", "perf", "--no-store"])
        .args(["--format", "json", "--out"])
        .arg(&out)
        .arg("--")
        .arg(&naps)
        .output()
        .expect("run sysmeter");
    drop(beside);
    assert_eq!(done.status.code(), Some(0));
    let texts = finding_texts(&out);
    assert!(
        texts
            .first()
            .is_some_and(|t| t.contains("hides that tracepoint from perf")),
        "the first finding says why nothing was seen: {texts:?}"
    );
    assert!(
        texts.first().is_some_and(|t| t.contains(BLINDER)),
        "the first finding names what hides it: {texts:?}"
    );
    assert!(
        !texts
            .iter()
            .any(|t| t.starts_with("No thread of the target went off")),
        "an empty recording is not called proof of no blocking: {texts:?}"
    );
}
