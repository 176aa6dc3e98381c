//! One connection of `sysmeter serve`: read the hello within the time allowed, check the
//! version and token ([`super::auth`]), then run the one test asked for until the client
//! closes, the granted time runs out or the server stops.

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use super::{Shared, TICK, UdpSession};
use crate::wire::protocol::{
    ErrorCode, Granted, Hello, MAX_LINE, MAX_UDP_REPLY, ProtocolError, Reply, Test,
};

/// Seconds a test runs when the client does not say.
const DEFAULT_SECS: u32 = 10;
/// `source` write size when the client does not say.
const DEFAULT_SIZE: u32 = 128 * 1024;

fn refuse(code: ErrorCode, message: impl Into<String>) -> ProtocolError {
    ProtocolError {
        code,
        message: message.into(),
    }
}

/// Serve one connection to its end; never panics on what the client sends.
pub fn serve_connection(stream: TcpStream, peer: SocketAddr, shared: &Shared) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_nodelay(true);
    let hello = read_hello(&stream, shared).and_then(|line| {
        let h = Hello::parse(&line)?;
        super::auth::authenticate(&h, peer, shared)?;
        grant(&h, shared).map(|g| (h, g))
    });
    match hello {
        Ok((h, g)) => run_test(stream, peer, &h, g, shared),
        Err(e) => {
            super::refuse(shared, &stream, peer, &e);
            drain_and_close(stream);
        }
    }
}

/// What the server grants for `h`: the time capped by `--max-test-secs`, the write size of
/// `source`, and for `udp` the port, a cookie from the kernel's random source and the reply
/// size the client asked for (at most [`MAX_UDP_REPLY`]).
fn grant(h: &Hello, shared: &Shared) -> Result<Granted, ProtocolError> {
    let mut g = Granted {
        test: h.test,
        secs: h.secs.unwrap_or(DEFAULT_SECS).min(shared.cfg.max_test_secs),
        size: None,
        port: None,
        cookie: None,
    };
    match h.test {
        Test::Source => g.size = Some(h.size.unwrap_or(DEFAULT_SIZE)),
        Test::Udp => {
            g.port = Some(shared.port);
            g.size = h.size.map(|n| n.min(MAX_UDP_REPLY as u32));
            let cookie = sysmeter_sys::random::u64().map_err(|e| {
                refuse(
                    ErrorCode::Busy,
                    format!("cannot draw a session cookie from getrandom: {e}"),
                )
            })?;
            g.cookie = Some(cookie);
        }
        _ => {}
    }
    Ok(g)
}

/// Read the hello line without consuming anything after its newline (peek, then read
/// exactly the line), within the hello timeout and [`MAX_LINE`] bytes.
fn read_hello(s: &TcpStream, shared: &Shared) -> Result<Vec<u8>, ProtocolError> {
    let deadline = Instant::now() + shared.cfg.hello_timeout;
    let mut line = Vec::new();
    let mut buf = [0u8; MAX_LINE];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(refuse(
                ErrorCode::Timeout,
                format!(
                    "no complete hello line within {:?}; send it at once after connecting",
                    shared.cfg.hello_timeout
                ),
            ));
        }
        if shared.stopping() {
            return Err(refuse(ErrorCode::Busy, "the server is shutting down"));
        }
        let _ = s.set_read_timeout(Some(left.min(TICK)));
        let room = MAX_LINE - line.len();
        match s.peek(&mut buf[..room]) {
            Ok(0) => {
                return Err(refuse(
                    ErrorCode::Malformed,
                    "the connection ended before the hello line did",
                ));
            }
            Ok(n) => {
                let end = buf[..n]
                    .iter()
                    .position(|&b| b == b'\n')
                    .map_or(n, |p| p + 1);
                let mut take = vec![0u8; end];
                (&*s).read_exact(&mut take).map_err(|e| {
                    refuse(
                        ErrorCode::Malformed,
                        format!("reading the hello failed: {e}"),
                    )
                })?;
                line.extend_from_slice(&take);
                if line.ends_with(b"\n") {
                    return Ok(line);
                }
                if line.len() >= MAX_LINE {
                    return Err(refuse(
                        ErrorCode::TooLong,
                        format!("the hello line is longer than {MAX_LINE} bytes"),
                    ));
                }
            }
            Err(e) if is_timeout(&e) => continue,
            Err(e) => {
                return Err(refuse(
                    ErrorCode::Malformed,
                    format!("reading the hello failed: {e}"),
                ));
            }
        }
    }
}

fn is_timeout(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
    )
}

fn run_test(stream: TcpStream, peer: SocketAddr, h: &Hello, g: Granted, shared: &Shared) {
    let deadline = Instant::now() + Duration::from_secs(u64::from(g.secs));
    if let Some(c) = g.cookie
        && let Ok(mut s) = shared.sessions.lock()
    {
        let max_reply = g.size.map_or(0, |n| n as usize);
        s.insert(
            c,
            UdpSession {
                peer: peer.ip(),
                max_reply,
            },
        );
    }
    let _ = stream.set_write_timeout(Some(TICK));
    if (&stream)
        .write_all(Reply::Ok(g.clone()).encode().as_bytes())
        .is_ok()
    {
        let started = Instant::now();
        let bytes = match h.test {
            Test::Echo => pump(&stream, deadline, shared, true),
            Test::Sink | Test::Udp => pump(&stream, deadline, shared, false),
            Test::Source => source(&stream, g.size.unwrap_or(DEFAULT_SIZE), deadline, shared),
            Test::Accept => 0,
        };
        if h.test != Test::Accept {
            super::log::line(format!(
                "serve: {peer}: {} for {:.1} s, {bytes} bytes",
                h.test.as_str(),
                started.elapsed().as_secs_f64()
            ));
        }
    }
    if let Some(c) = g.cookie
        && let Ok(mut s) = shared.sessions.lock()
    {
        s.remove(&c);
    }
    drain_and_close(stream);
}

/// Read until EOF, the deadline or a stop; write everything back when `echo`. Returns the
/// bytes read.
fn pump(s: &TcpStream, deadline: Instant, shared: &Shared, echo: bool) -> u64 {
    let mut buf = vec![0u8; 64 * 1024];
    let mut total = 0u64;
    let _ = s.set_read_timeout(Some(TICK));
    while Instant::now() < deadline && !shared.stopping() {
        match (&*s).read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                total += n as u64;
                if echo && !write_until(s, &buf[..n], deadline, shared) {
                    break;
                }
            }
            Err(e) if is_timeout(&e) => {}
            Err(_) => break,
        }
    }
    total
}

/// Write all of `data` unless the deadline passes, the server stops or the peer fails.
fn write_until(s: &TcpStream, mut data: &[u8], deadline: Instant, shared: &Shared) -> bool {
    while !data.is_empty() {
        if Instant::now() >= deadline || shared.stopping() {
            return false;
        }
        match (&*s).write(data) {
            Ok(0) => return false,
            Ok(n) => data = &data[n..],
            Err(e) if is_timeout(&e) => {}
            Err(_) => return false,
        }
    }
    true
}

fn source(s: &TcpStream, size: u32, deadline: Instant, shared: &Shared) -> u64 {
    let buf = vec![0x5au8; size as usize];
    let mut total = 0u64;
    while write_until(s, &buf, deadline, shared) {
        total += u64::from(size);
    }
    total
}

/// Close so that a reply already written reaches the client: half-close, take whatever the
/// client still sends for a moment (closing with unread data would reset the connection and
/// could discard the reply), then close.
fn drain_and_close(s: TcpStream) {
    let _ = s.shutdown(Shutdown::Write);
    let _ = s.set_read_timeout(Some(Duration::from_millis(50)));
    let mut buf = [0u8; 4096];
    let until = Instant::now() + Duration::from_millis(200);
    while Instant::now() < until {
        match (&s).read(&mut buf) {
            Ok(n) if n > 0 => {}
            _ => break,
        }
    }
}
