//! Arguments of `sysmeter live`: the target ([`TargetArgs`]; the command may follow without
//! `--`), the sampling frequency, where the local web view listens (`--bind`, `--port`),
//! its token, whether it stays open after the program ended, and the usual output and
//! storage flags (the session is stored as a profile when it ends).

use std::net::IpAddr;

use clap::Args;

use super::OutputArgs;
use super::target::{Rules, TargetArgs, follow_threads};

/// What `live` accepts of the target arguments.
pub const LIVE_TARGET: Rules = Rules {
    duration_needs_pid: false,
    missing: "no command to watch; write `sysmeter live -- CMD ARGS…` or `-p PID`",
};

/// `sysmeter live`: watch a program while it runs, in a local web page.
#[derive(Debug, Args)]
#[command(
    after_help = "Prints the page's URL (with its token) on stderr first. The program's own \
                  stdout, stderr and exit code are left alone. Ctrl-C ends observing and \
                  stores the session as a profile run.\n\nEndpoints (each needs the token): \
                  / (the page), /api/snapshot?window=10|60|all (JSON), /metrics \
                  (OpenMetrics), /debug/pprof/profile?seconds=N (pprof CPU profile), POST \
                  /api/pause?paused=1|0, POST /api/save?window=10|60|all.\n\nExamples:\n  \
                  sysmeter live -- ./server --port 8080\n  \
                  sysmeter live -p 1234 --port 7000\n  \
                  go tool pprof -top 'http://127.0.0.1:7000/debug/pprof/profile?seconds=5&token=…'"
)]
#[command(mut_args(|a| follow_threads(
    a, "watching", "The command to watch and its arguments (after `--`)")))]
pub struct LiveArgs {
    /// CPU-clock samples per second of CPU time, per thread.
    #[arg(
        short = 'F',
        long = "frequency",
        value_name = "HZ",
        default_value_t = 199
    )]
    pub frequency: u64,
    /// `-p PID`, `--duration` and the command.
    #[command(flatten)]
    pub target: TargetArgs,
    /// Address the web view listens on (another than 127.0.0.1 exposes the program's
    /// profile to that network: keep the token).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1")]
    pub bind: IpAddr,
    /// Port of the web view (0: a free port).
    #[arg(long, value_name = "PORT", default_value_t = 0)]
    pub port: u16,
    /// Serve without a token (anyone who can reach the port reads the view).
    #[arg(long)]
    pub no_token: bool,
    /// Keep serving the final state after the program ended, until Ctrl-C.
    #[arg(long)]
    pub keep_open: bool,
    /// Output format, --out, and where the session is stored.
    #[command(flatten)]
    pub output: OutputArgs,
}
