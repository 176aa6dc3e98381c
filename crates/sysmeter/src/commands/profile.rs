//! `sysmeter profile`: validate, sample (`diagnose::profile`), store, write the flame graph
//! and folded stacks, and print the report to stderr (or `--out`): the profiled command owns
//! stdout. Exits with the command's exit code (130 when Ctrl-C stopped it).

use std::io::IsTerminal;
use std::path::Path;
use std::time::Duration;

use super::diagnosis::{Diagnosed, DiagnosisError, diagnose, ended};
use super::outfile::{OutFile, open_opt};
use super::output::Stream;
use super::{Outcome, UsageError, console, protected};
use crate::cli::{BpfBackendArg, PROFILE_TARGET, ProfileArgs};
use crate::diagnose::observe::target::Target;
use crate::diagnose::profile::offcpu::Backend;
use crate::diagnose::profile::{self, Settings, result};

fn usage(message: String) -> anyhow::Error {
    anyhow::Error::new(UsageError(message))
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
    let off_cpu = args.off_cpu || args.both;
    let off_backend = match off_cpu {
        true => off_cpu_backend(args.backend)?,
        false => Backend::Perf,
    };
    Ok(Settings {
        frequency: args.frequency,
        duration: args.target.duration,
        on_cpu: !args.off_cpu,
        off_cpu,
        off_backend,
        ..Settings::default()
    })
}

/// The off-CPU backend `--backend` asks for, checked here (exit 2 with the reason when it
/// cannot run), and announced in one line on stderr.
fn off_cpu_backend(arg: BpfBackendArg) -> anyhow::Result<Backend> {
    let request = match arg {
        BpfBackendArg::Auto => None,
        BpfBackendArg::Bpf => Some(Backend::Bpf),
        BpfBackendArg::Perf => Some(Backend::Perf),
    };
    let (backend, line) = profile::offcpu::choose(request).map_err(usage)?;
    if backend == Backend::Perf
        && let Err(why) = profile::offcpu::available()
    {
        // Say why the in-kernel backend was not taken either.
        let bpf = match request {
            None => line
                .strip_prefix("off-CPU backend: perf")
                .unwrap_or_default(),
            Some(_) => "",
        };
        return Err(usage(format!(
            "--off-cpu and --both cannot run here: {why}{bpf}"
        )));
    }
    console::errln(line);
    Ok(backend)
}

/// A live counter on stderr, only when stderr is a terminal: CPU samples, or with
/// `--off-cpu` alone the off-CPU intervals so far.
fn progress_printer(what: &'static str) -> impl FnMut(u64, Duration) {
    let tty = std::io::stderr().is_terminal();
    move |count, elapsed| {
        if tty {
            console::err(&format!(
                "\rprofiling: {count} {what}, {:.1} s ",
                elapsed.as_secs_f64()
            ));
        }
    }
}

/// The files of `--flamegraph` and `--folded`, checked before anything runs (so a bad path
/// fails at once, not after a long profile) and written by the one output rule.
struct Artifacts {
    flamegraph: Option<OutFile>,
    folded: Option<OutFile>,
    /// With `--both`: the off-CPU flame graph and folded stacks.
    off_flamegraph: Option<OutFile>,
    off_folded: Option<OutFile>,
}

/// `FILE.svg` → `FILE.offcpu.svg`, `FILE` → `FILE.offcpu`.
fn off_cpu_path(path: Option<&Path>) -> Option<std::path::PathBuf> {
    let path = path?;
    Some(match path.extension() {
        Some(ext) => path.with_extension(format!("offcpu.{}", ext.to_string_lossy())),
        None => path.with_extension("offcpu"),
    })
}

impl Artifacts {
    fn create(args: &ProfileArgs) -> anyhow::Result<Artifacts> {
        let protect = match args.output.no_store {
            true => Vec::new(),
            false => protected(&args.output.db),
        };
        let both = |p: Option<&Path>| off_cpu_path(p).filter(|_| args.both);
        Ok(Artifacts {
            flamegraph: open_opt(args.flamegraph.as_deref(), "--flamegraph", &protect)?,
            folded: open_opt(args.folded.as_deref(), "--folded", &protect)?,
            off_flamegraph: open_opt(
                both(args.flamegraph.as_deref()).as_deref(),
                "--flamegraph",
                &protect,
            )?,
            off_folded: open_opt(
                both(args.folded.as_deref()).as_deref(),
                "--folded",
                &protect,
            )?,
        })
    }

    /// Writes the flame graph and the folded stacks.
    fn write(self, prof: &profile::Profile) -> anyhow::Result<()> {
        if let Some(f) = self.flamegraph {
            f.write(&prof.flamegraph)?;
        }
        if let Some(f) = self.folded {
            f.write(&prof.folded)?;
        }
        if let Some((folded, svg)) = &prof.off_cpu {
            if let Some(f) = self.off_flamegraph {
                f.write(svg)?;
            }
            if let Some(f) = self.off_folded {
                f.write(folded)?;
            }
        }
        Ok(())
    }
}

/// Profiling errors end as failures (exit 1): the target was checked before.
impl DiagnosisError for profile::ProfileError {
    fn is_usage(&self) -> bool {
        false
    }
}

/// Run `sysmeter profile`.
pub fn profile(args: &ProfileArgs) -> anyhow::Result<Outcome> {
    let target = match super::diagnosis::checked_target(&args.target, PROFILE_TARGET)? {
        Ok(t) => t,
        Err((code, why)) => {
            console::errln(format!("error: {why}"));
            return Ok(Outcome::Code(code));
        }
    };
    let settings = settings(args)?;
    let artifacts = Artifacts::create(args)?;
    let mut progress = progress_printer(match settings.on_cpu {
        true => "samples",
        false => "off-CPU intervals",
    });
    diagnose(
        (&args.output, Stream::Stderr),
        || {
            let prof = profile::profile(&target, &settings, &mut progress);
            if std::io::stderr().is_terminal() {
                console::err(&format!("\r{:40}\r", ""));
            }
            prof
        },
        |prof, _, started_ns| {
            // For -p, Ctrl-C is the normal way to stop: the run is complete, not interrupted.
            let interrupted = prof.interrupted && matches!(target, Target::Launch(_));
            let host = crate::host::read_host();
            let results = prof.results.clone();
            let run =
                result::run_record(&target, &settings, host, started_ns, results, interrupted);
            artifacts.write(&prof)?;
            Ok(Diagnosed::new(run, ended(prof.exit)))
        },
    )
}
