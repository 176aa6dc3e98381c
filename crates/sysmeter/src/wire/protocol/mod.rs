//! The wire protocol of `sysmeter serve`, version 1: a pure codec, no I/O, depending on
//! nothing else in the crate.
//!
//! One test per TCP connection. The client sends one ASCII line, the hello:
//! `SYSMETER/1 <test> [token=T] [secs=N] [size=N]\n`, where test is `echo`, `sink`,
//! `source`, `accept` or `udp`. The server answers one line, `OK <test> [key=value…]\n`
//! (for `source` the write size, for `udp` the port, session cookie and reply size, for
//! every test the granted seconds), or `ERR <code> <message>\n` and closes. Only after `OK` does test data
//! flow. A line is at most [`MAX_LINE`] bytes including the newline. UDP datagrams of a
//! session are `cookie (8 bytes, big endian) | reply length (2 bytes, big endian) | payload`,
//! answered with the cookie and the length echoed, padded to the requested reply length,
//! but never longer than the request unless the `udp` hello asked for a larger size
//! (`size=N`, granted up to [`MAX_UDP_REPLY`] and echoed in the `OK` line).

use std::fmt::Write;

/// The protocol version this build speaks.
pub const VERSION: u32 = 1;
/// Longest hello or reply line, newline included.
pub const MAX_LINE: usize = 512;
/// Longest accepted token.
pub const MAX_TOKEN: usize = 128;
/// Largest write size a client may ask `source` for.
pub const MAX_SIZE: u32 = 1 << 20;
/// Largest UDP reply a session may negotiate (below a 1500-byte MTU with headers).
pub const MAX_UDP_REPLY: usize = 1400;
/// Size of a UDP datagram's header (cookie and reply length).
pub const UDP_HEADER: usize = 10;

/// The tests a connection can ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Test {
    /// Echo every byte back (round trips).
    Echo,
    /// Read and discard (upload bandwidth).
    Sink,
    /// Write continuously (download bandwidth).
    Source,
    /// Answer `OK` and close at once (connection cost).
    Accept,
    /// Answer the session's UDP datagrams while this connection stays open.
    Udp,
}

/// Every test with its name on the wire: the one table both directions read.
const TESTS: [(Test, &str); 5] = [
    (Test::Echo, "echo"),
    (Test::Sink, "sink"),
    (Test::Source, "source"),
    (Test::Accept, "accept"),
    (Test::Udp, "udp"),
];

impl Test {
    /// The name on the wire.
    pub fn as_str(self) -> &'static str {
        wire_name(&TESTS, self)
    }

    fn parse(s: &str) -> Option<Test> {
        from_wire_name(&TESTS, s)
    }
}

/// The wire name of `v` in `table` (every variant is in its table).
fn wire_name<T: PartialEq + Copy>(table: &[(T, &'static str)], v: T) -> &'static str {
    table
        .iter()
        .find(|(t, _)| *t == v)
        .map_or("?", |(_, name)| name)
}

/// The variant named `s` on the wire, if any.
fn from_wire_name<T: Copy>(table: &[(T, &str)], s: &str) -> Option<T> {
    table.iter().find(|(_, name)| *name == s).map(|(t, _)| *t)
}

/// A client's request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hello {
    /// Protocol version the client speaks.
    pub version: u32,
    /// The test.
    pub test: Test,
    /// Shared secret, when the server requires one.
    pub token: Option<String>,
    /// Seconds the client wants the test to last (the server may grant fewer).
    pub secs: Option<u32>,
    /// Write size for `source`; largest UDP reply for `udp`.
    pub size: Option<u32>,
}

/// Why a request was refused; the code is sent on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    /// Not a hello line.
    Malformed,
    /// Another protocol version.
    Version,
    /// The line did not end within [`MAX_LINE`] bytes.
    TooLong,
    /// The hello did not arrive in time.
    Timeout,
    /// Missing or wrong token.
    Auth,
    /// Too many clients at once.
    Busy,
    /// A test this server does not know.
    UnknownTest,
}

/// Every refusal with its code on the wire.
const ERROR_CODES: [(ErrorCode, &str); 7] = [
    (ErrorCode::Malformed, "malformed"),
    (ErrorCode::Version, "version"),
    (ErrorCode::TooLong, "too-long"),
    (ErrorCode::Timeout, "timeout"),
    (ErrorCode::Auth, "auth"),
    (ErrorCode::Busy, "busy"),
    (ErrorCode::UnknownTest, "unknown-test"),
];

impl ErrorCode {
    /// The code on the wire.
    pub fn as_str(self) -> &'static str {
        wire_name(&ERROR_CODES, self)
    }

    fn parse(s: &str) -> Option<ErrorCode> {
        from_wire_name(&ERROR_CODES, s)
    }
}

/// A refused request: the code and a sentence for the user.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} ({})", code.as_str())]
pub struct ProtocolError {
    /// What kind of refusal.
    pub code: ErrorCode,
    /// What was wrong and how to fix it.
    pub message: String,
}

fn refuse(code: ErrorCode, message: impl Into<String>) -> ProtocolError {
    ProtocolError {
        code,
        message: message.into(),
    }
}

/// The server's answer to a hello.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// Accepted; test data may flow.
    Ok(Granted),
    /// Refused; the server closes the connection.
    Err(ProtocolError),
}

/// What the server granted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Granted {
    /// The test.
    pub test: Test,
    /// Seconds the server will run the test before closing.
    pub secs: u32,
    /// `source`: bytes per write; `udp`: the largest reply, when the hello asked for one.
    pub size: Option<u32>,
    /// `udp`: the server's UDP port.
    pub port: Option<u16>,
    /// `udp`: the session cookie to put in every datagram.
    pub cookie: Option<u64>,
}

fn valid_token(t: &str) -> bool {
    !t.is_empty() && t.len() <= MAX_TOKEN && t.bytes().all(|b| b.is_ascii_graphic())
}

impl Hello {
    /// The hello line, newline included.
    pub fn encode(&self) -> String {
        let mut s = format!("SYSMETER/{} {}", self.version, self.test.as_str());
        if let Some(t) = &self.token {
            let _ = write!(s, " token={t}");
        }
        if let Some(n) = self.secs {
            let _ = write!(s, " secs={n}");
        }
        if let Some(n) = self.size {
            let _ = write!(s, " size={n}");
        }
        s.push('\n');
        s
    }

    /// Parse one line (with or without its newline). Never panics, whatever the bytes.
    pub fn parse(line: &[u8]) -> Result<Hello, ProtocolError> {
        let text = std::str::from_utf8(strip_newline(line))
            .map_err(|_| refuse(ErrorCode::Malformed, "the hello is not ASCII text"))?;
        let mut words = text.split(' ');
        let magic = words.next().unwrap_or("");
        let version = magic
            .strip_prefix("SYSMETER/")
            .ok_or_else(|| refuse(ErrorCode::Malformed, "expected a line starting SYSMETER/1"))?
            .parse::<u32>()
            .map_err(|_| refuse(ErrorCode::Malformed, "the protocol version is not a number"))?;
        if version != VERSION {
            return Err(refuse(
                ErrorCode::Version,
                format!(
                    "this server speaks SYSMETER/{VERSION}, not {version}; use the same sysmeter version on both hosts"
                ),
            ));
        }
        let name = words.next().unwrap_or("");
        let test = Test::parse(name).ok_or_else(|| {
            refuse(
                ErrorCode::UnknownTest,
                "unknown test; valid: echo, sink, source, accept, udp",
            )
        })?;
        let mut hello = Hello {
            version,
            test,
            token: None,
            secs: None,
            size: None,
        };
        for w in words {
            let (k, v) = w
                .split_once('=')
                .ok_or_else(|| refuse(ErrorCode::Malformed, "options are key=value"))?;
            match k {
                "token" if valid_token(v) => hello.token = Some(v.to_string()),
                "secs" => hello.secs = Some(number(v, 1, 3600, "secs")?),
                "size" => hello.size = Some(number(v, 1, MAX_SIZE, "size")?),
                _ => return Err(refuse(ErrorCode::Malformed, "unknown or invalid option")),
            }
        }
        Ok(hello)
    }
}

fn number(v: &str, lo: u32, hi: u32, what: &str) -> Result<u32, ProtocolError> {
    v.parse::<u32>()
        .ok()
        .filter(|n| (lo..=hi).contains(n))
        .ok_or_else(|| refuse(ErrorCode::Malformed, format!("{what} must be {lo}..={hi}")))
}

fn strip_newline(line: &[u8]) -> &[u8] {
    let l = line.strip_suffix(b"\n").unwrap_or(line);
    l.strip_suffix(b"\r").unwrap_or(l)
}

impl Reply {
    /// The reply line, newline included. Messages are kept to one line.
    pub fn encode(&self) -> String {
        match self {
            Reply::Ok(g) => {
                let mut s = format!("OK {} secs={}", g.test.as_str(), g.secs);
                if let Some(n) = g.size {
                    let _ = write!(s, " size={n}");
                }
                if let Some(p) = g.port {
                    let _ = write!(s, " port={p}");
                }
                if let Some(c) = g.cookie {
                    let _ = write!(s, " cookie={c:016x}");
                }
                s + "\n"
            }
            Reply::Err(e) => {
                let msg: String = e
                    .message
                    .chars()
                    .filter(|c| !c.is_control())
                    .take(400)
                    .collect();
                format!("ERR {} {msg}\n", e.code.as_str())
            }
        }
    }

    /// Parse a reply line. Never panics, whatever the bytes.
    pub fn parse(line: &[u8]) -> Result<Reply, String> {
        let text = std::str::from_utf8(strip_newline(line))
            .map_err(|_| "the server's reply is not text".to_string())?;
        if let Some(rest) = text.strip_prefix("ERR ") {
            let (code, message) = rest.split_once(' ').unwrap_or((rest, ""));
            let code =
                ErrorCode::parse(code).ok_or_else(|| format!("unknown error code in '{text}'"))?;
            return Ok(Reply::Err(refuse(code, message)));
        }
        let rest = text
            .strip_prefix("OK ")
            .ok_or_else(|| format!("'{text}' is neither OK nor ERR: is this a sysmeter serve?"))?;
        let mut words = rest.split(' ');
        let test = Test::parse(words.next().unwrap_or("")).ok_or("unknown test in reply")?;
        let mut g = Granted {
            test,
            secs: 0,
            size: None,
            port: None,
            cookie: None,
        };
        for w in words {
            let (k, v) = w.split_once('=').ok_or("malformed option in reply")?;
            let bad = || format!("bad {k} in reply");
            match k {
                "secs" => g.secs = v.parse().map_err(|_| bad())?,
                "size" => g.size = Some(v.parse().map_err(|_| bad())?),
                "port" => g.port = Some(v.parse().map_err(|_| bad())?),
                "cookie" => g.cookie = Some(u64::from_str_radix(v, 16).map_err(|_| bad())?),
                _ => {} // newer servers may add options
            }
        }
        Ok(Reply::Ok(g))
    }
}

/// A UDP request datagram: cookie, wanted reply length, `payload` bytes of padding.
pub fn udp_request(cookie: u64, reply_len: u16, payload: usize) -> Vec<u8> {
    let mut d = Vec::with_capacity(UDP_HEADER + payload);
    d.extend_from_slice(&cookie.to_be_bytes());
    d.extend_from_slice(&reply_len.to_be_bytes());
    d.resize(UDP_HEADER + payload, 0x55);
    d
}

/// Split a UDP datagram into (cookie, reply length clamped to the header and
/// [`MAX_UDP_REPLY`]); `None` when shorter than the header.
pub fn udp_parse(d: &[u8]) -> Option<(u64, usize)> {
    let cookie = u64::from_be_bytes(d.get(..8)?.try_into().ok()?);
    let len = u16::from_be_bytes(d.get(8..10)?.try_into().ok()?) as usize;
    Some((cookie, len.clamp(UDP_HEADER, MAX_UDP_REPLY)))
}

#[cfg(test)]
mod tests;
