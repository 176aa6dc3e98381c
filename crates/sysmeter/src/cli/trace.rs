//! Arguments of `sysmeter trace`: the target ([`TargetArgs`]), the calls to count, the
//! backend, and the usual output and storage flags.

use clap::Args;

use crate::diagnose::observe::backend::Request;
use crate::diagnose::trace::Backend;

use super::OutputArgs;
use super::target::{Rules, TargetArgs};

/// What `trace` accepts of the target arguments (`--duration` also ends the trace of a
/// launched command, which then runs on).
pub const TRACE_TARGET: Rules = Rules {
    duration_needs_pid: false,
    missing: "nothing to trace: give a command after -- (e.g. `sysmeter trace -- ls`) or -p PID",
};

/// `sysmeter trace`: a system-call summary (like `strace -c`) of a command or a process.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  sysmeter trace -- dd if=/dev/zero of=/dev/null count=1000\n  \
                  sysmeter trace -f -e file,network -- make\n  \
                  sysmeter trace -p 1234 --duration 10\n\n\
                  The summary goes to stderr (or --out) so the command's own output is \
                  untouched; the command's exit code is passed through.\n\n\
                  Path lookups: the path-taking calls (the file class) are summed into their \
                  count, time and share of the system-call time; with the ptrace backend the \
                  paths are read from the program's memory and the most looked-up ones are \
                  listed with their failures (ENOENT…). The tracepoint backend sees call \
                  numbers only and says so (docs/lookup.md)."
)]
#[command(mut_arg("pid", |a| a.help(
    "Attach to this running process (all its threads) instead of launching a command; \
     Ctrl-C or --duration detaches and leaves it running")))]
#[command(mut_arg("duration", |a| a.help(
    "Stop tracing after this long (e.g. 10, 2.5s, 500ms, 1m); the process keeps running")))]
#[command(mut_arg("command", |a| a.help(
    "The command to launch and its arguments (after `--`)")))]
pub struct TraceArgs {
    /// Count only these calls: names and classes (file, network, process, memory, signal,
    /// ipc, desc), comma separated, e.g. `-e file,read`. With a launched command and the
    /// ptrace backend, only these calls stop it (a seccomp filter, which also sets
    /// no_new_privs: setuid programs then run without their privileges).
    #[arg(short = 'e', long = "calls", value_name = "SET")]
    pub calls: Vec<String>,
    /// Follow child processes too (threads are always followed).
    #[arg(short = 'f', long = "follow-forks")]
    pub follow_forks: bool,
    /// `-p PID`, `--duration` and the command after `--`.
    #[command(flatten)]
    pub target: TargetArgs,
    /// How to trace: kernel tracepoints when permitted (root or perf_event_paranoid ≤ -1),
    /// else ptrace.
    #[arg(long, value_enum, default_value = "auto")]
    pub backend: Request<Backend>,
    /// Do not pin the ptrace tracer (and a launched command) to one CPU. Pinning keeps every
    /// ptrace stop on one CPU (a stop that wakes a tracer on another CPU was ~7× slower in
    /// a VM), but confines a launched command's threads to that CPU.
    #[arg(long)]
    pub no_pin: bool,
    /// `--rounds N`: observe the command N times, one run.
    #[command(flatten)]
    pub rounds: super::rounds::RoundsArgs,
    /// Output format, --out, and where the run is stored.
    #[command(flatten)]
    pub output: OutputArgs,
}
