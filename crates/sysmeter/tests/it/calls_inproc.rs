//! `sysmeter calls` through its in-process backend (the default for launched, dynamically
//! linked programs; no root needed): exact counts on a single-threaded loop and per thread
//! on a 4-thread BIND_NOW program, raw clone() children as their own threads and processes,
//! 600 threads for 512 slots said first and never "exact", a forked child that execs another program with `-f`, a
//! program that closes every file descriptor, a C++ exception and a longjmp out of qsort's
//! comparison function that must end as they do without sysmeter, malloc's time against
//! the program's own timing, a stripped PIE, a static program refused with its reason, and
//! `--duration` reading the counts so far. Fixtures need a C compiler (`cc`; the C++ one `c++`).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support::cmd::{calls_ok, plain_stdout, usage_error};
use crate::support::needs::build_fixture;
use crate::support::skip::Missing;
use crate::support::{compile_fixture, fixture_arg, need, path_arg};

const SELECT: [&str; 2] = ["-e", "malloc,free,strlen,time"];

/// Runs `calls ARGS -- CMD` (in process); the run and the command's stdout.
fn inproc(args: &[&str], cmd: &[&str], dir: &Path) -> (Value, String) {
    let (run, output) = calls_ok(&["--backend", "inproc", "--no-store"], args, cmd, dir);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("backend: inproc"), "{stderr}");
    (run, String::from_utf8_lossy(&output.stdout).into_owned())
}

fn metric<'a>(run: &'a Value, name: &str) -> Option<&'a Value> {
    run["results"][0]["metrics"]
        .as_array()?
        .iter()
        .find(|m| m["name"] == name)
}

fn count(run: &Value, name: &str) -> u64 {
    metric(run, name).map_or(0, |m| m["summary"]["n"].as_u64().unwrap_or(0))
}

fn finding(run: &Value, key: &str) -> String {
    let all = run["results"][0]["findings"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let f = all.iter().find(|f| f["key"] == key);
    f.map_or(String::new(), |f| {
        f["text"].as_str().unwrap_or("").to_string()
    })
}

fn loop_fixture(dir: &Path) -> Result<PathBuf, Missing> {
    compile_fixture("calls_loop", dir, &[])
}

#[test]
fn the_loop_is_counted_exactly_in_process() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = path_arg(&need!(loop_fixture(dir.path())));
    let (run, _) = inproc(&SELECT, &[&bin, "20000", "0"], dir.path());
    let got = ["malloc", "free", "strlen", "time"].map(|f| count(&run, f));
    assert_eq!(got, [20000, 20000, 20000, 5000], "{run:#}");
    assert!(
        finding(&run, "overhead").contains("empty function"),
        "{run:#}"
    );
    assert!(finding(&run, "total").contains("(exact)"), "{run:#}");
}

/// Children of glibc's raw clone() (no pthread_create, no fork handlers; a CLONE_VM child
/// shares its parent's TLS) are counted as their own threads and processes, each exactly.
#[test]
fn raw_clone_children_are_their_own_threads_and_processes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = need!(fixture_arg("calls_raw_clone", dir.path(), &[]));
    let (run, stdout) = inproc(&["-f", "-e", "strlen"], &[&bin], dir.path());
    let id = |name: &str| crate::locks::field(&stdout, "parent=", name);
    let (parent, thread, shared, copy) = (id("parent"), id("thread"), id("shared"), id("copy"));
    let threads = finding(&run, "per_thread");
    for (pid, tid, n) in [
        (&parent, &parent, 1000),
        (&parent, &thread, 3000),
        (&shared, &shared, 5000),
        (&copy, &copy, 7000),
    ] {
        let entry = format!("{pid}/{tid}: strlen {n}");
        assert!(threads.contains(&entry), "{entry} in {threads}");
    }
    assert_eq!(count(&run, "strlen"), 16000, "{run:#}");
}

/// 600 threads, all alive at once, for 512 slots: the threads not counted are the first
/// finding, and the total never says "exact".
#[test]
fn threads_not_counted_come_first_and_the_counts_are_not_exact() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = need!(fixture_arg("calls_many_threads", dir.path(), &["-pthread"]));
    let (run, _) = inproc(&["-e", "malloc,free"], &[&bin, "600"], dir.path());
    let findings = run["results"][0]["findings"].as_array().expect("findings");
    assert_eq!(findings[0]["key"], "lost", "{findings:#?}");
    let lost = findings[0]["value"].as_f64().expect("how many");
    // The library's calibration and the main thread take slots too.
    assert!((80.0..=100.0).contains(&lost), "{lost} threads lost");
    let counted = count(&run, "malloc");
    assert!((5000..6000).contains(&counted), "{counted} mallocs");
    let total = finding(&run, "total");
    assert!(!total.contains("exact"), "{total}");
    assert!(
        total.contains(&format!("{lost} thread(s) not counted")),
        "{total}"
    );
}

#[test]
fn bind_now_threads_are_counted_exactly_per_thread() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = need!(crate::calls::bind_now_fixture(dir.path()));
    let (run, _) = inproc(&SELECT, &[&path_arg(&bin), "2000"], dir.path());
    let got = ["malloc", "free", "strlen", "time"].map(|f| count(&run, f));
    assert_eq!(got, [8000, 8000, 8000, 800], "{run:#}");
    let threads = finding(&run, "per_thread");
    assert_eq!(threads.matches("malloc 2000").count(), 4, "{threads}");
    assert_eq!(threads.matches("time 200").count(), 4, "{threads}");
}

#[test]
fn an_exec_in_a_forked_child_is_counted_with_f_only() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = path_arg(&need!(loop_fixture(dir.path())));
    let cmd = [bin.as_str(), "1000", "0", "exec", bin.as_str()];
    let e = ["-e", "malloc,free"];
    let (with, _) = inproc(&[e[0], e[1], "-f"], &cmd, dir.path());
    assert_eq!(count(&with, "malloc"), 2000, "{with:#}");
    let (without, _) = inproc(&e, &cmd, dir.path());
    assert_eq!(count(&without, "malloc"), 1000, "{without:#}");
}

#[test]
fn a_program_that_closes_every_descriptor_is_still_counted() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = path_arg(&need!(loop_fixture(dir.path())));
    let (run, _) = inproc(&SELECT, &[&bin, "1000", "0", "closefds"], dir.path());
    assert_eq!(count(&run, "free"), 1000, "{run:#}");
}

/// [`inproc`] of CMD, whose stdout must be the one it prints without sysmeter: the run and
/// that stdout.
fn inproc_as_plain(args: &[&str], cmd: &[&str], dir: &Path) -> (Value, String) {
    let (run, stdout) = inproc(args, cmd, dir);
    assert_eq!(stdout, plain_stdout(cmd));
    (run, stdout)
}

/// Every call of qsort, malloc and free timed.
const QSORT_TIMED: [&str; 3] = ["-e", "qsort,malloc,free", "--time-every-call"];

#[test]
fn a_longjmp_out_of_qsort_ends_as_without_sysmeter() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = need!(fixture_arg("calls_qsort_jmp", dir.path(), &[]));
    let cmd = [bin.as_str(), "500"];
    let (run, _) = inproc_as_plain(&QSORT_TIMED, &cmd, dir.path());
    assert_eq!(count(&run, "qsort"), 500, "{run:#}");
    let qsort = metric(&run, "qsort").expect("qsort");
    // Every qsort was left by longjmp: counted, never timed, and no time is made up.
    assert!(
        qsort["note"]
            .as_str()
            .unwrap_or("")
            .contains("no call timed"),
        "{qsort}"
    );
    assert_eq!(count(&run, "malloc"), 500, "{run:#}");
}

fn cxx_fixture(dir: &Path) -> Result<PathBuf, Missing> {
    build_fixture(
        "c++",
        &["-O1", "-g"],
        "calls_throw.cc",
        dir.join("calls_throw"),
    )
}

#[test]
fn a_cxx_exception_through_qsort_ends_as_without_sysmeter() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = path_arg(&need!(cxx_fixture(dir.path())));
    let cmd = [bin.as_str(), "200"];
    let (run, stdout) = inproc_as_plain(&QSORT_TIMED, &cmd, dir.path());
    assert!(stdout.contains("caught 200 of 200"), "{stdout}");
    assert_eq!(count(&run, "qsort"), 200, "{run:#}");
}

#[test]
fn malloc_time_agrees_with_the_programs_own_or_is_bounded() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = path_arg(&need!(loop_fixture(dir.path())));
    let cmd = [bin.as_str(), "50000", "1000000"];
    // The program's own timing, at its least disturbed of seven runs (with three, 5 of 8
    // runs at load 10 saw all three inflated 2-3x; with seven, 10 of 10 passed under
    // `stress-ng --cpu 2`).
    let pair = (0..7)
        .map(|_| {
            let own = plain_stdout(&cmd);
            let ns: Option<f64> = own
                .trim()
                .strip_prefix("pair_ns ")
                .and_then(|v| v.parse().ok());
            ns.unwrap_or_else(|| panic!("{own}"))
        })
        .fold(f64::INFINITY, f64::min);
    let (run, _) = inproc(&["-e", "malloc,free"], &cmd, dir.path());
    let m = metric(&run, "malloc").expect("malloc");
    let median = m["summary"]["median"].as_f64().expect("median");
    let note = m["note"].as_str().unwrap_or("");
    let truth = pair / 2.0;
    // Wide margins: a loaded 2-CPU machine moves both timings (the program's own figure
    // went from 20 to 64 ns per pair between runs under stress-ng; the bound contained the
    // least disturbed of seven in every run measured, the factor 2 is for the rest).
    if note.contains("below resolution") {
        assert!(
            median >= truth / 2.0,
            "bound {median} ns vs {truth} ns: {note}"
        );
    } else {
        assert!(
            median > 0.0 && median <= truth * 3.0 && median >= truth / 3.0,
            "{median} vs {truth}"
        );
    }
}

#[test]
fn a_stripped_pie_is_counted_in_process() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = need!(compile_fixture(
        "calls_loop",
        dir.path(),
        &["-fPIE", "-pie"]
    ));
    let stripped = Command::new("strip").arg(&bin).status();
    assert!(stripped.is_ok_and(|s| s.success()), "strip failed");
    let (run, _) = inproc(&SELECT, &[&path_arg(&bin), "1000", "0"], dir.path());
    let got = ["malloc", "free", "strlen", "time"].map(|f| count(&run, f));
    assert_eq!(got, [1000, 1000, 1000, 250], "{run:#}");
}

#[test]
fn a_static_program_cannot_be_counted_in_process_and_says_why() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = need!(compile_fixture("calls_loop", dir.path(), &["-static"]));
    let calls = ["calls", "--backend", "inproc", "--no-store", "--"];
    usage_error(
        crate::support::sysmeter()
            .args(calls)
            .arg(&bin)
            .args(["10", "0"]),
        &["statically linked", "--backend uprobe"],
    );
}

#[test]
fn duration_reads_the_counts_so_far_and_says_so() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = path_arg(&need!(loop_fixture(dir.path())));
    let (run, _) = inproc(
        &["-e", "malloc", "--duration", "200ms"],
        &[&bin, "50000000", "0"],
        dir.path(),
    );
    let n = count(&run, "malloc");
    assert!(n > 0 && n < 50_000_000, "{n}");
    assert!(finding(&run, "ended").contains("--duration"), "{run:#}");
}

#[test]
fn signal_handlers_calling_hooked_functions_keep_counts_exact() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = need!(fixture_arg("calls_signals", dir.path(), &[]));
    let cmd = [bin.as_str(), "2000000"];
    let e = ["-e", "malloc,free,strlen,getpid", "--time-every-call"];
    let (run, _) = inproc_as_plain(&e, &cmd, dir.path());
    assert_eq!(count(&run, "malloc"), 2_000_000, "{run:#}");
    // The handler calls strlen and getpid once per signal.
    let handled = count(&run, "getpid");
    assert_eq!(count(&run, "strlen"), 2_000_000 + handled, "{run:#}");
}
