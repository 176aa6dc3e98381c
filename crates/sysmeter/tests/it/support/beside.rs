//! Neighbours on the kernel's tracepoints, run beside a test's own `sysmeter` for as long
//! as a [`Beside`] lives: bpftrace counting `sys_enter_futex` (issue 41's first neighbour),
//! a second sysmeter with its in-kernel backends (`locks --backend bpf` and `profile
//! --off-cpu --backend bpf`, each on a `sleep` of its own; or `trace --backend bpf` on
//! `raw_syscalls`), and the [`super::blinder`] (a program that returns 0). Each is started
//! and waited for until its programs are attached; on drop its processes are ended and
//! reaped. The caller holds the events' locks ([`super::observing`]).

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::blinder::{Blinder, blind};
use super::observing::Event;
use super::skip::{Cap, Missing};

/// Which neighbour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Neighbour {
    /// `bpftrace -e 'tracepoint:syscalls:sys_enter_futex { @ = count(); }'`.
    Bpftrace,
    /// sysmeter's own in-kernel backends on another program (futex, sched_switch and
    /// sched_waking).
    SysmeterBpf,
    /// A program that returns 0 on the given event's tracepoint.
    Blinder(Event),
    /// `sysmeter trace --backend bpf` on another program (raw_syscalls sys_enter and
    /// sys_exit): the caller holds the `raw_syscalls` lock.
    SysmeterTrace,
}

/// A running neighbour; ended on drop.
pub struct Beside {
    children: Vec<Child>,
    _blinder: Option<Blinder>,
}

/// Starts `who` and waits until its programs are attached.
pub fn beside(who: Neighbour, dir: &Path) -> Result<Beside, Missing> {
    match who {
        Neighbour::Bpftrace => bpftrace(),
        Neighbour::SysmeterBpf => sysmeters(&[
            &["locks", "--backend", "bpf"],
            &["profile", "--off-cpu", "--backend", "bpf"],
        ]),
        Neighbour::SysmeterTrace => sysmeters(&[&["trace", "--backend", "bpf"]]),
        Neighbour::Blinder(event) => Ok(Beside {
            children: Vec::new(),
            _blinder: Some(blind(event, dir)?),
        }),
    }
}

/// A sysmeter with each of `runs` on a `sleep` of its own, once each attached its programs.
fn sysmeters(runs: &[&[&str]]) -> Result<Beside, Missing> {
    super::needs::bpf()?;
    let children: Vec<Child> = runs.iter().map(|args| sysmeter_on_sleep(args)).collect();
    for c in &children {
        let attached = (0..600).any(|_| {
            std::thread::sleep(Duration::from_millis(50));
            crate::offcpu_bpf::holds_bpf_link(c.id())
        });
        assert!(attached, "the sysmeter beside never attached its programs");
    }
    Ok(Beside {
        children,
        _blinder: None,
    })
}

/// bpftrace on `sys_enter_futex`, once it says its probe is attached.
fn bpftrace() -> Result<Beside, Missing> {
    super::needs::bpf()?;
    let started = Command::new("bpftrace")
        .args(["-e", "tracepoint:syscalls:sys_enter_futex { @ = count(); }"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn();
    let Ok(mut child) = started else {
        return Err(Missing::new(
            Cap::Bpftrace,
            "no bpftrace (apt-get install bpftrace)",
        ));
    };
    let mut line = String::new();
    let out = child.stdout.take().expect("bpftrace's stdout");
    BufReader::new(out)
        .read_line(&mut line)
        .expect("bpftrace's first line");
    assert!(line.starts_with("Attaching"), "bpftrace said {line:?}");
    // Its probe is attached right after it says so; give it a moment.
    std::thread::sleep(Duration::from_millis(300));
    Ok(Beside {
        children: vec![child],
        _blinder: None,
    })
}

/// `sysmeter <args> --no-store -- sleep 600`, output discarded.
fn sysmeter_on_sleep(args: &[&str]) -> Child {
    Command::new(assert_cmd::cargo::cargo_bin("sysmeter"))
        .args(args)
        .args(["--no-store", "--", "sleep", "600"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("run sysmeter beside")
}

impl Beside {
    /// The neighbour's own processes (a test tells them from foreign ones).
    pub fn pids(&self) -> Vec<i32> {
        self.children.iter().map(|c| c.id() as i32).collect()
    }

    /// Ends the neighbour now: the exit code of each of its processes (a sysmeter passes on
    /// its command's end: killed by SIGTERM, 143).
    pub fn end(mut self) -> Vec<Option<i32>> {
        self.children.drain(..).map(end).collect()
    }
}

/// Ends `child`: a sysmeter ends with its command (SIGTERM to its children); bpftrace ends
/// on SIGINT. Its exit code.
fn end(mut child: Child) -> Option<i32> {
    let pid = child.id();
    let children = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"));
    let children = children.unwrap_or_default();
    for c in children.split_whitespace() {
        let _ = Command::new("kill").arg(c).status();
    }
    if children.trim().is_empty() {
        let _ = Command::new("kill")
            .args(["-INT", &pid.to_string()])
            .status();
    }
    child.wait().ok().and_then(|s| s.code())
}

impl Drop for Beside {
    fn drop(&mut self) {
        for child in self.children.drain(..) {
            end(child);
        }
    }
}
