//! `sysmeter bench`: select, measure, store each experiment as it finishes, then print.

use anyhow::Context;

use super::output::{Ending, Sink, Stream};
use super::progress::BenchObserver;
use super::{Outcome, UsageError};
use crate::cli::BenchArgs;
use crate::harness::{Params, Profile, RunOptions, choose_cpu, run_experiments};
use crate::{experiments, host};

/// Run the benchmark.
pub fn bench(args: &BenchArgs) -> anyhow::Result<Outcome> {
    sysmeter_sys::signal::install_interrupt_flag().context("installing the Ctrl-C handler")?;
    let selected = experiments::select(&args.names, &args.only)
        .map_err(|e| anyhow::Error::new(UsageError(e.to_string())))?;
    let (cpus, cpu) = choose_cpu(args.cpu).map_err(|e| anyhow::Error::new(UsageError(e)))?;
    // Fail on a bad --out or database before measuring anything.
    let mut sink = Sink::open(&args.output, Stream::Stdout)?;
    remove_stale_test_dirs(args);
    sink.full(args.full);
    if args.with_samples {
        sink.keep_samples();
    }
    let opts = options(args, cpu);
    // Said once the input is known to be good, just before measuring.
    if cfg!(debug_assertions) {
        // Unoptimised loops cost tens of ns per turn, so subtracted overheads swamp cheap
        // operations: the numbers still come out, but only a release build's mean much.
        super::console::errln(
            "warning: this is a debug build; measure with `cargo run --release -- bench`",
        );
    }
    let mut observer = BenchObserver::new(selected.len(), sink.take_store());
    let host = args
        .dir
        .as_deref()
        .map_or_else(host::read_host, host::read_host_for_dir);
    let run = run_experiments(&selected, host, &opts, &cpus, cpu, &mut observer);
    let (store, store_errors) = observer.finish();
    sink.put_store(store);
    let ending = Ending {
        stored_as_it_went: true,
        store_errors,
        ..Ending::default()
    };
    let finished = sink.finish(&run, ending)?;
    if run.interrupted {
        super::console::errln(format!(
            "interrupted: kept {} finished experiment(s)",
            run.results.len()
        ));
    }
    Ok(finished.outcome(None))
}

/// Removes the fs test directories of benches that were killed (in `--dir` or the working
/// directory, and `--remote-dir`), and says so in one line.
fn remove_stale_test_dirs(args: &BenchArgs) {
    let local = args.dir.clone().or_else(|| std::env::current_dir().ok());
    for base in local.iter().chain(args.remote_dir.iter()) {
        let removed = experiments::fs::stale::remove_stale(base);
        if removed.dirs > 0 {
            super::console::errln(format!(
                "removed {} test director{} ({}) left in {} by a sysmeter bench that was killed",
                removed.dirs,
                if removed.dirs == 1 { "y" } else { "ies" },
                crate::model::units::size(removed.bytes),
                base.display()
            ));
        }
    }
}

/// The harness options from the arguments.
fn options(args: &BenchArgs, cpu: usize) -> RunOptions {
    let profile = if args.quick {
        Profile::quick()
    } else if args.thorough {
        Profile::thorough()
    } else {
        Profile::default_profile()
    };
    let params = Params {
        max_size: args.max_size,
        remote: args.remote.clone(),
        token: args.token.clone().filter(|t| !t.is_empty()),
        dir: args.dir.clone(),
        remote_dir: args.remote_dir.clone(),
    };
    let rounds = args.rounds.map_or(profile.rounds, usize::from);
    RunOptions {
        profile,
        cpu: Some(cpu),
        seed: args.seed,
        params,
        rounds,
    }
}

#[cfg(test)]
mod tests;
