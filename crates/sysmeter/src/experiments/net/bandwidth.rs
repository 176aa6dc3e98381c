//! `net.bandwidth`: TCP throughput to the server (its sink) and from it (its source), over
//! one connection and over several at once.

use std::io::{Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::experiment::{Kind, Net};
use super::remote::{Remote, by_profile, io_failed};
use crate::harness::{Ctx, ExperimentError, Measured};
use crate::model::Unit;
use crate::wire::protocol::Test;

/// `net.bandwidth`.
pub static BANDWIDTH: Net = Net(Kind::Bandwidth, include_str!("bandwidth.md"));

const WRITE: usize = 128 * 1024;
/// Streams of the parallel measurements.
pub const STREAMS: usize = 4;

/// Metric name for a direction and stream count.
pub fn name(upload: bool, streams: usize) -> String {
    format!(
        "{} {streams} stream{}",
        if upload { "upload" } else { "download" },
        if streams == 1 { "" } else { "s" }
    )
}

/// Measure both directions with 1 and [`STREAMS`] streams.
pub fn run(ctx: &mut Ctx<'_>, remote: &Remote, out: &mut Measured) -> Result<(), ExperimentError> {
    let secs = by_profile(ctx, 500, 2000, 5000) as u64;
    let (measure, warm) = (Duration::from_millis(secs), Duration::from_millis(secs / 5));
    for upload in [true, false] {
        for streams in [1, STREAMS] {
            let samples = flow(ctx.cpus, remote, upload, streams, warm, measure)?;
            let nm = name(upload, streams);
            let mut m = ctx.metric(&nm, Unit::BytesPerSec, samples)?;
            m.note = Some(format!(
                "{:.0} MB/s median, 50 ms samples over {:.1} s",
                m.summary.median / 1e6,
                measure.as_secs_f64()
            ));
            out.metrics.push(m);
        }
    }
    Ok(())
}

/// Many download streams against one (`Experiment::metric_findings`).
pub fn streams_gain(out: &mut Measured) {
    if let (Some(one), Some(many)) = (
        out.median(&name(false, 1)),
        out.median(&name(false, STREAMS)),
    ) {
        let r = crate::stats::ratio(many, one);
        out.find(
            "streams_gain",
            format!(
                "{STREAMS} download streams move {} one stream: {}",
                r.map_or("n/a x".into(), |r| format!("{r:.2}x")),
                if r.is_some_and(|r| r > 1.3) {
                    "one connection does not fill the path (window, latency or one CPU per stream is the limit)."
                } else {
                    "one connection already fills the path."
                }
            ),
            r,
        );
    }
}

/// Run `streams` streams, return the 50 ms rate samples taken after the warm-up.
fn flow(
    cpus: &[usize],
    remote: &Remote,
    upload: bool,
    streams: usize,
    warm: Duration,
    measure: Duration,
) -> Result<Vec<f64>, ExperimentError> {
    let total = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let secs = (warm + measure).as_secs() as u32 + 5;
    let test = if upload { Test::Sink } else { Test::Source };
    // Every connection first, so a refusal leaves no stream running.
    let sessions = (0..streams)
        .map(|_| remote.open(test, secs, (!upload).then_some(WRITE as u32)))
        .collect::<Result<Vec<_>, _>>()?;
    let mut workers = Vec::new();
    for s in sessions {
        let (total, stop) = (Arc::clone(&total), Arc::clone(&stop));
        let fail = io_failed(remote, if upload { "an upload" } else { "a download" });
        // Streams may run on every allowed CPU, as iperf3's do: pinned to the measuring
        // CPU, several streams would measure that one CPU rather than the network.
        let cpus = cpus.to_vec();
        let h: JoinHandle<Result<(), ExperimentError>> = std::thread::spawn(move || {
            let _ = sysmeter_sys::sched::set_current_thread_cpus(&cpus);
            pump(s.stream, upload, &total, &stop).map_err(fail)
        });
        workers.push(h);
    }
    let samples = sample(&total, warm, measure);
    stop.store(true, Ordering::Relaxed);
    for w in workers {
        w.join()
            .map_err(|_| ExperimentError::Failed("a bandwidth stream thread panicked".into()))??;
    }
    samples
}

/// Write (upload) or read (download) 128 KiB at a time until `stop`, adding to `total`.
fn pump(
    mut stream: std::net::TcpStream,
    upload: bool,
    total: &AtomicU64,
    stop: &AtomicBool,
) -> std::io::Result<()> {
    let mut buf = vec![0x33u8; WRITE];
    stream.set_read_timeout(Some(super::remote::TIMEOUT))?;
    stream.set_write_timeout(Some(super::remote::TIMEOUT))?;
    while !stop.load(Ordering::Relaxed) {
        let n = match if upload {
            stream.write(&buf)
        } else {
            stream.read(&mut buf)
        } {
            Ok(n) => n,
            // Blocked when told to stop: the measurement is over anyway.
            Err(_) if stop.load(Ordering::Relaxed) => return Ok(()),
            Err(e) => return Err(e),
        };
        if n == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "the server closed the stream early",
            ));
        }
        total.fetch_add(n as u64, Ordering::Relaxed);
    }
    Ok(())
}

fn sample(
    total: &AtomicU64,
    warm: Duration,
    measure: Duration,
) -> Result<Vec<f64>, ExperimentError> {
    std::thread::sleep(warm);
    let tick = Duration::from_millis(50);
    let end = Instant::now() + measure;
    let mut last = (Instant::now(), total.load(Ordering::Relaxed));
    let mut samples = Vec::new();
    while Instant::now() < end {
        if sysmeter_sys::signal::interrupted() {
            return Err(ExperimentError::Interrupted);
        }
        std::thread::sleep(tick);
        let now = (Instant::now(), total.load(Ordering::Relaxed));
        let secs = (now.0 - last.0).as_secs_f64();
        samples.push((now.1 - last.1) as f64 / secs);
        last = now;
    }
    Ok(samples)
}
