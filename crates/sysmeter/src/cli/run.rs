//! Arguments of `sysmeter run`: the command after `--` or `-p PID` with a duration, the
//! sampling interval of the timeline, and the usual output and storage flags.

use std::ffi::OsString;
use std::time::Duration;

use clap::Args;

use super::OutputArgs;

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
  otherwise mixed (both parts are named).";

/// `sysmeter run`.
#[derive(Debug, Args)]
#[command(after_long_help = RUN_HELP)]
pub struct RunArgs {
    /// Watch this running process instead of running a command (read-only: it is never
    /// stopped or signalled).
    #[arg(
        short = 'p',
        long = "pid",
        value_name = "PID",
        conflicts_with = "command"
    )]
    pub pid: Option<i32>,
    /// With -p: watch for S seconds (e.g. 0.5, 30); default until it exits or Ctrl-C.
    #[arg(long, value_name = "S", value_parser = parse_seconds, requires = "pid")]
    pub duration: Option<Duration>,
    /// Sampling interval of the timeline, ms.
    #[arg(long, value_name = "MS", default_value_t = 100,
          value_parser = clap::value_parser!(u64).range(1..=60_000))]
    pub interval: u64,
    /// Output format, --out, and where the run is stored.
    #[command(flatten)]
    pub output: OutputArgs,
    /// The command and its arguments, after `--`.
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<OsString>,
}

/// Parses a positive number of seconds (`0.5`, `30`).
pub fn parse_seconds(text: &str) -> Result<Duration, String> {
    let s: f64 = text
        .trim()
        .trim_end_matches('s')
        .parse()
        .map_err(|_| format!("'{text}' is not a number of seconds; write e.g. 0.5 or 30"))?;
    if s.is_nan() || s <= 0.0 {
        return Err(format!("'{text}' must be more than 0 seconds"));
    }
    Duration::try_from_secs_f64(s).map_err(|_| format!("'{text}' is too long a duration"))
}

#[cfg(test)]
mod tests {
    use super::parse_seconds;
    use std::time::Duration;

    #[test]
    fn seconds_parse() {
        assert_eq!(parse_seconds("0.5"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_seconds("30s"), Ok(Duration::from_secs(30)));
        assert!(parse_seconds("0").is_err());
        assert!(parse_seconds("-1").is_err());
        assert!(parse_seconds("NaN").is_err());
        assert!(parse_seconds("abc").is_err());
    }
}
