//! Arguments of `sysmeter profile`.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::Args;

use super::OutputArgs;

/// `sysmeter profile`: sample a command's (or a process's) CPU profile.
#[derive(Debug, Args)]
#[command(
    after_help = "The command's own stdout is left alone: the report goes to stderr (or --out), \
                  and sysmeter exits with the command's exit code.\n\nExamples:\n  \
                  sysmeter profile -- ./myprog --input big.txt\n  \
                  sysmeter profile -F 4999 --flamegraph flame.svg -- make -j2\n  \
                  sysmeter profile -p 1234 --duration 10"
)]
pub struct ProfileArgs {
    /// Samples per second of CPU time, per thread.
    #[arg(
        short = 'F',
        long = "frequency",
        value_name = "HZ",
        default_value_t = 999
    )]
    pub frequency: u64,
    /// Attach to this running process (all its threads) instead of starting a command.
    #[arg(short = 'p', long, value_name = "PID", conflicts_with = "command")]
    pub pid: Option<i32>,
    /// Stop sampling after this many seconds (a command then runs on to its end; -p
    /// detaches). Default: until the command exits, or Ctrl-C with -p.
    #[arg(long, value_name = "S")]
    pub duration: Option<f64>,
    /// Write the flame graph (SVG) to FILE.
    #[arg(long, value_name = "FILE")]
    pub flamegraph: Option<PathBuf>,
    /// Write the folded stacks (`a;b;c N` lines, for flamegraph.pl or inferno) to FILE.
    #[arg(long, value_name = "FILE")]
    pub folded: Option<PathBuf>,
    /// Output format, --out, and where the profile is stored.
    #[command(flatten)]
    pub output: OutputArgs,
    /// The command to profile and its arguments (after `--`).
    #[arg(
        value_name = "CMD",
        trailing_var_arg = true,
        allow_hyphen_values = true,
        required_unless_present = "pid"
    )]
    pub command: Vec<OsString>,
}
