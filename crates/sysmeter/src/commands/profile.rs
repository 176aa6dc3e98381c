//! `sysmeter profile`: validate, sample (`diagnose::profile` on-CPU, `diagnose::offcpu` with
//! `--off-cpu`, both with `--both`: this file hands `offcpu` the on-CPU part), store, write
//! the flame graph and folded stacks, and print the report to stderr (or `--out`): the
//! profiled command owns stdout. Exits with the command's exit code (130 when Ctrl-C stopped
//! it).

use std::io::IsTerminal;
use std::path::Path;
use std::time::Duration;

use super::diagnosis::{Diagnosed, DiagnosisError, checked_target, diagnose_rounds, ended};
use super::outfile::{OutFile, open_opt};
use super::output::Stream;
use super::{Outcome, UsageError, console, protected};
use crate::cli::{PROFILE_TARGET, ProfileArgs};
use crate::diagnose::observe::backend::Request;
use crate::diagnose::observe::in_kernel::Backend;
use crate::diagnose::observe::sampled::SampledError;
use crate::diagnose::observe::sampled::results::Profile;
use crate::diagnose::observe::target::Target;
use crate::diagnose::offcpu;
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

/// The profile's settings, and with `--off-cpu` or `--both` the off-CPU backend.
fn settings(args: &ProfileArgs) -> anyhow::Result<(Settings, Option<Backend>)> {
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
        true => Some(off_cpu_backend(args.backend)?),
        false => None,
    };
    let settings = Settings {
        frequency: args.frequency,
        duration: args.target.duration,
        on_cpu: !args.off_cpu,
        off_cpu,
        ..Settings::default()
    };
    Ok((settings, off_backend))
}

/// The off-CPU backend `--backend` asks for, checked here (exit 2 with the reason when it
/// cannot run), and announced in one line on stderr.
fn off_cpu_backend(request: Request<Backend>) -> anyhow::Result<Backend> {
    let chosen = offcpu::choose(request).map_err(|e| usage(e.to_string()))?;
    if chosen.backend == Backend::Perf
        && let Err(why) = offcpu::available()
    {
        // Say why the in-kernel backend was not taken either.
        let bpf = match request {
            Request::Auto => format!(" ({})", chosen.because),
            Request::Only(_) => String::new(),
        };
        return Err(usage(format!(
            "--off-cpu and --both cannot run here: {why}{bpf}"
        )));
    }
    console::errln(chosen.line("off-CPU"));
    Ok(chosen.backend)
}

/// A live counter on stderr, only when stderr is a terminal: CPU samples, or with
/// `--off-cpu` alone the off-CPU intervals so far.
fn progress_printer(what: &'static str) -> impl FnMut(u64, Duration) {
    let tty = std::io::stderr().is_terminal();
    move |count, elapsed| {
        if tty {
            console::progress(&format!(
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
    fn write(self, prof: &Profile) -> anyhow::Result<()> {
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

/// Samples `target`: on-CPU (`profile`), off-CPU (`offcpu`, given its backend), or both, the
/// on-CPU part calibrated first and handed to `offcpu`'s session.
fn sample(
    target: &Target,
    settings: &Settings,
    off_backend: Option<Backend>,
    progress: &mut dyn FnMut(u64, Duration),
) -> Result<Profile, SampledError> {
    let Some(backend) = off_backend else {
        return profile::profile(target, settings, progress);
    };
    let on_cpu = match settings.on_cpu {
        true => Some(profile::on_cpu(target, settings)?),
        false => None,
    };
    let off = offcpu::Settings {
        sampling: settings.sampling(),
        backend,
    };
    offcpu::profile(target, &off, on_cpu, progress)
}

/// Profiling errors end as failures (exit 1): the target was checked before.
impl DiagnosisError for SampledError {
    fn is_usage(&self) -> bool {
        false
    }
}

/// Run `sysmeter profile`.
pub fn profile(args: &ProfileArgs) -> anyhow::Result<Outcome> {
    let target = match checked_target(&args.target, PROFILE_TARGET)? {
        Ok(target) => target,
        Err(cannot_start) => return Ok(cannot_start),
    };
    let (settings, off_backend) = settings(args)?;
    let mut artifacts = Some(Artifacts::create(args)?);
    let (rounds, mut round) = (args.rounds.rounds, 0);
    let mut progress = progress_printer(match settings.on_cpu {
        true => "samples",
        false => "off-CPU intervals",
    });
    diagnose_rounds(
        (&args.output, Stream::Stderr, rounds),
        || {
            let prof = sample(&target, &settings, off_backend, &mut progress);
            if std::io::stderr().is_terminal() {
                console::progress(&format!("\r{:40}\r", ""));
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
            // The files hold the last round (or the one Ctrl-C stopped).
            round += 1;
            if (round == rounds || prof.interrupted)
                && let Some(files) = artifacts.take()
            {
                files.write(&prof)?;
            }
            Ok(Diagnosed::new(run, ended(prof.exit)))
        },
    )
}
