//! `sysmeter trace --backend bpf` (issue 42): the system calls counted in the kernel, so
//! nothing can be lost to a full ring however loaded the machine. dd's 200 000 one-byte
//! copies give exactly 200 003 reads and 200 003 writes alone, while two threads spin on
//! the CPUs (what `stress-ng --cpu 2` does), and with sysmeter starved on dd's CPU; failed
//! calls are counted by errno (the `lookup_path` fixture's `access` calls on an empty fake
//! PATH); and the "backend:" line says which backend ran and why, by `auto` or by name.
//!
//! Capabilities: `bpf` (root, kernel BTF), `cc` (the fixture), `script` (taskset, nice).
//! Every test holds the `raw_syscalls` lock (`support::observing`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::support::needs::bpf;
use crate::support::{Event, compile_fixture, finding, need, observing};
use crate::trace::{calls_of, trace_json};

/// dd copying `count` single bytes from /dev/zero to /dev/null: `count` + 3 reads (the
/// last returns 0, and the loader reads two files) and as many writes.
const DD: [&str; 4] = ["dd", "if=/dev/zero", "of=/dev/null", "bs=1"];

fn dd(count: u64) -> Vec<String> {
    let mut argv: Vec<String> = DD.iter().map(|s| s.to_string()).collect();
    argv.push(format!("count={count}"));
    argv
}

/// `trace --backend bpf` of dd's 200 000 copies: exact reads and writes, nothing lost.
fn dd_exact(dir: &std::path::Path) {
    let argv = dd(200_000);
    let cmd: Vec<&str> = argv.iter().map(String::as_str).collect();
    let (result, _, code) = trace_json(&["--backend", "bpf"], &cmd, dir);
    assert_eq!(code, 0, "{result:#}");
    let reads = calls_of(&result, "read").map(|c| c.0);
    let writes = calls_of(&result, "write").map(|c| c.0);
    let lost = finding(&result, "lost");
    assert_eq!(
        (reads, writes, lost),
        (Some(200_003), Some(200_003), None),
        "dd's reads and writes, and a loss"
    );
    let backend = finding(&result, "backend").expect("the backend finding")["text"].to_string();
    assert!(backend.contains("backend: bpf"), "{backend}");
}

#[test]
fn dd_counts_exactly_in_the_kernel() {
    let _on = observing(&[Event::RawSyscalls]);
    need!(bpf());
    let dir = tempfile::tempdir().expect("tempdir");
    dd_exact(dir.path());
}

/// Two threads that spin until dropped: every CPU of a 2-CPU machine busy, as
/// `stress-ng --cpu 2` makes it.
struct Spinners(Arc<AtomicBool>, Vec<std::thread::JoinHandle<()>>);

impl Spinners {
    fn start(n: usize) -> Spinners {
        let stop = Arc::new(AtomicBool::new(false));
        let threads = (0..n)
            .map(|_| {
                let stop = Arc::clone(&stop);
                std::thread::spawn(move || {
                    let mut x = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
                    }
                })
            })
            .collect();
        Spinners(stop, threads)
    }
}

impl Drop for Spinners {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
        for t in self.1.drain(..) {
            let _ = t.join();
        }
    }
}

#[test]
fn dd_counts_exactly_in_the_kernel_while_two_threads_spin() {
    let _on = observing(&[Event::RawSyscalls]);
    need!(bpf());
    let dir = tempfile::tempdir().expect("tempdir");
    let _load = Spinners::start(2);
    dd_exact(dir.path());
}

/// sysmeter at nice 19 on dd's CPU (dd at nice 0: a `nice -n -19` launcher would add its
/// own reads): the perf ring backends lose records this way (support::starved); the
/// in-kernel counts stay exact.
#[test]
fn dd_counts_exactly_in_the_kernel_with_sysmeter_starved() {
    let _on = observing(&[Event::RawSyscalls]);
    need!(bpf());
    need!(crate::support::starved::taskset_and_nice());
    let out = std::process::Command::new("taskset")
        .args(["-c", "0", "nice", "-n", "19"])
        .arg(assert_cmd::cargo::cargo_bin("sysmeter"))
        .args(["trace", "--backend", "bpf", "--no-store", "--"])
        .args(dd(200_000))
        .output()
        .expect("run taskset");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let row = |name: &str| {
        stderr
            .lines()
            .find(|l| l.split('┆').nth(6).is_some_and(|c| c.trim() == name))
            .and_then(|l| l.split('┆').nth(4).map(|c| c.trim().to_string()))
    };
    assert_eq!(row("read").as_deref(), Some("200003"), "{stderr}");
    assert_eq!(row("write").as_deref(), Some("200003"), "{stderr}");
    assert!(!stderr.contains("warning: Incomplete"), "{stderr}");
}

/// `access` errors of the lookup fixture searching `times` times an empty fake PATH of 5
/// directories: (access calls, ENOENT among them).
fn access_enoent(bin: &str, root: &str, times: u64, dir: &std::path::Path) -> (u64, u64) {
    let times = times.to_string();
    let cmd = [bin, root, "5", times.as_str(), "cmd"];
    let (result, stdout, _) = trace_json(&["--backend", "bpf"], &cmd, dir);
    assert_eq!(stdout, "found 0\n");
    let access = result["metrics"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["name"] == "access"))
        .expect("an access metric");
    let note = access["note"].as_str().unwrap_or_default();
    let enoent = note
        .split("ENOENT×")
        .nth(1)
        .and_then(|t| t.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no ENOENT in {note:?}"));
    (access["summary"]["n"].as_u64().expect("n"), enoent)
}

#[test]
fn failed_calls_are_counted_by_errno_in_the_kernel() {
    let _on = observing(&[Event::RawSyscalls]);
    need!(bpf());
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = need!(compile_fixture("lookup_path", dir.path(), &[]));
    let root = dir.path().join("root");
    for i in 0..5 {
        std::fs::create_dir_all(root.join(format!("p{i}"))).expect("mkdir");
    }
    let (bin, root) = (bin.to_string_lossy(), root.to_string_lossy());
    let few = access_enoent(&bin, &root, 100, dir.path());
    let many = access_enoent(&bin, &root, 300, dir.path());
    assert_eq!(
        (many.0 - few.0, many.1 - few.1),
        (1000, 1000),
        "200 more searches of 5 directories: 1000 more failed access calls ({few:?}, {many:?})"
    );
}

/// The "backend:" line of `trace ARGS -- true`.
fn backend_line(args: &[&str], dir: &std::path::Path) -> String {
    let (result, _, code) = trace_json(args, &["true"], dir);
    assert_eq!(code, 0, "{result:#}");
    finding(&result, "backend").expect("the backend finding")["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn the_backend_line_says_which_backend_ran_and_why() {
    let _on = observing(&[Event::RawSyscalls]);
    need!(bpf());
    let dir = tempfile::tempdir().expect("tempdir");
    let auto = backend_line(&[], dir.path());
    assert!(
        auto.starts_with("backend: bpf (in-kernel aggregation: permitted"),
        "{auto}"
    );
    for name in ["tracepoint", "ptrace"] {
        let line = backend_line(&["--backend", name], dir.path());
        assert!(
            line.starts_with(&format!("backend: {name} (chosen with --backend {name})")),
            "{line}"
        );
    }
}

/// As an unprivileged user `auto` falls back twice, to ptrace, and says why each preferred
/// backend could not run.
#[test]
fn without_privileges_auto_falls_back_to_ptrace_and_says_why() {
    need!(crate::unprivileged::can_run_as_nobody());
    let dir = tempfile::tempdir().expect("tempdir");
    let out =
        crate::unprivileged::as_nobody(dir.path(), &["trace", "--no-store", "--", "/bin/true"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let line = err
        .lines()
        .find(|l| l.contains("backend: "))
        .unwrap_or_else(|| panic!("no backend line: {err}"));
    assert!(line.contains("backend: ptrace (bpf: not root"), "{line}");
    assert!(line.contains("; tracepoint: "), "{line}");
}
