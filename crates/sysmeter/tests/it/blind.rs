//! Observing without being blinded, and without blinding anyone (issues 41 and 42). While a
//! neighbour sits on the kernel's tracepoints — bpftrace counting `sys_enter_futex`, a
//! second sysmeter with its in-kernel backends, or a program that returns 0 (the blinder)
//! — each perf mechanism either counts a C fixture's known count or says in its first
//! finding (the line under the report's title) that it was blinded and by what, and never
//! "No lock was contended" beside it: `locks --backend perf` (the `locks_phases` fixture's
//! own count of its contended lock calls and their time), `trace --backend tracepoint`
//! (dd's 20 003 one-byte reads) and `profile --off-cpu --backend perf` (the `offcpu_naps`
//! fixture's own count of its sleeps). Beside sysmeter's own BPF programs, which return 1
//! since issue 42 (docs/bpf.md), a perf reader must count: that is the fix's proof; and
//! `perf stat` on `raw_syscalls:sys_enter` counts the same beside `sysmeter trace --backend
//! bpf` as alone.
//!
//! Needs root, BPF, `cc`, clang (the blinder) and bpftrace (capability `bpftrace`). Every
//! test holds the locks of the events it and its neighbour touch (`support::observing`).

use serde_json::Value;

use crate::support::beside::{Neighbour, beside};
use crate::support::{Event, compile_fixture, json_run, need, observing, sysmeter};

/// Runs `run` while watching tracepoint `tp` for BPF programs held by processes that are
/// not this test's (`ours`: its neighbour's): the tests of another checkout on a shared
/// machine, whose older programs return 0, hide the tracepoint from us partly, which no
/// lock of this suite can prevent. Their descriptions, when any came and went.
fn watching_foreign<R>(tp: &str, ours: &[i32], run: impl FnOnce() -> R) -> (R, Vec<String>) {
    use std::sync::atomic::{AtomicBool, Ordering};
    use sysmeter::diagnose::observe::witness::holders::on_tracepoint;
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        let watcher = s.spawn(|| {
            let mut seen = Vec::new();
            while !done.load(Ordering::Relaxed) {
                for h in on_tracepoint(tp) {
                    let foreign = h.owners.iter().any(|(pid, _)| !ours.contains(pid));
                    let text = format!("{} {:?}", h.name, h.owners);
                    if foreign && !seen.contains(&text) {
                        seen.push(text);
                    }
                }
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            seen
        });
        let out = run();
        done.store(true, Ordering::Relaxed);
        (out, watcher.join().expect("the watcher"))
    })
}

/// The first finding of result `id` when it says the mechanism was blinded: its text.
fn blinded(run: &Value, id: &str) -> Option<String> {
    let first = &crate::support::result(run, id)["findings"][0];
    let text = first["text"].as_str().unwrap_or_default();
    (first["key"] == "lost" && text.starts_with("Blinded: ")).then(|| text.to_string())
}

/// A blinded run names what sits on the tracepoint and claims nothing from its empty source.
fn says_blinded_by(run: &Value, id: &str, text: &str, by: &str, quiet: &str) {
    assert!(text.contains("hides that tracepoint from perf"), "{text}");
    assert!(text.contains(by), "the finding names {by}: {text}");
    let keys = crate::support::finding_keys(&crate::support::result(run, id).clone());
    assert!(
        !keys.iter().any(|k| k == quiet),
        "{quiet} beside a blinded run: {keys:?}"
    );
}

/// A run that says it was blinded (result `id`, and the finding `quiet` it must not make
/// beside it): by the blinder, which it names; never by sysmeter's own programs; or, on a
/// shared machine, by a `foreign` program seen during the run, which is said.
fn judged_blinded(
    run: &Value,
    (id, quiet): (&str, &str),
    text: &str,
    who: Neighbour,
    foreign: &[String],
) {
    if !foreign.is_empty() && !matches!(who, Neighbour::Blinder(_)) {
        eprintln!("note: blinded by foreign BPF programs {foreign:?}: {text}");
        return;
    }
    assert!(
        who != Neighbour::SysmeterBpf,
        "sysmeter blinded {id}: {text}"
    );
    says_blinded_by(run, id, text, named(who), quiet);
}

/// What the holder line names for each neighbour.
fn named(who: Neighbour) -> &'static str {
    match who {
        Neighbour::Bpftrace => "bpftrace",
        Neighbour::SysmeterBpf | Neighbour::SysmeterTrace => "sysmeter",
        Neighbour::Blinder(_) => crate::support::blinder::NAME,
    }
}

/// `locks --backend perf` on the phases fixture beside `who`.
fn locks_perf(who: Neighbour) {
    let _on = observing(&[Event::Futex, Event::Sched]);
    let dir = tempfile::tempdir().expect("tempdir");
    need!(crate::locks::backend_events("perf"));
    let prog = need!(compile_fixture("locks_phases", dir.path(), &["-pthread"]));
    let _beside = need!(beside(who, dir.path()));
    let (run, stdout) = json_run(
        dir.path(),
        &["locks", "--backend", "perf"],
        &[prog.as_os_str()],
    );
    match blinded(&run, "locks") {
        Some(text) => {
            assert!(
                who != Neighbour::SysmeterBpf,
                "sysmeter blinded itself: {text}"
            );
            says_blinded_by(&run, "locks", &text, named(who), "no_contention");
        }
        None => {
            assert!(
                !matches!(who, Neighbour::Blinder(_)),
                "not blinded by the blinder"
            );
            let rows = crate::locks::rows(&run);
            let locks: Vec<_> = rows.iter().filter(|r| r.0.starts_with("lock ")).collect();
            let ns: f64 = locks.iter().map(|r| r.2).sum();
            crate::locks::check_hand_count(&stdout, ns, locks.iter().map(|r| r.1).sum());
        }
    }
}

/// `trace --backend tracepoint` on dd's 20 000 one-byte copies beside `who`: 20 003 reads,
/// or fewer by at most the records the run says it lost.
fn trace_tracepoint(who: Neighbour) {
    let _on = observing(&[Event::Futex, Event::Sched, Event::RawSyscalls]);
    let dir = tempfile::tempdir().expect("tempdir");
    need!(crate::support::needs::tracepoints());
    let beside = need!(beside(who, dir.path()));
    let dd = ["dd", "if=/dev/zero", "of=/dev/null", "bs=1", "count=20000"];
    let argv: Vec<&std::ffi::OsStr> = dd.iter().map(|a| a.as_ref()).collect();
    let args = ["trace", "--backend", "tracepoint"];
    let ((run, _), foreign) = watching_foreign("sys_enter", &beside.pids(), || {
        json_run(dir.path(), &args, &argv)
    });
    match blinded(&run, "trace") {
        Some(text) => judged_blinded(&run, ("trace", "no_calls"), &text, who, &foreign),
        None if !foreign.is_empty() => eprintln!("note: foreign BPF programs: {foreign:?}"),
        None => {
            let reads = crate::support::result(&run, "trace")["metrics"]
                .as_array()
                .and_then(|m| m.iter().find(|m| m["name"] == "read"))
                .and_then(|m| m["summary"]["n"].as_u64());
            // Exact, or short by no more than the records it says it lost (full rings under
            // load, issue 42): a loss is never silent.
            let reads = reads.expect("a read metric");
            let lost = crate::support::result(&run, "trace")["findings"]
                .as_array()
                .and_then(|f| f.iter().find(|f| f["key"] == "lost"))
                .and_then(|f| f["value"].as_f64())
                .unwrap_or(0.0);
            assert!(
                reads == 20_003 || (reads < 20_003 && lost >= (20_003 - reads) as f64),
                "dd's reads: {reads} of 20003, {lost} records lost"
            );
        }
    }
}

/// `profile --off-cpu --backend perf` on the naps fixture beside `who`: every nap charged to
/// its function, or counted as lost.
fn offcpu_perf(who: Neighbour) {
    let _on = observing(&[Event::Futex, Event::Sched]);
    let dir = tempfile::tempdir().expect("tempdir");
    need!(crate::support::needs::off_cpu());
    let prog = need!(compile_fixture("offcpu_naps", dir.path(), &[]));
    let beside = need!(beside(who, dir.path()));
    let args = ["profile", "--off-cpu", "--backend", "perf"];
    let ((run, stdout), foreign) = watching_foreign("sched_switch", &beside.pids(), || {
        json_run(dir.path(), &args, &[prog.as_os_str()])
    });
    match blinded(&run, "offcpu") {
        Some(text) => judged_blinded(&run, ("offcpu", "no_blocking"), &text, who, &foreign),
        None if !foreign.is_empty() => eprintln!("note: foreign BPF programs: {foreign:?}"),
        None => {
            assert!(
                !matches!(who, Neighbour::Blinder(_)),
                "not blinded by the blinder"
            );
            let stacks = crate::offcpu::stacks(&run);
            let lost = crate::offcpu_bpf::lost(&run);
            for function in ["nap_short", "nap_long"] {
                let (calls, _) = crate::offcpu_bpf::printed(&stdout, function);
                let here = stacks.iter().filter(|s| s["caller"] == function);
                let count: u64 = here.filter_map(|s| s["count"].as_u64()).sum();
                assert!(
                    count <= calls && count + lost >= calls,
                    "{function}: {count} of {calls} naps, {lost} lost"
                );
            }
        }
    }
}

/// One test per mechanism and neighbour.
macro_rules! beside_each {
    ($name:ident, $($who:ident => $neighbour:expr),*) => {
        mod $name {
            use crate::support::beside::Neighbour;
            #[allow(unused_imports)]
            use crate::support::Event;
            $(
                #[test]
                fn $who() {
                    super::$name($neighbour);
                }
            )*
        }
    };
}

beside_each!(locks_perf,
    beside_bpftrace => Neighbour::Bpftrace,
    beside_sysmeters_bpf => Neighbour::SysmeterBpf,
    beside_a_blinder => Neighbour::Blinder(Event::Futex));
beside_each!(trace_tracepoint,
    beside_bpftrace => Neighbour::Bpftrace,
    beside_sysmeters_bpf => Neighbour::SysmeterBpf);
beside_each!(offcpu_perf,
    beside_bpftrace => Neighbour::Bpftrace,
    beside_sysmeters_bpf => Neighbour::SysmeterBpf,
    beside_a_blinder => Neighbour::Blinder(Event::Sched));

/// The fix of issue 42: a perf reader of the futex tracepoint still counts while sysmeter's
/// BPF programs sit on it (they return 1). The reader is sysmeter's own perf backend; the
/// count, the fixture's contended lock calls and their time.
#[test]
fn a_perf_reader_still_counts_beside_sysmeters_bpf() {
    let _on = observing(&[Event::Futex, Event::Sched]);
    let dir = tempfile::tempdir().expect("tempdir");
    need!(crate::locks::backend_events("bpf"));
    let prog = need!(compile_fixture("locks_phases", dir.path(), &["-pthread"]));
    let beside = need!(beside(Neighbour::SysmeterBpf, dir.path()));
    let (run, stdout) = json_run(
        dir.path(),
        &["locks", "--backend", "perf"],
        &[prog.as_os_str()],
    );
    // Each sysmeter beside passes on its command's end: killed by SIGTERM, 128 + 15.
    assert_eq!(beside.end(), [Some(143), Some(143)], "the runs beside");
    assert_eq!(blinded(&run, "locks"), None, "sysmeter's BPF blinded perf");
    let observed = crate::support::result(&run, "locks")["findings"]
        .as_array()
        .and_then(|f| f.iter().find(|f| f["key"] == "observed"))
        .and_then(|f| f["value"].as_f64())
        .expect("the observed finding");
    assert!(observed > 0.0, "no futex call reached perf");
    let rows = crate::locks::rows(&run);
    let locks: Vec<_> = rows.iter().filter(|r| r.0.starts_with("lock ")).collect();
    let ns: f64 = locks.iter().map(|r| r.2).sum();
    crate::locks::check_hand_count(&stdout, ns, locks.iter().map(|r| r.1).sum());
}

/// A blinded `locks` says so on the line under its title, in the terminal report.
#[test]
fn a_blinded_locks_run_says_so_under_its_title() {
    let _on = observing(&[Event::Futex]);
    let dir = tempfile::tempdir().expect("tempdir");
    need!(crate::locks::backend_events("perf"));
    let prog = need!(compile_fixture("locks_phases", dir.path(), &["-pthread"]));
    let _beside = need!(beside(Neighbour::Blinder(Event::Futex), dir.path()));
    let out = sysmeter()
        .args(["locks", "--backend", "perf", "--no-store", "--"])
        .arg(&prog)
        .output()
        .expect("sysmeter runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    let title = lines
        .iter()
        .position(|l| l.starts_with("sysmeter locks run"));
    let next = title
        .and_then(|t| lines.get(t + 1))
        .copied()
        .unwrap_or_default();
    assert!(
        next.starts_with("warning: Blinded: "),
        "under the title: {next:?}\n{stderr}"
    );
    assert!(!stderr.contains("No lock was contended"), "{stderr}");
}

/// `perf stat` counting dd's 20 000 one-byte copies on `raw_syscalls:sys_enter` and
/// `syscalls:sys_enter_read`: the two counts.
fn perf_stat_dd() -> Result<[u64; 2], crate::support::skip::Missing> {
    let events = ["raw_syscalls:sys_enter", "syscalls:sys_enter_read"];
    let out = std::process::Command::new("perf")
        .args(["stat", "-x", ",", "-e", events[0], "-e", events[1], "--"])
        .args(["dd", "if=/dev/zero", "of=/dev/null", "bs=1", "count=20000"])
        .output()
        .map_err(|_| {
            crate::support::skip::Missing::new(
                crate::support::skip::Cap::Perf,
                "no perf (apt-get install linux-perf)",
            )
        })?;
    let text = String::from_utf8_lossy(&out.stderr);
    Ok(events.map(|event| {
        text.lines()
            .find(|l| l.split(',').nth(2) == Some(event))
            .and_then(|l| l.split(',').next()?.parse().ok())
            .unwrap_or_else(|| panic!("perf stat counted no {event}: {text}"))
    }))
}

/// The fix of issue 42 for `trace`: `perf stat` on another program counts within 5% of its
/// count alone while `sysmeter trace --backend bpf` sits on `raw_syscalls` (its programs
/// return 1).
#[test]
fn perf_stat_counts_alike_beside_sysmeters_trace() {
    let _on = observing(&[Event::RawSyscalls]);
    need!(crate::support::needs::tracepoints());
    let dir = tempfile::tempdir().expect("tempdir");
    let alone = need!(perf_stat_dd());
    let beside = need!(beside(Neighbour::SysmeterTrace, dir.path()));
    let with = need!(perf_stat_dd());
    assert_eq!(beside.end(), [Some(143)], "the trace beside");
    for (a, w) in alone.iter().zip(with) {
        assert!(
            (w as f64 - *a as f64).abs() <= 0.05 * *a as f64,
            "perf stat alone {alone:?}, beside sysmeter trace {with:?}"
        );
    }
}
