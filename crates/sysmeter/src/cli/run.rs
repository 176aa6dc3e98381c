//! Arguments of `sysmeter run`: the target (the command after `--`, or `-p PID` with a
//! duration: [`TargetArgs`]), the sampling interval of the timeline, and the usual output and
//! storage flags.

use clap::Args;

use super::OutputArgs;
use super::target::{Rules, TargetArgs};
use crate::diagnose::run::LookupMode;

const RUN_HELP: &str = "\
The command's stdin, stdout, stderr and exit code pass through unchanged: sysmeter's report
goes to stderr (or --out FILE), and `run` exits with the command's exit code (128 + N when
signal N killed it; 127 when it was not found, 126 when it could not be executed).
Ctrl-C reaches the command (same process group); a SIGINT or SIGTERM sent to sysmeter alone
is forwarded to it. The report is written and stored either way.

Verdict, with r real, u user, s system time and q the time it waited for a CPU:
  demand d = (u + s + q) / r
  d >= 0.8: kernel-bound if s > u (next: sysmeter trace), else CPU-bound (next: profile)
  d <  1/3: I/O-bound, on paging (>= 10 major faults/s, or swapping with major faults),
            disk (threads in disk wait in >= 25% of samples, or >= 1 MiB of own storage
            I/O while the busiest disk was >= 20% busy), network (it held a TCP or UDP socket), or
            waiting (timers, pipes, locks, other processes)
  otherwise mixed (both parts are named).

The timeline also shows the dentry cache (/proc/sys/fs/dentry-state): entries in use,
unused (cached) and negative (\"no such file\" remembered; Linux >= 5.0), machine-wide.
Path lookups of a launched command (open, stat, access, execve, readlink, ...: strace's %file
class) are traced without stopping it where syscall tracepoints are permitted (root,
CAP_PERFMON or perf_event_paranoid <= -1): their count, failures, time and share of the
system time; with --lookups paths (root) also the most looked-up paths (uprobes on the C
library's path functions, about ten times the cost per lookup, so not the default: it
would move the verdict of a program that looks up many paths). Otherwise the report says
why in one line (docs/lookup.md).";

/// What `run` accepts of the target arguments.
pub const RUN_TARGET: Rules = Rules {
    duration_needs_pid: true,
    missing: "no command to run: put it after `--` (e.g. `sysmeter run -- make -j2`), or watch \
              a running process with `-p PID`",
};

/// `sysmeter run`.
#[derive(Debug, Args)]
#[command(after_long_help = RUN_HELP)]
#[command(mut_arg("pid", |a| a.help(
    "Watch this running process instead of running a command (read-only: it is never \
     stopped or signalled)")))]
#[command(mut_arg("duration", |a| a.help(
    "With -p: watch for this long (e.g. 10, 2.5s, 500ms, 1m); default until it exits or \
     Ctrl-C")))]
pub struct RunArgs {
    /// The command after `--`, or `-p PID` and `--duration`.
    #[command(flatten)]
    pub target: TargetArgs,
    /// Sampling interval of the timeline, ms.
    #[arg(long, value_name = "MS", default_value_t = 100,
          value_parser = clap::value_parser!(u64).range(1..=60_000))]
    pub interval: u64,
    /// What to trace of a launched command's path lookups: `calls` (count, time, failures;
    /// tracepoints, about 1 µs per lookup), `paths` (also the paths looked up: uprobes, root,
    /// about 12 µs per lookup and 1-2 s at exit), `off`.
    #[arg(long, value_enum, default_value_t = LookupsArg::Calls)]
    pub lookups: LookupsArg,
    /// Output format, --out, and where the run is stored.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// `--lookups`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LookupsArg {
    /// Calls, time, failures and the paths.
    Paths,
    /// Calls, time and failures.
    Calls,
    /// No lookup tracing.
    Off,
}

impl From<LookupsArg> for LookupMode {
    fn from(a: LookupsArg) -> LookupMode {
        match a {
            LookupsArg::Paths => LookupMode::Paths,
            LookupsArg::Calls => LookupMode::Calls,
            LookupsArg::Off => LookupMode::Off,
        }
    }
}
