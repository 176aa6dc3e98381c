//! One timed run of the command: spawn, wait for the exit without reaping
//! (the wait pair of `sysmeter_sys::process::wait`) (so the clock stops
//! when the kernel reports the exit, and a watchdog may still kill the child by pid without
//! hitting a recycled pid), stop the clock, then reap with `wait4` for the child's CPU time.
//!
//! Each run is the leader of its own process group, so everything it starts (`sh -c 'sleep
//! 31 & …'`) is killed with it. The child is a RAII [`Guard`]: if anything fails before it is
//! reaped its group is killed and the child reaped on drop. The watchdog thread is started
//! *before* the clock, so only a channel send is inside the timed interval; it kills the
//! group when `--timeout` passes, and within [`TICK`] of Ctrl-C or SIGTERM (which set the
//! interrupt flag), so `scale` stops at once rather than when the current size ends.

use std::io;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use sysmeter_sys::process::exit::{ChildUsage, Exit};
use sysmeter_sys::process::wait;

use super::{RunSample, ScaleConfig, SpawnError};

/// Why a run did not finish cleanly.
#[derive(Debug)]
pub(super) enum RunFailure {
    /// Exited with a non-zero status.
    Exit(i32),
    /// Killed by a signal.
    Signal(i32),
    /// Killed by the watchdog after the timeout.
    Timeout(Duration),
    /// Waiting for the child failed.
    Wait(io::Error),
}

impl RunFailure {
    /// One sentence: what ran, what happened, what to do. `run` is (index, total) for timed
    /// runs, `None` for the warm-up.
    pub(super) fn describe(
        &self,
        cfg: &ScaleConfig,
        n: u64,
        run: Option<(usize, usize)>,
    ) -> String {
        let cmd = cfg.argv(n).join(" ");
        let which = match run {
            Some((i, total)) => format!("run {} of {total}, N = {n}", i + 1),
            None => format!("warm-up run, N = {n}"),
        };
        let fix = "run it by hand to see why (or add --show-output)";
        match self {
            RunFailure::Exit(code) => {
                format!("`{cmd}` exited with status {code} ({which}); {fix}")
            }
            RunFailure::Signal(sig) => {
                format!("`{cmd}` was killed by signal {sig} ({which}); {fix}")
            }
            RunFailure::Timeout(d) => format!(
                "`{cmd}` took longer than --timeout {} s and was killed ({which}); raise \
                 --timeout or leave out the largest sizes",
                d.as_secs_f64()
            ),
            RunFailure::Wait(e) => {
                format!("waiting for `{cmd}` failed: {e} ({which}); run scale again")
            }
        }
    }
}

/// Runs the command once at size `n` and times it. The outer error means it could not be
/// started at all; the inner one that it ran but did not succeed.
pub(super) fn run_once(
    cfg: &ScaleConfig,
    n: u64,
) -> Result<Result<RunSample, RunFailure>, SpawnError> {
    let argv = cfg.argv(n);
    let (out, err) = if cfg.show_output {
        (Stdio::inherit(), Stdio::inherit())
    } else {
        (Stdio::null(), Stdio::null())
    };
    let mut command = Command::new(&argv[0]);
    command
        .args(&argv[1..])
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .process_group(0);
    let watchdog = Watchdog::arm(cfg.timeout);
    let start = Instant::now();
    let child = command.spawn().map_err(|source| SpawnError {
        program: argv[0].clone(),
        source,
    })?;
    let guard = Guard {
        pid: i32::try_from(child.id()).unwrap_or(i32::MAX),
        reaped: false,
    };
    watchdog.watch(guard.pid);
    let waited = wait::wait_exited(guard.pid, true);
    let wall = start.elapsed();
    // Stop the watchdog before reaping: once reaped, the pid may belong to someone else.
    let timed_out = watchdog.disarm() == Some(Kill::Timeout);
    if let Err(e) = waited {
        return Ok(Err(RunFailure::Wait(e)));
    }
    let reaped = match guard.reap() {
        Ok(r) => r,
        Err(e) => return Ok(Err(RunFailure::Wait(e))),
    };
    Ok(classify(reaped, timed_out, cfg.timeout).map(|r| RunSample {
        size: n,
        order: 0,
        wall_ns: wall.as_nanos() as f64,
        user_ns: r.user_ns as f64,
        system_ns: r.system_ns as f64,
        max_rss_kib: r.max_rss_kib,
    }))
}

fn classify(
    (exit, usage): (Exit, ChildUsage),
    timed_out: bool,
    timeout: Option<Duration>,
) -> Result<ChildUsage, RunFailure> {
    match exit {
        Exit::Exited(0) => Ok(usage),
        _ if timed_out => Err(RunFailure::Timeout(timeout.unwrap_or_default())),
        Exit::Exited(code) => Err(RunFailure::Exit(code)),
        Exit::Signaled { signal, .. } => Err(RunFailure::Signal(signal)),
    }
}

/// A spawned child not yet reaped; killed and reaped on drop.
struct Guard {
    pid: i32,
    reaped: bool,
}

impl Guard {
    fn reap(mut self) -> io::Result<(Exit, ChildUsage)> {
        self.reaped = true;
        wait::reap(self.pid, true)?.ok_or_else(|| io::Error::from(io::ErrorKind::WouldBlock))
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if !self.reaped {
            // Not reaped yet, so the pid (and its group id) is still ours to signal.
            let _ = wait::signal_group(self.pid, libc::SIGKILL);
            let _ = wait::reap(self.pid, true);
        }
    }
}

enum Msg {
    Watch(i32),
    Done,
}

/// How often the watchdog looks at the interrupt flag.
const TICK: Duration = Duration::from_millis(20);

/// Why the watchdog killed the run's process group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kill {
    Timeout,
    Interrupted,
}

/// A thread that kills the watched child's process group when the timeout passes or the
/// interrupt flag is set; joined on disarm or drop.
struct Watchdog {
    tx: Option<Sender<Msg>>,
    handle: Option<JoinHandle<Option<Kill>>>,
}

impl Watchdog {
    fn arm(timeout: Option<Duration>) -> Watchdog {
        let (tx, rx) = mpsc::channel();
        let handle = std::thread::spawn(move || {
            let Ok(Msg::Watch(pid)) = rx.recv() else {
                return None;
            };
            let deadline = timeout.map(|t| Instant::now() + t);
            loop {
                match rx.recv_timeout(TICK) {
                    Err(RecvTimeoutError::Timeout) => {}
                    _ => return None,
                }
                let why = if sysmeter_sys::signal::interrupted() {
                    Kill::Interrupted
                } else if deadline.is_some_and(|d| Instant::now() >= d) {
                    Kill::Timeout
                } else {
                    continue;
                };
                return wait::signal_group(pid, libc::SIGKILL)
                    .is_ok()
                    .then_some(why);
            }
        });
        Watchdog {
            tx: Some(tx),
            handle: Some(handle),
        }
    }

    fn watch(&self, pid: i32) {
        if let Some(tx) = &self.tx {
            let _ = tx.send(Msg::Watch(pid));
        }
    }

    /// Stops the thread; why it killed the child's group, if it did.
    fn disarm(mut self) -> Option<Kill> {
        self.stop()
    }

    fn stop(&mut self) -> Option<Kill> {
        if let Some(tx) = self.tx.take() {
            let _ = tx.send(Msg::Done);
        }
        self.handle.take().and_then(|h| h.join().ok().flatten())
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.stop();
    }
}
