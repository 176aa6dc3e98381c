//! TCP connection cost over loopback: connect+accept, and a close seen by the peer, timed
//! one connection at a time for a bounded number of connections.

use std::io::Read;
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::time::Instant;

use crate::harness::{Ctx, ExperimentError, Measured};
use crate::model::Unit;

/// Metric: connect() returned and accept() returned the new socket.
pub const SETUP: &str = "connect+accept";
/// Metric: the accepting side's close() until the connecting side's read() sees EOF.
pub const TEARDOWN: &str = "close seen by peer";

fn count(profile: &str) -> usize {
    match profile {
        "quick" => 200,
        "thorough" => 5000,
        _ => 2000,
    }
}

/// Measure setup and teardown per connection and add both metrics to `out`.
pub fn measure(ctx: &mut Ctx<'_>, out: &mut Measured) -> Result<(), ExperimentError> {
    let io = |what: &'static str| move |e: std::io::Error| ExperimentError::io(what, e);
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .map_err(io("listen on 127.0.0.1 (is the loopback interface up?)"))?;
    let addr = listener
        .local_addr()
        .map_err(io("read the listener's address"))?;
    let n = count(ctx.profile.name);
    let (mut setup, mut teardown) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let mut buf = [0u8; 16];
    // Warm the path (listener hash, route cache, allocator) before keeping samples.
    for i in 0..n + 20 {
        if i % 64 == 0 && sysmeter_sys::signal::interrupted() {
            return Err(ExperimentError::Interrupted);
        }
        let t0 = Instant::now();
        let mut client =
            TcpStream::connect(addr).map_err(io("connect to the loopback listener"))?;
        let (server, _) = listener
            .accept()
            .map_err(io("accept a loopback connection"))?;
        let t1 = Instant::now();
        drop(server);
        let eof = client.read(&mut buf).map_err(io("read the peer's close"))?;
        let t2 = Instant::now();
        if eof != 0 {
            return Err(ExperimentError::Failed(
                "the loopback peer sent data instead of closing".into(),
            ));
        }
        if i >= 20 {
            setup.push((t1 - t0).as_nanos() as f64);
            teardown.push((t2 - t1).as_nanos() as f64);
        }
    }
    for (name, samples, note) in [
        (SETUP, setup, "per connection; handshake inside connect()"),
        (TEARDOWN, teardown, "per connection; close() to read() = 0"),
    ] {
        let m = ctx.noted_metric(name, Unit::Ns, samples, format!("{note}; {n} connections"))?;
        out.metrics.push(m);
    }
    Ok(())
}
