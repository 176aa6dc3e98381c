//! Streaming bandwidth of a local transport: write for a fixed time to a reader process and
//! sample the rate every 10 ms. UDP gets a simple window of acknowledgements, because a
//! sender without flow control measures only how fast the kernel can drop datagrams.

use std::time::{Duration, Instant};

use super::experiment::bw_name;
use super::transport::{Transport, sink_peer};
use crate::experiments::peer::Near;
use crate::harness::{Ctx, ExperimentError};
use crate::model::{Metric, Unit};

/// Write size of the stream transports.
const STREAM_WRITE: usize = 128 * 1024;
/// Datagram size for UDP: 8 KiB plus headers fits one 16 KiB kernel buffer, so two windows
/// in flight stay well inside the default receive buffer (net.core.rmem_default).
const DATAGRAM: usize = 8 * 1024;
/// The UDP reader acknowledges every this many bytes; at most two windows are in flight.
const UDP_WINDOW: usize = 4 * DATAGRAM;
/// One rate sample.
const TICK: Duration = Duration::from_millis(10);

/// Stream to a reader pinned to `cpu` and return the rate metric (bytes per second).
pub fn bandwidth(
    ctx: &mut Ctx<'_>,
    t: Transport,
    cpu: Option<usize>,
    cross: bool,
) -> Result<Metric, ExperimentError> {
    let (write, ack) = if t.is_datagram() {
        (DATAGRAM, UDP_WINDOW)
    } else {
        (STREAM_WRITE, 0)
    };
    let (warm, measure) = match ctx.profile.name {
        "quick" => (30, 100),
        "thorough" => (300, 2000),
        // 25 samples of 10 ms: ipc's four experiments measure two rates each, and the
        // default run has to stay near 30 s.
        _ => (50, 250),
    };
    let (near, child) = sink_peer(t, write, ack, cpu)?;
    let mut flow = Flow::default();
    let buf = vec![0xa5u8; write];
    let mut send = |n: usize| -> Result<(), ExperimentError> {
        for _ in 0..n {
            near.send(&buf)?;
            if ack > 0 {
                flow.sent(&near, write, ack)?;
            }
        }
        Ok(())
    };
    let warm_until = Instant::now() + Duration::from_millis(warm);
    while Instant::now() < warm_until {
        send(1)?;
    }
    let (samples, total) = sample(&mut send, write, Duration::from_millis(measure))?;
    drop((near, child));
    let name = bw_name(cross);
    let mut m = ctx.metric(name, Unit::BytesPerSec, samples)?;
    let place = cpu.map_or("unpinned".into(), |c| format!("on CPU {c}"));
    m.note = Some(format!(
        "{} KiB {}, reader {place}; aggregate {:.2} GB/s{}",
        write / 1024,
        if t.is_datagram() {
            "datagrams"
        } else {
            "writes"
        },
        total / 1e9,
        if flow.lost_windows > 0 {
            format!(", {} lost windows", flow.lost_windows)
        } else {
            String::new()
        }
    ));
    Ok(m)
}

/// Write for `measure`, one write at a time; return the 10 ms rate samples and the
/// aggregate rate.
fn sample(
    send: &mut impl FnMut(usize) -> Result<(), ExperimentError>,
    write: usize,
    measure: Duration,
) -> Result<(Vec<f64>, f64), ExperimentError> {
    let start = Instant::now();
    let end = start + measure;
    let mut samples = Vec::new();
    let (mut mark, mut bytes, mut total) = (start, 0u64, 0u64);
    loop {
        send(1)?;
        bytes += write as u64;
        let now = Instant::now();
        if now - mark >= TICK {
            samples.push(bytes as f64 / (now - mark).as_secs_f64());
            total += bytes;
            (mark, bytes) = (now, 0);
            if sysmeter_sys::signal::interrupted() {
                return Err(ExperimentError::Interrupted);
            }
            if now >= end {
                let all = (now - start).as_secs_f64();
                return Ok((samples, total as f64 / all));
            }
        }
    }
}

/// Sender-side window accounting for the UDP bandwidth test.
#[derive(Default)]
struct Flow {
    unacked: usize,
    in_flight_windows: usize,
    lost_windows: u64,
}

impl Flow {
    /// After each datagram: once a window is complete, keep at most two outstanding by
    /// waiting for the reader's acknowledgement of the oldest. A lost datagram delays an
    /// acknowledgement past the wait; the window is then written off and counted.
    fn sent(&mut self, near: &Near, len: usize, window: usize) -> Result<(), ExperimentError> {
        self.unacked += len;
        if self.unacked < window {
            return Ok(());
        }
        self.unacked -= window;
        self.in_flight_windows += 1;
        if self.in_flight_windows < 2 {
            return Ok(());
        }
        let mut ack = [0u8; 1];
        match near.recv(&mut ack) {
            Ok(()) => self.in_flight_windows -= 1,
            Err(_) => {
                self.lost_windows += 1;
                self.in_flight_windows = 0;
            }
        }
        Ok(())
    }
}
