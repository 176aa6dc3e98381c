//! `sysmeter calls -p`: a running fixture (tests/fixtures/programs/calls_counter.c, printing
//! numbered lines built with malloc/strlen/free until its stdin closes) is attached, traced
//! briefly and left by SIGINT — 20 times in a row, then once with `--duration` — and must
//! keep printing every line in order and exit with its own code; afterwards no probe of
//! ours is left in tracefs. Needs root (uprobes) and a C compiler.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

use crate::support::cmd::{interrupt_attached, start_attached};
use crate::support::needs::root;
use crate::support::{compile_fixture, need};

struct Counter {
    child: Child,
    stdin: Option<ChildStdin>,
    out: BufReader<ChildStdout>,
    /// The last line number read.
    last: u64,
}

impl Counter {
    fn start(bin: &Path) -> Counter {
        let mut child = Command::new(bin)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("fixture starts");
        let stdin = child.stdin.take();
        let out = BufReader::new(child.stdout.take().expect("stdout"));
        let mut c = Counter {
            child,
            stdin,
            out,
            last: 0,
        };
        c.read_line();
        c
    }

    /// Reads one line, which must be the next number.
    fn read_line(&mut self) -> String {
        let mut line = String::new();
        self.out.read_line(&mut line).expect("a line");
        if line != "done\n" {
            assert_eq!(
                line,
                format!("line {}\n", self.last + 1),
                "lines out of order"
            );
            self.last += 1;
        }
        line
    }

    /// Closes stdin and reads to the end: every line in order, then `done`, exit code 3.
    fn finish(mut self) {
        drop(self.stdin.take());
        while self.read_line() != "done\n" {}
        let mut rest = String::new();
        self.out.read_to_string(&mut rest).expect("the rest");
        assert_eq!(rest, "", "nothing after done");
        assert_eq!(self.child.wait().expect("fixture ends").code(), Some(3));
    }
}

/// The probes of sysmeter process `pid` left in uprobe_events (other tests may be running
/// sysmeters of their own meanwhile).
fn probes_of(pid: u32) -> Vec<String> {
    // Groups are named `sysmeter_<pid>x<random>`.
    let group = format!(":sysmeter_{pid}x");
    let text = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"]
        .iter()
        .find_map(|b| std::fs::read_to_string(format!("{b}/uprobe_events")).ok())
        .unwrap_or_default();
    text.lines()
        .filter(|l| l.contains(&group))
        .map(String::from)
        .collect()
}

fn start_calls(pid: u32, extra: &[&str], round: usize) -> (Child, BufReader<ChildStderr>, String) {
    let pid = pid.to_string();
    let head = ["calls", "--no-store", "-e", "malloc,free,strlen"];
    let args: Vec<&str> = head
        .iter()
        .chain(extra)
        .chain(&["-p", pid.as_str()])
        .copied()
        .collect();
    start_attached(&args, round)
}

fn attach_once(bin: &Path, round: usize) {
    let mut counter = Counter::start(bin);
    let (mut calls, err, mut report) = start_calls(counter.child.id(), &[], round);
    let before = counter.last;
    // Lines keep coming while probed.
    while counter.last < before + 10 {
        counter.read_line();
    }
    interrupt_attached(&mut calls, err, &mut report, round);
    assert!(
        report.contains("strlen") && report.contains("malloc"),
        "round {round}: {report}"
    );
    let left = probes_of(calls.id());
    assert_eq!(
        left,
        Vec::<String>::new(),
        "round {round}: probes left behind"
    );
    counter.finish();
}

#[test]
fn attach_and_leave_by_sigint_20_times_leaves_the_process_unharmed_and_no_probe() {
    need!(root("define uprobes"));
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = need!(compile_fixture(
        "calls_counter",
        dir.path(),
        &["-Wl,-z,now"]
    ));
    for round in 0..20 {
        attach_once(&bin, round);
    }
}

#[test]
fn duration_ends_an_attached_calls_run_and_the_process_goes_on() {
    need!(root("define uprobes"));
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = need!(compile_fixture("calls_counter", dir.path(), &[]));
    let mut counter = Counter::start(&bin);
    let (mut calls, mut err, mut report) =
        start_calls(counter.child.id(), &["--duration", "0.3"], 0);
    err.read_to_string(&mut report).expect("stderr");
    assert_eq!(
        calls.wait().expect("sysmeter ends").code(),
        Some(0),
        "{report}"
    );
    assert!(report.contains("stopped after --duration"), "{report}");
    assert_eq!(
        probes_of(calls.id()),
        Vec::<String>::new(),
        "probes left behind"
    );
    let after = counter.last;
    std::thread::sleep(Duration::from_millis(50));
    while counter.last < after + 5 {
        counter.read_line();
    }
    counter.finish();
}
