//! Arguments of `sysmeter calls`: the target ([`TargetArgs`]), the functions to count, `-f`,
//! and the usual output and storage flags.

use clap::Args;

use crate::diagnose::calls::Backend;
use crate::diagnose::observe::backend::Request;

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
                  A launched, dynamically linked program gets a preloaded library that \
                  counts each call it makes to a shared library in the process (a few ns \
                  per call; no root). Otherwise (-p, OBJECT:NAME, static or setuid programs) \
                  uprobes on the PLT stubs or the library's own function count every call \
                  (BIND_NOW, IFUNC and vDSO functions included); they need root and cost \
                  a few µs per call. Either way the cost is measured, stated, and \
                  subtracted from the times (docs/calls.md). The summary goes to stderr (or --out); with a \
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
    /// How calls are counted: `inproc` preloads a library that counts in the process (a few
    /// ns per call; launched, dynamically linked programs), `uprobe` probes through the
    /// kernel (µs per call; root; also `-p PID`, OBJECT:NAME, static and setuid programs),
    /// `auto` takes `inproc` where it works. The first line says which and why.
    #[arg(long, value_enum, value_name = "BACKEND", default_value = "auto")]
    pub backend: Request<Backend>,
    /// In process: time every call (about 50 ns each) instead of one in 64 per function
    /// and thread (a few ns per call on average); counts are exact either way.
    #[arg(long)]
    pub time_every_call: bool,
    /// Count and time the program's own functions instead of library calls: exact calls
    /// per caller → callee edge, self and inclusive time, the gprof flat profile and call
    /// graph and a flame graph. The program must be built with -finstrument-functions
    /// (gcc or clang; docs/calls.md); in process only, so not with -p, -e, --backend or
    /// --time-every-call.
    #[arg(long, conflicts_with_all = ["calls", "backend", "time_every_call", "pid"])]
    pub functions: bool,
    /// `-p PID`, `--duration` and the command after `--`.
    #[command(flatten)]
    pub target: TargetArgs,
    /// `--rounds N`: observe the command N times, one run.
    #[command(flatten)]
    pub rounds: super::rounds::RoundsArgs,
    /// Output format, --out, and where the run is stored.
    #[command(flatten)]
    pub output: OutputArgs,
}
