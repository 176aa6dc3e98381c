//! `sysmeter profile`: validate, sample (`diagnose::profile`), store, write the flame graph
//! and folded stacks, and print the report to stderr (or `--out`): the profiled command owns
//! stdout. Exits with the command's exit code (130 when Ctrl-C stopped it).

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::time::Duration;

use anyhow::Context;

use super::output::{Ending, Sink, Stream};
use super::{Outcome, UsageError, create_output};
use crate::cli::{PROFILE_TARGET, ProfileArgs};
use crate::diagnose::profile::{self, Settings, result};
use crate::diagnose::target::{Target, Unresolved, resolve_program};

fn usage(message: String) -> anyhow::Error {
    anyhow::Error::new(UsageError(message))
}

/// What to profile, checked: the program exists, the pid is a live process.
fn target(args: &ProfileArgs) -> anyhow::Result<Target> {
    let target = args
        .target
        .target(PROFILE_TARGET)
        .map_err(|e| usage(e.to_string()))?;
    match &target {
        Target::Attach(pid) => {
            let pid = *pid;
            if pid <= 0 || !Path::new(&format!("/proc/{pid}/task")).exists() {
                return Err(usage(format!(
                    "process {pid} does not exist; give the pid of a running process to -p"
                )));
            }
        }
        Target::Launch(argv) => {
            let program = argv.first().map(|a| a.as_os_str()).unwrap_or_default();
            if resolve_program(program) == Err(Unresolved::NotFound) {
                return Err(usage(format!(
                    "command not found: {}; check the name and PATH",
                    program.to_string_lossy()
                )));
            }
        }
    }
    Ok(target)
}

fn max_sample_rate() -> Option<u64> {
    std::fs::read_to_string("/proc/sys/kernel/perf_event_max_sample_rate")
        .ok()?
        .trim()
        .parse()
        .ok()
}

fn settings(args: &ProfileArgs) -> anyhow::Result<Settings> {
    let max = max_sample_rate().unwrap_or(100_000);
    if args.frequency == 0 || args.frequency > max {
        return Err(usage(format!(
            "-F {} is outside 1..={max} (kernel.perf_event_max_sample_rate); choose a frequency \
             in that range, e.g. -F 999",
            args.frequency
        )));
    }
    Ok(Settings {
        frequency: args.frequency,
        duration: args.target.duration,
        ..Settings::default()
    })
}

/// A live sample counter on stderr, only when stderr is a terminal.
fn progress_printer() -> impl FnMut(u64, Duration) {
    let tty = std::io::stderr().is_terminal();
    move |samples, elapsed| {
        if tty {
            eprint!(
                "\rprofiling: {samples} samples, {:.1} s ",
                elapsed.as_secs_f64()
            );
        }
    }
}

/// The files of `--flamegraph` and `--folded`, created before anything runs (so a bad path
/// fails at once, not after a long profile).
struct Artifacts {
    flamegraph: Option<std::fs::File>,
    folded: Option<std::fs::File>,
}

impl Artifacts {
    fn create(args: &ProfileArgs) -> anyhow::Result<Artifacts> {
        let open = |p: &Option<std::path::PathBuf>, what| {
            p.as_deref().map(|p| create_output(p, what)).transpose()
        };
        Ok(Artifacts {
            flamegraph: open(&args.flamegraph, "--flamegraph")?,
            folded: open(&args.folded, "--folded")?,
        })
    }

    /// Writes the flame graph and the folded stacks.
    fn write(self, prof: &profile::Profile) -> anyhow::Result<()> {
        if let Some(mut f) = self.flamegraph {
            f.write_all(prof.flamegraph.as_bytes())
                .context("writing --flamegraph")?;
        }
        if let Some(mut f) = self.folded {
            f.write_all(prof.folded.as_bytes())
                .context("writing --folded")?;
        }
        Ok(())
    }
}

/// Run `sysmeter profile`.
pub fn profile(args: &ProfileArgs) -> anyhow::Result<Outcome> {
    let target = target(args)?;
    let settings = settings(args)?;
    let sink = Sink::open(&args.output, Stream::Stderr)?;
    let artifacts = Artifacts::create(args)?;
    sysmeter_sys::signal::install_interrupt_flag().context("installing the Ctrl-C handler")?;
    let started_ns = jiff::Timestamp::now().as_nanosecond() as i64;
    let mut progress = progress_printer();
    let prof = profile::profile(&target, &settings, &mut progress)?;
    if std::io::stderr().is_terminal() {
        eprint!("\r{:40}\r", "");
    }
    // For -p, Ctrl-C is the normal way to stop: the run is complete, not interrupted.
    let interrupted = prof.interrupted && matches!(target, Target::Launch(_));
    let host = crate::host::read_host();
    let results = prof.results.clone();
    let run = result::run_record(&target, &settings, host, started_ns, results, interrupted);
    artifacts.write(&prof)?;
    let finished = sink.finish(&run, Ending::default())?;
    Ok(finished.outcome(prof.exit.map(|e| e.shell_code())))
}
