//! `sysmeter calls`: validate the arguments, trace the library calls (diagnose::calls), price
//! them with the latest stored bench of this host, store the run, print the summary to
//! stderr (or --out), then pass the command's exit code through.

use anyhow::Context;

use super::output::{Ending, Sink, Stream};
use super::trace::{LiveCount, failed, now_ns};
use super::{Outcome, UsageError};
use crate::cli::{CALLS_TARGET, CallsArgs};
use crate::diagnose::calls::{self, CallsConfig, CallsOutput, DEFAULT_SET, select};
use crate::diagnose::price::{Kind, price};
use crate::diagnose::trace::CommandState;
use crate::host;
use crate::model::{RunConfig, RunKind, RunRecord};

fn usage(text: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(UsageError(text.into()))
}

/// The validated configuration from the arguments.
fn config(args: &CallsArgs) -> anyhow::Result<CallsConfig> {
    let target = args
        .target
        .target(CALLS_TARGET)
        .map_err(|e| usage(e.to_string()))?;
    let given = if args.calls.is_empty() {
        vec![DEFAULT_SET.to_string()]
    } else {
        args.calls.clone()
    };
    let patterns = select::parse(&given).ok_or_else(|| {
        usage(
            "-e wants function names or globs, comma separated, optionally OBJECT:NAME \
             (e.g. -e 'malloc,str*,libc.so.6:memcpy')",
        )
    })?;
    Ok(CallsConfig {
        target,
        patterns,
        follow_forks: args.follow_forks,
        duration: args.target.duration,
    })
}

fn record(output: &CallsOutput, started_ns: i64) -> RunRecord {
    let config = RunConfig {
        profile: "calls".into(),
        cpu: None,
        selected: vec![calls::CALLS_ID.into()],
        target_ci_width: 0.0,
        calibration: None,
        seed: 1,
    };
    let mut run = RunRecord::new(RunKind::Calls, started_ns, host::read_host(), config);
    run.finished_ns = Some(now_ns());
    run.results = vec![output.result.clone()];
    run
}

/// The latest bench run of this host in the store, to price calls with (`None` without a
/// store or a bench run).
pub(super) fn latest_bench(sink: &mut Sink) -> Option<RunRecord> {
    let store = sink.take_store()?;
    let host = host::hostname();
    let found = store
        .list_host_runs(usize::MAX, Some(&host))
        .ok()
        .and_then(|runs| runs.into_iter().find(|r| r.kind == RunKind::Bench.as_str()))
        .and_then(|r| store.load_run(&r.id).ok());
    sink.put_store(Some(store));
    found
}

/// Run `sysmeter calls`.
pub fn calls(args: &CallsArgs) -> anyhow::Result<Outcome> {
    sysmeter_sys::signal::install_interrupt_flag().context("installing the Ctrl-C handler")?;
    let cfg = config(args)?;
    let mut sink = Sink::open(&args.output, Stream::Stderr)?;
    let started_ns = now_ns();
    let mut live = LiveCount::new("library calls");
    let traced = calls::calls(&cfg, &mut live);
    live.bar.finish_and_clear();
    let output = match traced {
        Ok(o) => o,
        Err(e) => {
            let (code, is_usage) = (e.exit_code(), e.is_usage());
            return failed(e, code, is_usage);
        }
    };
    let mut output = output;
    let bench = latest_bench(&mut sink);
    price(
        &mut output.result,
        Kind::Library,
        bench.as_ref(),
        output.cpu_ns,
    );
    let run = record(&output, started_ns);
    let finished = sink.finish(&run, Ending::default())?;
    let code = match output.command {
        CommandState::NotLaunched => None,
        CommandState::Exited(code) => Some(code),
        CommandState::StillRunning(pending) => Some(pending.wait()?),
    };
    Ok(finished.outcome(code))
}
