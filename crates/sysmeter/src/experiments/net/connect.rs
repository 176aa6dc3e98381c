//! `net.connect`: the cost of a short TCP connection to the remote host, split into the
//! handshake and the request-and-close that follows.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use super::experiment::{Kind, Net};
use super::remote::{Remote, by_profile, io_failed, time_cap};
use crate::harness::{Ctx, ExperimentError, Measured};
use crate::model::Unit;
use crate::wire::protocol::{Hello, Test, VERSION};

/// `net.connect`.
pub static CONNECT: Net = Net(Kind::Connect, include_str!("connect.md"));

/// Metric names.
pub const SETUP: &str = "connect (handshake)";
const REQUEST: &str = "request + close seen";
const TOTAL: &str = "whole short connection";

/// Measure `count` connections.
pub fn run(ctx: &mut Ctx<'_>, remote: &Remote, out: &mut Measured) -> Result<(), ExperimentError> {
    let count = by_profile(ctx, 50, 500, 2000);
    let hello = Hello {
        version: VERSION,
        test: Test::Accept,
        token: remote.token.clone(),
        secs: None,
        size: None,
    }
    .encode();
    let fail = io_failed(remote, "a short connection");
    let mut times = [Vec::new(), Vec::new(), Vec::new()];
    let until = time_cap(ctx);
    let mut i = 0;
    while i < count + 5 {
        if sysmeter_sys::signal::interrupted() {
            return Err(ExperimentError::Interrupted);
        }
        if i > 15 && Instant::now() > until {
            break;
        }
        let Some(t) = one(remote, hello.as_bytes(), &fail)? else {
            if Instant::now() > until {
                return Err(ExperimentError::Failed(format!(
                    "the server at {} stayed busy (at its client cap) for the whole test; retry when it is free",
                    remote.addr
                )));
            }
            std::thread::sleep(Duration::from_millis(10));
            continue;
        };
        if i >= 5 {
            for (samples, ns) in times.iter_mut().zip(t) {
                samples.push(ns);
            }
        }
        i += 1;
    }
    let done = times[0].len();
    let [a, b, c] = times;
    for (name, samples) in [(SETUP, a), (REQUEST, b), (TOTAL, c)] {
        let m = ctx.noted_metric(
            name,
            Unit::Ns,
            samples,
            format!("{done} connections to {}", remote.addr),
        )?;
        out.metrics.push(m);
    }
    Ok(())
}

/// One short connection: its setup, request and whole times in ns, or `None` when the
/// server answered `busy`. A server counts a connection until its thread has seen the
/// close, so under load the last few can still count against its per-address cap for a
/// moment; such a connection is not timed, and the caller makes it again.
fn one(
    remote: &Remote,
    hello: &[u8],
    fail: &impl Fn(std::io::Error) -> ExperimentError,
) -> Result<Option<[f64; 3]>, ExperimentError> {
    let t0 = Instant::now();
    let mut s = TcpStream::connect_timeout(&remote.addr, super::remote::TIMEOUT).map_err(fail)?;
    let t1 = Instant::now();
    s.set_nodelay(true).map_err(fail)?;
    s.set_read_timeout(Some(super::remote::TIMEOUT))
        .map_err(fail)?;
    s.write_all(hello).map_err(fail)?;
    let mut reply = Vec::new();
    let mut buf = [0u8; 512];
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => reply.extend_from_slice(&buf[..n]),
            // A refusal can end in a reset: the server closed with our hello unread.
            Err(_) if reply.starts_with(b"ERR busy") => return Ok(None),
            Err(e) => return Err(fail(e)),
        }
    }
    let t2 = Instant::now();
    if reply.starts_with(b"ERR busy") {
        return Ok(None);
    }
    if !reply.starts_with(b"OK accept") {
        return Err(ExperimentError::Failed(format!(
            "the server at {} answered the accept test with '{}'",
            remote.addr,
            String::from_utf8_lossy(&reply).trim()
        )));
    }
    let ns = |d: Duration| d.as_nanos() as f64;
    Ok(Some([ns(t1 - t0), ns(t2 - t1), ns(t2 - t0)]))
}
