//! Arguments of `sysmeter profile`: the target ([`TargetArgs`]; here the command may also
//! follow without `--`), the sampling frequency, the flame graph and folded-stack files, and
//! the usual output and storage flags.

use std::path::PathBuf;

use clap::Args;

use crate::diagnose::observe::backend::Request;
use crate::diagnose::observe::in_kernel::Backend;

use super::OutputArgs;
use super::target::{Rules, TargetArgs, follow_threads};

/// What `profile` accepts of the target arguments (`--duration` also ends the sampling of a
/// launched command, which then runs on).
pub const PROFILE_TARGET: Rules = Rules {
    duration_needs_pid: false,
    missing: "no command to profile; write `sysmeter profile -- CMD ARGS…` or `-p PID`",
};

/// `sysmeter profile`: sample a command's (or a process's) CPU profile.
#[derive(Debug, Args)]
#[command(
    after_help = "The command's own stdout is left alone: the report goes to stderr (or --out), \
                  and sysmeter exits with the command's exit code.\n\nExamples:\n  \
                  sysmeter profile -- ./myprog --input big.txt\n  \
                  sysmeter profile -F 4999 --flamegraph flame.svg -- make -j2\n  \
                  sysmeter profile -p 1234 --duration 10\n  \
                  sysmeter profile --off-cpu -- ./server --once\n  \
                  sysmeter profile --both --flamegraph flame.svg -- ./myprog"
)]
#[command(mut_args(|a| follow_threads(
    a, "sampling", "The command to profile and its arguments (after `--`)")))]
pub struct ProfileArgs {
    /// Samples per second of CPU time, per thread.
    #[arg(
        short = 'F',
        long = "frequency",
        value_name = "HZ",
        default_value_t = 999
    )]
    pub frequency: u64,
    /// `-p PID`, `--duration` and the command.
    #[command(flatten)]
    pub target: TargetArgs,
    /// Profile where threads wait instead of where they run: time off the CPU per call
    /// stack, its reason (disk, network, lock, sleep, pipe, page fault) and who woke them
    /// (needs root).
    #[arg(long = "off-cpu", conflicts_with = "both")]
    pub off_cpu: bool,
    /// On-CPU samples and off-CPU time together, accounting for each thread's wall time
    /// (needs root).
    #[arg(long)]
    pub both: bool,
    /// How the off-CPU time is measured: `bpf` aggregates in the kernel (nothing lost, low
    /// overhead; needs root or CAP_BPF + CAP_PERFMON and kernel BTF), `perf` sends every
    /// switch through ring buffers, `auto` takes `bpf` where it is permitted.
    #[arg(long, value_enum, value_name = "BACKEND", default_value = "auto")]
    pub backend: Request<Backend>,
    /// Write the flame graph (SVG) to FILE (with --both the on-CPU one; the off-CPU one goes
    /// to FILE with `.offcpu.svg` for its extension).
    #[arg(long, value_name = "FILE")]
    pub flamegraph: Option<PathBuf>,
    /// Write the folded stacks (`a;b;c N` lines, for flamegraph.pl or inferno) to FILE (with
    /// --both the on-CPU ones; the off-CPU ones, in ns, to FILE with `.offcpu` added).
    #[arg(long, value_name = "FILE")]
    pub folded: Option<PathBuf>,
    /// `--rounds N`: observe the command N times, one run.
    #[command(flatten)]
    pub rounds: super::rounds::RoundsArgs,
    /// Output format, --out, and where the profile is stored.
    #[command(flatten)]
    pub output: OutputArgs,
}
