//! Arguments of `sysmeter locks`: the target ([`TargetArgs`]; the command may also follow
//! without `--`) and the usual output and storage flags.

use clap::Args;

use crate::diagnose::observe::backend::Request;
use crate::diagnose::observe::in_kernel::Backend;

use super::OutputArgs;
use super::target::{Rules, TargetArgs, follow_threads};

/// What `locks` accepts of the target arguments (`--duration` also ends the observation of
/// a launched command, which then runs on).
pub const LOCKS_TARGET: Rules = Rules {
    duration_needs_pid: false,
    missing: "no command to observe; write `sysmeter locks -- CMD ARGS…` or `-p PID`",
};

/// `sysmeter locks`: contended locks of a command or a running process.
#[derive(Debug, Args)]
#[command(
    after_help = "Per contended lock (futex word) and per call site: contended acquisitions, \
                  total and longest wait, and where the waiters were woken from. Uncontended \
                  locks never enter the kernel: they are not seen and cost nothing. Needs \
                  root (tracepoints). The report goes to stderr (or --out).\n\nExamples:\n  \
                  sysmeter locks -- ./server --threads 8\n  \
                  sysmeter locks -p 1234 --duration 10"
)]
#[command(mut_args(|a| follow_threads(
    a, "observing", "The command to observe and its arguments (after `--`)")))]
pub struct LocksArgs {
    /// `-p PID`, `--duration` and the command.
    #[command(flatten)]
    pub target: TargetArgs,
    /// How the waits are measured: `bpf` aggregates them in the kernel (nothing lost, low
    /// overhead; needs root or CAP_BPF + CAP_PERFMON and kernel BTF), `perf` sends every
    /// futex entry and exit through ring buffers, `auto` takes `bpf` where it is permitted.
    #[arg(long, value_enum, value_name = "BACKEND", default_value = "auto")]
    pub backend: Request<Backend>,
    /// `--rounds N`: observe the command N times, one run.
    #[command(flatten)]
    pub rounds: super::rounds::RoundsArgs,
    /// Output format, --out, and where the run is stored.
    #[command(flatten)]
    pub output: OutputArgs,
}
