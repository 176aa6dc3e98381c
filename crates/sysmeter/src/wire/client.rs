//! The client side of the `serve` protocol, for the net experiments and the tests: resolve
//! `HOST[:PORT]`, connect, send the hello and read the one-line reply without consuming any
//! test data that follows it; a `busy` refusal is retried for a moment. Depends on
//! [`super::protocol`] and the standard library only.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use super::DEFAULT_PORT;
use super::protocol::{ErrorCode, Granted, Hello, MAX_LINE, ProtocolError, Reply, Test, VERSION};

/// Talking to a `sysmeter serve` failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The name did not resolve.
    #[error(
        "cannot resolve '{remote}': {reason}; pass --remote HOST[:PORT] with a reachable host name or address"
    )]
    Resolve {
        /// What the user gave.
        remote: String,
        /// Why.
        reason: String,
    },
    /// A socket operation failed.
    #[error("{what} {addr} failed: {source}; is `sysmeter serve` running there and the port open?")]
    Io {
        /// The server.
        addr: SocketAddr,
        /// What was attempted.
        what: &'static str,
        /// The OS error.
        source: std::io::Error,
    },
    /// The server refused the request.
    #[error("the sysmeter serve at {addr} refused the {test} test: {error}")]
    Refused {
        /// The server.
        addr: SocketAddr,
        /// The test asked for.
        test: &'static str,
        /// Its answer.
        error: ProtocolError,
    },
    /// The server's reply was not understood.
    #[error(
        "unexpected reply from {addr}: {text}; is a sysmeter serve of the same version listening there?"
    )]
    BadReply {
        /// The server.
        addr: SocketAddr,
        /// What was wrong.
        text: String,
    },
}

/// Resolve `HOST[:PORT]` (`[v6]:PORT` for IPv6), defaulting to [`DEFAULT_PORT`].
pub fn resolve(remote: &str) -> Result<SocketAddr, ClientError> {
    let err = |reason: String| ClientError::Resolve {
        remote: remote.to_string(),
        reason,
    };
    let with_port = if remote.parse::<SocketAddr>().is_ok() {
        remote.to_string()
    } else if remote.parse::<std::net::Ipv6Addr>().is_ok() {
        format!("[{remote}]:{DEFAULT_PORT}")
    } else if remote.contains(':') {
        remote.to_string()
    } else {
        format!("{remote}:{DEFAULT_PORT}")
    };
    with_port
        .to_socket_addrs()
        .map_err(|e| err(e.to_string()))?
        .next()
        .ok_or_else(|| err("no address".into()))
}

/// An accepted test: the connection, ready for test data, and what was granted.
pub struct Session {
    /// The connection (TCP_NODELAY on).
    pub stream: TcpStream,
    /// The server's grant.
    pub granted: Granted,
}

/// What to ask a server for.
#[derive(Debug, Clone, Default)]
pub struct Request<'a> {
    /// Token, if the server needs one.
    pub token: Option<&'a str>,
    /// Seconds wanted.
    pub secs: Option<u32>,
    /// Write size for `source`.
    pub size: Option<u32>,
}

/// Connect to `addr`, ask for `test` and wait up to `timeout` for the answer. A `busy`
/// refusal is asked again, with growing pauses, for up to `timeout`: the server counts a
/// connection until its thread has seen the close, so a client that opens streams right
/// after closing others (net.bandwidth) can meet its per-address cap for a moment.
pub fn open(
    addr: SocketAddr,
    test: Test,
    req: &Request<'_>,
    timeout: Duration,
) -> Result<Session, ClientError> {
    let until = Instant::now() + timeout;
    let mut pause = Duration::from_millis(20);
    loop {
        match open_once(addr, test, req, timeout) {
            Err(ClientError::Refused { error, .. })
                if error.code == ErrorCode::Busy && Instant::now() + pause < until =>
            {
                std::thread::sleep(pause);
                pause *= 2;
            }
            other => return other,
        }
    }
}

fn open_once(
    addr: SocketAddr,
    test: Test,
    req: &Request<'_>,
    timeout: Duration,
) -> Result<Session, ClientError> {
    let io = |what| move |source| ClientError::Io { addr, what, source };
    let stream = TcpStream::connect_timeout(&addr, timeout).map_err(io("connecting to"))?;
    stream
        .set_nodelay(true)
        .map_err(io("setting TCP_NODELAY towards"))?;
    let hello = Hello {
        version: VERSION,
        test,
        token: req.token.map(str::to_string),
        secs: req.secs,
        size: req.size,
    };
    (&stream)
        .write_all(hello.encode().as_bytes())
        .map_err(io("sending the hello to"))?;
    let line = read_line(&stream, timeout).map_err(io("reading the reply of"))?;
    match Reply::parse(&line) {
        Ok(Reply::Ok(granted)) if granted.test == test => {
            stream
                .set_read_timeout(None)
                .map_err(io("clearing the timeout towards"))?;
            Ok(Session { stream, granted })
        }
        Ok(Reply::Ok(g)) => Err(ClientError::BadReply {
            addr,
            text: format!("granted {} instead of {}", g.test.as_str(), test.as_str()),
        }),
        Ok(Reply::Err(error)) => Err(ClientError::Refused {
            addr,
            test: test.as_str(),
            error,
        }),
        Err(text) => Err(ClientError::BadReply { addr, text }),
    }
}

/// Read one line (up to [`MAX_LINE`] bytes) and nothing after it.
pub fn read_line(s: &TcpStream, timeout: Duration) -> std::io::Result<Vec<u8>> {
    let deadline = Instant::now() + timeout;
    let mut line = Vec::new();
    let mut buf = [0u8; MAX_LINE];
    while !line.ends_with(b"\n") && line.len() < MAX_LINE {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "no reply in time",
            ));
        }
        s.set_read_timeout(Some(left))?;
        let n = s.peek(&mut buf[..MAX_LINE - line.len()])?;
        if n == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "connection closed before the reply line",
            ));
        }
        let end = buf[..n]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(n, |p| p + 1);
        let mut take = vec![0u8; end];
        (&*s).read_exact(&mut take)?;
        line.extend_from_slice(&take);
    }
    Ok(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remotes_get_the_default_port() {
        assert_eq!(
            resolve("127.0.0.1").ok(),
            Some(SocketAddr::from(([127, 0, 0, 1], DEFAULT_PORT)))
        );
        assert_eq!(
            resolve("127.0.0.1:9").ok(),
            Some(SocketAddr::from(([127, 0, 0, 1], 9)))
        );
        assert_eq!(resolve("::1").ok().map(|a| a.port()), Some(DEFAULT_PORT));
        assert_eq!(resolve("[::1]:10").ok().map(|a| a.port()), Some(10));
        assert!(resolve("no-such-host.invalid").is_err());
    }
}
