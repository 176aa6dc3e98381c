//! `sysmeter live`: validate, calibrate the profile's overhead once, start the local web
//! server (its URL with the token printed on stderr first), watch the program
//! (`diagnose::live`) until it ends or Ctrl-C (or with `--keep-open` until Ctrl-C after it
//! ended), then store the whole session as a profile run and print its report on stderr.
//! A window saved from the page, and `/debug/pprof/profile`, are drawn by `profile`'s own
//! builder from the named samples of that window, so `show`, `report`, `compare` and
//! `export` read them like any profile. The program keeps its stdout, stderr and exit code.

mod http;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context;

use super::diagnosis::{checked_target, now_ns};
use super::output::{Ending, Sink, Stream};
use super::{Outcome, UsageError, console};
use crate::cli::{LIVE_TARGET, LiveArgs};
use crate::diagnose::live::{self, CallCounter, Live};
use crate::diagnose::observe::sampled::results::OnCpu;
use crate::diagnose::observe::sampled::session::Recording;
use crate::diagnose::observe::target::Target;
use crate::diagnose::profile::{self, Settings, result};
use crate::model::RunRecord;
use crate::report::export::pprof;

/// What the web server's workers share.
pub struct Served {
    live: Live,
    on_cpu: Box<dyn OnCpu>,
    store: http::SharedStore,
    token: Option<String>,
    target: Target,
    settings: Settings,
}

impl Served {
    /// The profile run of `rec` and `analysis` (a window, or the whole session).
    fn record(
        &self,
        rec: &Recording,
        analysis: &crate::diagnose::observe::sampled::aggregate::Analysis,
        started_ns: i64,
    ) -> anyhow::Result<RunRecord> {
        let drawn = self.on_cpu.draw(rec, analysis)?;
        let host = crate::host::read_host();
        let interrupted = false;
        Ok(result::run_record(
            &self.target,
            &self.settings,
            host,
            started_ns,
            drawn.results,
            interrupted,
        ))
    }

    /// Stores the last `span` seconds (`None`: since the start) as a profile run; its id.
    fn save(&self, span: Option<u64>) -> anyhow::Result<String> {
        let (rec, analysis) = self.live.window(span, None);
        let started_ns = now_ns() - rec.wall_ns as i64;
        let run = self.record(&rec, &analysis, started_ns)?;
        let mut store = self.store.lock().unwrap_or_else(|e| e.into_inner());
        let Some(store) = store.as_mut() else {
            anyhow::bail!("this session stores nothing (--no-store); run live without it");
        };
        store.save_run(&run)?;
        Ok(run.id)
    }

    /// The pprof profile of the seconds after second `from`.
    fn pprof(&self, from: u64) -> anyhow::Result<Vec<u8>> {
        let (rec, analysis) = self.live.window(None, Some(from));
        let started_ns = now_ns() - rec.wall_ns as i64;
        let run = self.record(&rec, &analysis, started_ns)?;
        Ok(pprof::encode(&run)?)
    }
}

/// A random token of 128 bits, as hex.
fn token() -> String {
    format!("{:016x}{:016x}", fastrand::u64(..), fastrand::u64(..))
}

/// What this session cannot see, one sentence each.
fn unseen(counter: &Option<Box<dyn CallCounter>>) -> Vec<String> {
    let mut out = vec![
        "Off-CPU stacks, library calls, the heap and lock waits are not in the live view yet: \
         run `sysmeter profile --both`, `calls`, `alloc` or `locks` on the program for them."
            .to_string(),
    ];
    if counter.is_none() {
        out.push(
            "System calls are not counted: the in-kernel counter needs root (or CAP_BPF and \
             CAP_PERFMON) and kernel BTF."
                .into(),
        );
    }
    out
}

/// Run `sysmeter live`.
pub fn live(args: &LiveArgs) -> anyhow::Result<Outcome> {
    let target = match checked_target(&args.target, LIVE_TARGET)? {
        Ok(t) => t,
        Err(cannot_start) => return Ok(cannot_start),
    };
    if args.frequency == 0 || args.frequency > 10_000 {
        return Err(anyhow::Error::new(UsageError(format!(
            "-F {} is outside 1..=10000; choose a frequency in that range, e.g. -F 199",
            args.frequency
        ))));
    }
    sysmeter_sys::signal::install_interrupt_flag().context("installing the Ctrl-C handler")?;
    let mut sink = Sink::open(&args.output, Stream::Stderr)?;
    let settings = Settings {
        frequency: args.frequency,
        duration: args.target.duration,
        ..Settings::default()
    };
    let counter = crate::diagnose::trace::live_counter();
    let served = Arc::new(Served {
        live: Live::new(&target, args.frequency, unseen(&counter)),
        on_cpu: profile::on_cpu(&target, &settings)?,
        store: Mutex::new(sink.take_store()),
        token: (!args.no_token).then(token),
        target: target.clone(),
        settings: settings.clone(),
    });
    let server = http::start(args.bind, args.port, Arc::clone(&served))?;
    let query = served
        .token
        .as_ref()
        .map_or(String::new(), |t| format!("?token={t}"));
    console::errln(format!("sysmeter live: http://{}/{query}", server.addr));
    let started_ns = now_ns();
    let rec = live::observe(&target, &settings.sampling(), &served.live, counter)?;
    if args.keep_open && !sysmeter_sys::signal::interrupted() {
        console::errln("sysmeter live: the program ended; the page stays open until Ctrl-C");
        while !sysmeter_sys::signal::interrupted() {
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    drop(server);
    finish(&served, rec, started_ns, sink)
}

/// Stores the whole session as a profile run and prints its report; the program's exit
/// code passes through.
fn finish(
    served: &Served,
    rec: Recording,
    started_ns: i64,
    mut sink: Sink,
) -> anyhow::Result<Outcome> {
    let (mut whole, analysis) = served.live.window(None, None);
    whole.exit = rec.exit;
    whole.stop = rec.stop;
    whole.wall_ns = rec.wall_ns;
    whole.own_cpu_ns = rec.own_cpu_ns;
    whole.data.raw.lost = rec.data.raw.lost;
    whole.data.raw.throttles = rec.data.raw.throttles;
    whole.data.kernel = rec.data.kernel;
    whole.data.target_cpu_ns = rec.data.target_cpu_ns;
    let mut run = served.record(&whole, &analysis, started_ns)?;
    run.interrupted = rec.interrupted() && matches!(served.target, Target::Launch(_));
    let store = served
        .store
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take();
    sink.put_store(store);
    let finished = sink.finish(&run, Ending::default())?;
    Ok(finished.outcome(rec.exit.map(|(e, _)| e.shell_code())))
}
