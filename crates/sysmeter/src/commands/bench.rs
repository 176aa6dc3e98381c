//! `sysmeter bench`: select, measure, store each experiment as it finishes, then print.

use std::io::Write;

use anyhow::Context;

use super::progress::BenchObserver;
use super::{Outcome, UsageError, color_allowed, emit, open_outputs};
use crate::cli::BenchArgs;
use crate::harness::{Params, Profile, RunOptions, choose_cpu, run_experiments};
use crate::model::Status;
use crate::{experiments, host, report};

/// Run the benchmark.
pub fn bench(args: &BenchArgs) -> anyhow::Result<Outcome> {
    sysmeter_sys::signal::install_interrupt_flag().context("installing the Ctrl-C handler")?;
    let selected = experiments::select(&args.names, &args.only)
        .map_err(|e| anyhow::Error::new(UsageError(e.to_string())))?;
    let (cpus, cpu) = choose_cpu(args.cpu).map_err(|e| anyhow::Error::new(UsageError(e)))?;
    let profile = if args.quick {
        Profile::quick()
    } else if args.thorough {
        Profile::thorough()
    } else {
        Profile::default_profile()
    };
    // Fail on a bad --out or database before measuring anything.
    let (mut out_file, store) = open_outputs(&args.output)?;
    let params = Params {
        max_size: args.max_size,
        remote: args.remote.clone(),
        token: args.token.clone().filter(|t| !t.is_empty()),
        dir: args.dir.clone(),
        remote_dir: args.remote_dir.clone(),
    };
    let opts = RunOptions {
        profile,
        cpu: Some(cpu),
        seed: args.seed,
        params,
    };
    // Said once the input is known to be good, just before measuring.
    if cfg!(debug_assertions) {
        // Unoptimised loops cost tens of ns per turn, so subtracted overheads swamp cheap
        // operations: the numbers still come out, but only a release build's mean much.
        eprintln!("warning: this is a debug build; measure with `cargo run --release -- bench`");
    }
    let mut observer = BenchObserver::new(selected.len(), store);
    let run = run_experiments(
        &selected,
        args.dir
            .as_deref()
            .map_or_else(host::read_host, host::read_host_for_dir),
        &opts,
        &cpus,
        cpu,
        &mut observer,
    );
    let (store, store_errors) = observer.finish();
    let mut store_errors = store_errors;
    if let Some(mut s) = store {
        match s.finish_run(&run.id, run.finished_ns, run.interrupted) {
            Ok(()) => eprintln!("stored as run {} in {}", run.id, s.path().display()),
            Err(e) => store_errors.push(e.to_string()),
        }
    }
    let text = report::render(
        &run,
        args.output.format,
        out_file.is_none() && color_allowed(),
    )?;
    match out_file.as_mut() {
        Some(f) => f.write_all(text.as_bytes()).context("writing --out")?,
        None => emit(&text)?,
    }
    for e in &store_errors {
        eprintln!("warning: results were printed but not stored: {e}");
    }
    Ok(if run.interrupted {
        eprintln!(
            "interrupted: kept {} finished experiment(s)",
            run.results.len()
        );
        Outcome::Interrupted
    } else if run.results.iter().any(|r| r.status == Status::Failed) || !store_errors.is_empty() {
        Outcome::MeasurementFailed
    } else {
        Outcome::Success
    })
}
