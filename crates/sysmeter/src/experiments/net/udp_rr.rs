//! `net.udp_rr`: a small UDP request and response, the shape of a DNS lookup, against the
//! server's UDP responder.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, UdpSocket};
use std::time::Instant;

use super::experiment::{Kind, Net};
use super::remote::{Remote, by_profile, io_failed, time_cap};
use crate::harness::{Ctx, ExperimentError, Measured};
use crate::model::Unit;
use crate::wire::protocol::{Test, UDP_HEADER, udp_request};

/// `net.udp_rr`.
pub static UDP_RR: Net = Net(Kind::UdpRr, include_str!("udp_rr.md"));

/// Metric name.
pub const RR: &str = "UDP request/response 40 B -> 120 B";
const REQUEST: usize = 40;
const REPLY: u16 = 120;

/// Measure the request/response time.
pub fn run(ctx: &mut Ctx<'_>, remote: &Remote, out: &mut Measured) -> Result<(), ExperimentError> {
    let count = by_profile(ctx, 100, 1000, 5000);
    // The server answers with more bytes than a request carries only when asked over TCP.
    let session = remote.open(Test::Udp, 600, Some(u32::from(REPLY)))?;
    let (Some(port), Some(cookie)) = (session.granted.port, session.granted.cookie) else {
        return Err(ExperimentError::Failed(format!(
            "the server at {} granted a udp session without port or cookie",
            remote.addr
        )));
    };
    let fail = io_failed(remote, "a UDP request");
    let any: IpAddr = if remote.addr.is_ipv4() {
        Ipv4Addr::UNSPECIFIED.into()
    } else {
        Ipv6Addr::UNSPECIFIED.into()
    };
    let sock = UdpSocket::bind((any, 0)).map_err(&fail)?;
    sock.connect((remote.addr.ip(), port)).map_err(&fail)?;
    sock.set_read_timeout(Some(super::remote::TIMEOUT / 4))
        .map_err(&fail)?;
    let req = udp_request(cookie, REPLY, REQUEST - UDP_HEADER);
    let (samples, lost) = exchange(&sock, &req, count, time_cap(ctx), &fail)?;
    let count = samples.len() + lost;
    drop(session);
    if samples.len() < 3 {
        return Err(ExperimentError::Failed(format!(
            "{lost} of {count} UDP requests to {}:{port} got no answer; is UDP port {port} open in the firewall?",
            remote.addr.ip()
        )));
    }
    let m = ctx.noted_metric(
        RR,
        Unit::Ns,
        samples,
        format!("{count} requests, {lost} lost"),
    )?;
    out.metrics.push(m);
    out.find(
        "udp_loss",
        format!(
            "{lost} of {count} UDP requests got no reply within {:?}.",
            super::remote::TIMEOUT / 4
        ),
        Some(lost as f64),
    );
    Ok(())
}

/// Send `count` requests (after 10 unmeasured) one at a time, stopping early at `until`; return the times of the
/// answered ones and how many went unanswered.
fn exchange(
    sock: &UdpSocket,
    req: &[u8],
    count: usize,
    until: Instant,
    fail: &impl Fn(std::io::Error) -> ExperimentError,
) -> Result<(Vec<f64>, usize), ExperimentError> {
    let mut buf = [0u8; 2048];
    let (mut samples, mut lost) = (Vec::with_capacity(count), 0usize);
    for i in 0..count + 10 {
        if sysmeter_sys::signal::interrupted() {
            return Err(ExperimentError::Interrupted);
        }
        if i > 20 && Instant::now() > until {
            break;
        }
        let t0 = Instant::now();
        sock.send(req).map_err(fail)?;
        let ok = loop {
            match sock.recv(&mut buf) {
                // A late reply to an earlier, timed-out request has the same cookie and size;
                // the lock-step protocol makes that rare enough to accept.
                Ok(n) if n == usize::from(REPLY) && buf[..8] == req[..8] => break true,
                Ok(_) => continue,
                Err(_) => break false,
            }
        };
        let ns = t0.elapsed().as_nanos() as f64;
        match (ok, i >= 10) {
            (true, true) => samples.push(ns),
            (false, _) => lost += 1,
            _ => {}
        }
    }
    Ok((samples, lost))
}
