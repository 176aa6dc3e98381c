//! Arguments of `sysmeter calls`: the target ([`TargetArgs`]), the functions to count, `-f`,
//! and the usual output and storage flags.

use clap::Args;

use super::OutputArgs;
use super::target::{Rules, TargetArgs};

/// What `calls` accepts of the target arguments.
pub const CALLS_TARGET: Rules = Rules {
    duration_needs_pid: false,
    missing: "nothing to trace: give a command after -- (e.g. `sysmeter calls -- ls`) or -p PID",
};

/// `sysmeter calls`: library calls (like `ltrace -c`) of a command or a process.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  sysmeter calls -- ./server --once\n  \
                  sysmeter calls -f -e 'malloc,free,str*,time' -- make\n  \
                  sysmeter calls -e libc.so.6:malloc -p 1234 --duration 10\n\n\
                  Uprobes on the program's PLT stubs count every call it makes to a shared \
                  library (BIND_NOW, IFUNC and vDSO functions included); OBJECT:NAME probes \
                  the library's own function (all callers). Needs root. Each probed call \
                  costs a few µs: that cost is measured first, stated, and subtracted from \
                  the times (docs/calls.md). The summary goes to stderr (or --out); with a \
                  stored bench of this host, each function is priced with this machine's \
                  own cost.")]
#[command(mut_arg("pid", |a| a.help(
    "Attach to this running process (all its threads) instead of launching a command; \
     Ctrl-C or --duration removes the probes and leaves it running")))]
#[command(mut_arg("duration", |a| a.help(
    "Stop tracing after this long (e.g. 10, 2.5s, 500ms, 1m); the process keeps running")))]
#[command(mut_arg("command", |a| a.help(
    "The command to launch and its arguments (after `--`)")))]
pub struct CallsArgs {
    /// Functions to count: globs, comma separated, optionally OBJECT:GLOB (e.g.
    /// `malloc,free,str*,libc.so.6:memcpy`). Default: allocation, string, time, mutex and
    /// stdio functions.
    #[arg(short = 'e', long = "calls", value_name = "PATTERNS")]
    pub calls: Vec<String>,
    /// Follow child processes too (threads are always followed).
    #[arg(short = 'f', long = "follow-forks")]
    pub follow_forks: bool,
    /// `-p PID`, `--duration` and the command after `--`.
    #[command(flatten)]
    pub target: TargetArgs,
    /// Output format, --out, and where the run is stored.
    #[command(flatten)]
    pub output: OutputArgs,
}
