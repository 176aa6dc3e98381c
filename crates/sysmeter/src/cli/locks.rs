//! Arguments of `sysmeter locks`: the target ([`TargetArgs`]; the command may also follow
//! without `--`) and the usual output and storage flags.

use clap::Args;

use super::OutputArgs;
use super::target::{Rules, TargetArgs};

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
#[command(mut_arg("pid", |a| a.help(
    "Attach to this running process (all its threads) instead of starting a command")))]
#[command(mut_arg("duration", |a| a.help(
    "Stop observing after this long (e.g. 10, 2.5s, 500ms, 1m; a command then runs on to its \
     end; -p detaches). Default: until the command exits, or Ctrl-C with -p")))]
#[command(mut_arg("command", |a| a
    .help("The command to observe and its arguments (after `--`)")
    .last(false)
    .trailing_var_arg(true)
    .allow_hyphen_values(true)
    .required_unless_present("pid")))]
pub struct LocksArgs {
    /// `-p PID`, `--duration` and the command.
    #[command(flatten)]
    pub target: TargetArgs,
    /// Output format, --out, and where the run is stored.
    #[command(flatten)]
    pub output: OutputArgs,
}
