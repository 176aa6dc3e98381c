//! Integration tests of `sysmeter profile --off-cpu` and `--both`, on C fixtures built by
//! the tests: `spin()` ~300 ms then `nap()` ~300 ms (≥ 90% of off-CPU time in `nap`, and
//! `--both` accounts for ≥ 90% of the thread's wall time); O_DIRECT reads in `read_blocks()`
//! (class disk I/O, `read_blocks` on the stack); a pipe consumer woken by its producer
//! (the waker's stack holds `produce` and the `write`); attaching with `-p` 20 times leaves
//! the target running. The shares are fractions of what the run itself measured: the
//! fixtures' times vary with the machine's load, their split does not.
//!
//! Each test runs on both backends (`--backend perf` and `--backend bpf`: a module per test
//! with a `perf` and a `bpf` test). Needs root (scheduler tracepoints; capability
//! `tracepoints`; the in-kernel backend also capability `bpf`) and `cc` (capability `cc`).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::needs::{bpf, off_cpu};
use crate::support::skip::Missing;
use crate::support::{compile_fixture, median, need, result, skip, sysmeter};

// `test_name::perf` and `test_name::bpf`: the test function on each backend, each holding
// the scheduler events and the CPUs.
crate::support::each_backend!(
    hold crate::support::observing_alone(&[crate::support::Event::Sched]);
    [perf, bpf];
    sleeping_time_is_charged_to_nap,
    both_accounts_for_the_wall_time_of_the_thread,
    direct_reads_wait_for_the_disk_in_read_blocks,
    the_consumer_is_woken_by_the_producers_write,
    attaching_twenty_times_leaves_the_target_running
);

fn compile(dir: &Path, name: &str, backend: &str) -> Result<PathBuf, Missing> {
    match backend {
        "bpf" => bpf()?,
        _ => off_cpu()?,
    }
    compile_fixture(name, dir, &["-pthread"])
}

/// Runs `profile --backend BACKEND ARGS… --format json --out FILE` and returns (run
/// record, exit code).
fn profile(dir: &Path, backend: &str, args: &[&str]) -> (Value, Option<i32>) {
    let out = dir.join("run.json");
    let status = sysmeter()
        .args(["profile", "--backend", backend])
        .args(["--no-store", "--format", "json", "--out"])
        .arg(&out)
        .args(args)
        .output()
        .expect("run sysmeter");
    let text = std::fs::read(&out)
        .unwrap_or_else(|_| panic!("no report: {}", String::from_utf8_lossy(&status.stderr)));
    (
        serde_json::from_slice(&text).expect("JSON report"),
        status.status.code(),
    )
}

/// Compiles `fixture` into a new directory and runs `profile --backend BACKEND MODE --
/// <fixture>` on it (`MODE` is `--off-cpu` or `--both`), which must succeed: the directory
/// and the run record.
fn profile_fixture(
    fixture: &str,
    backend: &str,
    mode: &str,
) -> Result<(tempfile::TempDir, Value), Missing> {
    let dir = tempfile::tempdir().expect("tempdir");
    let prog = compile(dir.path(), fixture, backend)?;
    let (run, code) = profile(
        dir.path(),
        backend,
        &[mode, "--", prog.to_str().expect("path")],
    );
    assert_eq!(code, Some(0), "{run}");
    Ok((dir, run))
}

/// The `blocked stacks` artifact of the `offcpu` result.
pub(crate) fn stacks(run: &Value) -> Vec<Value> {
    let off = result(run, "offcpu");
    let text = off["artifacts"]
        .as_array()
        .and_then(|a| a.iter().find(|x| x["name"] == "blocked stacks"))
        .and_then(|x| x["content"].as_str())
        .unwrap_or_else(|| panic!("no blocked stacks in {off}"));
    serde_json::from_str(text).expect("blocked stacks JSON")
}

fn frames(stack: &Value, key: &str) -> Vec<String> {
    stack[key]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f.as_str().map(str::to_string))
        .collect()
}

fn blocked_ns(stack: &Value) -> f64 {
    stack["blocked_ns"].as_f64().unwrap_or(0.0)
}

fn sleeping_time_is_charged_to_nap(backend: &str) {
    let (_dir, run) = need!(profile_fixture("offcpu_spinnap", backend, "--off-cpu"));
    let total = median(result(&run, "offcpu"), "off-CPU time").expect("off-CPU time");
    let list = stacks(&run);
    let in_nap: f64 = list
        .iter()
        .filter(|s| frames(s, "frames").iter().any(|f| f == "nap"))
        .map(blocked_ns)
        .sum();
    assert!(total > 0.0, "{run}");
    assert!(
        in_nap / total >= 0.9,
        "nap has {in_nap} of {total} ns: {list:?}"
    );
    let top = &list[0];
    assert_eq!(top["reason"], "sleep", "{top}");
    assert_eq!(top["caller"], "nap", "{top}");
    // Timer wake-ups come from an interrupt, not from a thread of the program. The waking
    // record of this one wake-up is sometimes not matched (twice in about 40 runs, with no
    // lost records; docs/offcpu.md, limits): then it must say "not seen", never a thread of
    // the program. The pipe test checks a waker inside the program.
    let who = top["wakers"][0]["who"].as_str().unwrap_or_default();
    assert!(
        who.starts_with("kernel") || who == "not seen",
        "woken by {who:?}: {top}"
    );
}

/// Whether the run says that another process's BPF program hid sched_switch from perf (a
/// `--backend bpf` test of another checkout running at the same time does).
fn hidden_by_another_bpf_program(run: &Value) -> bool {
    result(run, "offcpu")["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|f| {
            f["text"]
                .as_str()
                .is_some_and(|t| t.contains("hides that tracepoint"))
        })
}

fn both_accounts_for_the_wall_time_of_the_thread(backend: &str) {
    let (_dir, run) = need!(profile_fixture("offcpu_spinnap", backend, "--both"));
    if hidden_by_another_bpf_program(&run) {
        skip!(
            Tracepoints,
            "another BPF program on sched_switch hid it from perf (sysmeter said so)"
        );
    }
    let covered =
        median(result(&run, "offcpu"), "wall covered, lowest thread (%)").expect("coverage metric");
    assert!(covered >= 90.0, "covered {covered}%: {run}");
    assert!(
        covered <= 110.0,
        "covered {covered}%: more than the wall time"
    );
    let on = result(&run, "profile");
    let names: Vec<&str> = on["artifacts"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|a| a["name"].as_str())
        .collect();
    assert!(
        names.contains(&"flamegraph") && names.contains(&"off-cpu flamegraph"),
        "{names:?}"
    );
    assert!(median(result(&run, "profile.flat"), "spin").is_some_and(|n| n > 0.0));
}

fn direct_reads_wait_for_the_disk_in_read_blocks(backend: &str) {
    let dir = tempfile::tempdir().expect("tempdir");
    let prog = need!(compile(dir.path(), "offcpu_direct", backend));
    // O_DIRECT needs a real file system: tmpfs refuses it.
    let data = tempfile::tempdir_in("/var/tmp").expect("dir on /var/tmp");
    let args = [
        "--off-cpu",
        "--",
        prog.to_str().expect("path"),
        data.path().to_str().expect("dir"),
    ];
    let (run, code) = profile(dir.path(), backend, &args);
    if code == Some(77) {
        skip!(Disk, "O_DIRECT is refused on /var/tmp's file system");
    }
    assert_eq!(code, Some(0), "{run}");
    let list = stacks(&run);
    let through: Vec<&Value> = list
        .iter()
        .filter(|s| frames(s, "frames").iter().any(|f| f == "read_blocks"))
        .collect();
    assert!(
        !through.is_empty(),
        "no stack through read_blocks: {list:?}"
    );
    let all: f64 = through.iter().map(|s| blocked_ns(s)).sum();
    let disk: Vec<&&Value> = through.iter().filter(|s| s["reason"] == "disk").collect();
    let disk_ns: f64 = disk.iter().map(|s| blocked_ns(s)).sum();
    assert!(
        disk_ns / all >= 0.9,
        "disk {disk_ns} of {all} ns: {through:?}"
    );
    // Every time the thread slept in read_blocks (the kernel's count, from the fixture) is a
    // disk wait there: how many there are depends on the device and the load.
    let count: u64 = disk.iter().filter_map(|s| s["count"].as_u64()).sum();
    let slept: u64 = std::fs::read_to_string(data.path().join("sleeps"))
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .expect("the fixture writes its sleep count");
    assert!(
        slept > 0 && count * 10 >= slept * 9 && count <= slept + 2,
        "{count} disk waits in read_blocks, the kernel counted {slept} sleeps: {through:?}"
    );
}

fn the_consumer_is_woken_by_the_producers_write(backend: &str) {
    let (_dir, run) = need!(profile_fixture("offcpu_pipe", backend, "--off-cpu"));
    let list = stacks(&run);
    let consumer = list
        .iter()
        .find(|s| s["caller"] == "consume")
        .unwrap_or_else(|| panic!("no stack in consume: {list:?}"));
    assert_eq!(consumer["reason"], "pipe", "{consumer}");
    let waker = &consumer["wakers"][0];
    assert!(
        waker["who"]
            .as_str()
            .is_some_and(|w| w.starts_with("thread ")),
        "{waker}"
    );
    let stack = frames(waker, "stack");
    assert!(
        stack.iter().any(|f| f == "produce"),
        "waker stack {stack:?}"
    );
    assert!(
        stack.iter().any(|f| f.contains("write")),
        "waker stack {stack:?}"
    );
    let woken_by_producer = waker["count"].as_u64().unwrap_or(0) as f64;
    let count = consumer["count"].as_u64().unwrap_or(1) as f64;
    assert!(woken_by_producer / count >= 0.9, "{consumer}");
}

fn attaching_twenty_times_leaves_the_target_running(backend: &str) {
    let dir = tempfile::tempdir().expect("tempdir");
    let prog = need!(compile(dir.path(), "offcpu_spinnap", backend));
    let mut child = std::process::Command::new(&prog)
        .arg("forever")
        .spawn()
        .expect("start fixture");
    let pid = child.id().to_string();
    let mut napped = 0;
    for round in 0..20 {
        let (run, code) = profile(
            dir.path(),
            backend,
            &["--off-cpu", "--duration", "0.3", "-p", &pid],
        );
        assert_eq!(code, Some(0), "round {round}: {run}");
        let running = child.try_wait().expect("try_wait").is_none();
        assert!(running, "the target died after attach {round}");
        napped += usize::from(stacks(&run).iter().any(|s| s["caller"] == "nap"));
    }
    let _ = child.kill();
    let _ = child.wait();
    // A 0.3 s window holds several 20 ms naps: nearly every round must see one. On a loaded
    // 2-CPU machine a round's window can start late or a copy be lost (17 of 20 seen once
    // under stress-ng --cpu 2), so 16 is the bar; a broken attach or unwind sees none.
    assert!(napped >= 16, "nap seen in {napped} of 20 rounds");
}
