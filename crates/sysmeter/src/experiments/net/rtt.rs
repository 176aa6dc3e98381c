//! `net.rtt`: TCP round trips of 1 B and 1 KiB against the server's echo test, and an ICMP
//! echo round trip where ping or raw sockets are permitted.

use std::io::{Read, Write};
use std::net::IpAddr;
use std::time::{Duration, Instant};

use sysmeter_sys::net::{IcmpKind, IcmpSocket};

use super::experiment::{Kind, Net};
use super::remote::{Remote, by_profile, io_failed, time_cap};
use crate::harness::{Ctx, ExperimentError, Measured, Spec};
use crate::model::Unit;
use crate::wire::protocol::Test;

/// `net.rtt`.
pub static RTT: Net = Net(Kind::Rtt, include_str!("rtt.md"));

/// Metric names.
pub const TCP_1B: &str = "TCP round trip 1 B";
const TCP_1K: &str = "TCP round trip 1 KiB";
/// ICMP metric name.
pub const ICMP: &str = "ICMP echo round trip";

/// Measure the TCP and ICMP round trips.
pub fn run(ctx: &mut Ctx<'_>, remote: &Remote, out: &mut Measured) -> Result<(), ExperimentError> {
    let session = remote.open(Test::Echo, 600, None)?;
    let mut s = session.stream;
    s.set_read_timeout(Some(super::remote::TIMEOUT))
        .map_err(io_failed(remote, "setting a timeout"))?;
    for (len, name) in [(1usize, TCP_1B), (1024, TCP_1K)] {
        let mut buf = vec![0x42u8; len];
        let fail = io_failed(remote, "an echo round trip");
        let m = ctx.try_measure(Spec::new(name).note(&format!("to {}", remote.addr)), |n| {
            for _ in 0..n {
                s.write_all(&buf).map_err(&fail)?;
                s.read_exact(&mut buf).map_err(&fail)?;
            }
            Ok(())
        })?;
        out.metrics.push(m);
    }
    drop(s);
    icmp(ctx, remote, out)
}

fn icmp(ctx: &mut Ctx<'_>, remote: &Remote, out: &mut Measured) -> Result<(), ExperimentError> {
    let IpAddr::V4(dst) = remote.addr.ip() else {
        out.find(
            "icmp_skipped",
            "ICMP echo skipped: the remote address is IPv6 and only ICMPv4 is implemented.".into(),
            None,
        );
        return Ok(());
    };
    let mut sock = match IcmpSocket::open() {
        Ok(s) => s,
        Err(e) => {
            out.find(
                "icmp_skipped",
                format!(
                    "ICMP echo skipped: neither a ping socket nor a raw socket could be opened \
                     ({e}). Allow ping sockets for your group with `sysctl -w \
                     net.ipv4.ping_group_range=\"0 2147483647\"`, or run as root."
                ),
                None,
            );
            return Ok(());
        }
    };
    let count = by_profile(ctx, 20, 200, 1000);
    let (mut samples, mut lost) = (Vec::with_capacity(count), 0usize);
    let until = time_cap(ctx);
    for seq in 0..count as u16 {
        if sysmeter_sys::signal::interrupted() {
            return Err(ExperimentError::Interrupted);
        }
        if seq > 10 && Instant::now() > until {
            break;
        }
        let t0 = Instant::now();
        let got = sock
            .echo(dst, seq, 56, Duration::from_secs(1))
            .map_err(io_failed(remote, "an ICMP echo"))?;
        let ns = t0.elapsed().as_nanos() as f64;
        if got {
            samples.push(ns);
        } else {
            lost += 1;
        }
    }
    let count = samples.len() + lost;
    if samples.len() < 3 {
        out.find("icmp_lost", format!("ICMP echo: {lost} of {count} requests got no reply (a firewall dropping ICMP?); no figure."), Some(lost as f64));
        return Ok(());
    }
    let mut m = ctx.metric(ICMP, Unit::Ns, samples)?;
    let kind = match sock.kind() {
        IcmpKind::Ping => "ping socket",
        IcmpKind::Raw => "raw socket",
    };
    m.note = Some(format!("{kind}; {count} echoes, {lost} lost"));
    out.metrics.push(m);
    Ok(())
}

/// The TCP round trip against the ICMP echo (`Experiment::metric_findings`).
pub fn tcp_vs_icmp(out: &mut Measured) {
    if let (Some(tcp), Some(icmp)) = (out.median(TCP_1B), out.median(ICMP)) {
        out.find(
            "tcp_vs_icmp",
            format!(
                "A 1-byte TCP round trip ({:.1} µs) costs {:.1} µs more than an ICMP echo ({:.1} µs): the socket layers, TCP processing and the wake-ups of both processes, which a ping answered by the kernel does not pay.",
                tcp / 1e3,
                (tcp - icmp) / 1e3,
                icmp / 1e3
            ),
            Some(tcp - icmp),
        );
    }
}
