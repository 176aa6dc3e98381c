//! Arguments of `sysmeter trace`.

use std::ffi::OsString;
use std::time::Duration;

use clap::{Args, ValueEnum};

use super::OutputArgs;

/// `sysmeter trace`: a system-call summary (like `strace -c`) of a command or a process.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  sysmeter trace -- dd if=/dev/zero of=/dev/null count=1000\n  \
                  sysmeter trace -f -e file,network -- make\n  \
                  sysmeter trace -p 1234 --duration 10\n\n\
                  The summary goes to stderr (or --out) so the command's own output is \
                  untouched; the command's exit code is passed through."
)]
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
    /// Attach to this running process (all its threads) instead of launching a command;
    /// Ctrl-C or --duration detaches and leaves it running.
    #[arg(short = 'p', long = "pid", value_name = "PID")]
    pub pid: Option<i32>,
    /// How to trace: kernel tracepoints when permitted (root or perf_event_paranoid ≤ -1),
    /// else ptrace.
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    pub backend: BackendArg,
    /// Stop tracing after this long (e.g. 10, 2.5s, 500ms, 1m); the process keeps running.
    #[arg(long, value_name = "TIME", value_parser = parse_duration)]
    pub duration: Option<Duration>,
    /// Do not pin the ptrace tracer (and a launched command) to one CPU. Pinning keeps every
    /// ptrace stop on one CPU (a stop that wakes a tracer on another CPU was ~7× slower in
    /// a VM), but confines a launched command's threads to that CPU.
    #[arg(long)]
    pub no_pin: bool,
    /// Output format, --out, and where the run is stored.
    #[command(flatten)]
    pub output: OutputArgs,
    /// The command to launch and its arguments (after `--`).
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<OsString>,
}

impl TraceArgs {
    /// `--backend` as a forced choice: `None` for auto, `Some(true)` for ptrace,
    /// `Some(false)` for tracepoints (the enum itself is private to `cli`).
    pub fn forced_ptrace(&self) -> Option<bool> {
        match self.backend {
            BackendArg::Auto => None,
            BackendArg::Ptrace => Some(true),
            BackendArg::Tracepoint => Some(false),
        }
    }
}

/// `--backend`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BackendArg {
    /// Tracepoints when permitted, else ptrace.
    Auto,
    /// ptrace (works unprivileged on your own processes).
    Ptrace,
    /// raw_syscalls tracepoints through perf_event_open (no stops; needs privileges).
    Tracepoint,
}

/// Parses `10`, `2.5s`, `500ms`, `1m` into a duration.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let (number, scale) = if let Some(n) = t.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 60.0)
    } else {
        (t, 1.0)
    };
    let value: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("'{text}' is not a duration; write e.g. 10, 2.5s, 500ms or 1m"))?;
    let secs = value * scale;
    if !secs.is_finite() || secs <= 0.0 || secs > 1e9 {
        return Err(format!(
            "'{text}' is not a usable duration; give a positive time"
        ));
    }
    Ok(Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_with_units() {
        assert_eq!(parse_duration("10"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("2.5s"), Ok(Duration::from_millis(2500)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("1m"), Ok(Duration::from_secs(60)));
        assert!(parse_duration("0").is_err());
        assert!(parse_duration("-1").is_err());
        assert!(parse_duration("soon").is_err());
    }
}
