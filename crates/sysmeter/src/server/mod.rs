//! `sysmeter serve`: the remote end of the net group. The wire protocol and the client live
//! in [`crate::wire`], below both this module and the net experiments.
//!
//! A TCP listener and a UDP socket on the same address and port. Each TCP connection asks
//! for one test in its hello line ([`crate::wire::protocol`]); a thread per connection runs
//! it until the client closes, the granted time runs out, or the server stops. Everything a
//! client can send is bounded: the hello line's length and arrival time, the number of
//! connections at once in all and per source address (`sources`), each test's duration,
//! the rate of token guesses (`auth`); whatever is wrong is answered with one `ERR` line
//! and a closed connection, and logged once per source and minute (every log line escaped
//! by `log`: nothing a client sent acts on the operator's terminal). The UDP socket answers
//! only datagrams of a live `udp` session (cookie from the kernel's random source, and
//! source address checked), never with more bytes than the request unless the session
//! negotiated more (`udp`), so the server can neither reflect nor amplify traffic. Stops
//! when SIGINT/SIGTERM arrive (or [`Server::stop_handle`] is set), closing every connection
//! within a fraction of a second. Depends on `wire` for the protocol and on `sysmeter-sys`
//! for poll, the signal flag and getrandom only.

mod auth;
mod log;
mod session;
mod sources;
mod udp;

use std::collections::HashMap;
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use sources::{Refusal, Source, Sources};

use crate::wire::protocol::{ErrorCode, ProtocolError, Reply};

/// How often blocked loops wake up to check for a stop and their deadline.
const TICK: Duration = Duration::from_millis(200);

/// What `serve` was asked for.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// Address and port for TCP and UDP.
    pub bind: SocketAddr,
    /// Shared secret every hello must carry.
    pub token: Option<String>,
    /// Connections served at once; more are refused with `ERR busy`.
    pub max_clients: usize,
    /// Connections one source address (an IPv6 /64) may hold at once; below `max_clients`
    /// so that one host cannot lock everyone else out.
    pub max_per_source: usize,
    /// Longest a test may run, seconds.
    pub max_test_secs: u32,
    /// How long a client may take to send its hello.
    pub hello_timeout: Duration,
}

/// `serve` could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// Binding failed.
    #[error(
        "cannot listen on {addr}: {source}; choose a free port with --bind ADDR:PORT, or an address of this host"
    )]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The OS error.
        source: std::io::Error,
    },
    /// A socket operation after binding failed.
    #[error("serving on {addr} failed while {what}: {source}")]
    Io {
        /// The address.
        addr: SocketAddr,
        /// What was attempted.
        what: &'static str,
        /// The OS error.
        source: std::io::Error,
    },
}

/// A live UDP session: datagrams with this cookie from this address are answered.
struct UdpSession {
    peer: std::net::IpAddr,
    /// The reply size negotiated over TCP; without it no reply exceeds its request.
    max_reply: usize,
}

/// State shared by the accept loop, connection threads and the UDP responder.
struct Shared {
    cfg: ServeConfig,
    stop: AtomicBool,
    active: AtomicUsize,
    sessions: Mutex<HashMap<u64, UdpSession>>,
    sources: Mutex<Sources>,
    port: u16,
}

impl Shared {
    fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed) || sysmeter_sys::signal::interrupted()
    }

    /// The per-source state (still usable after a thread panicked holding it).
    fn sources(&self) -> MutexGuard<'_, Sources> {
        self.sources.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A bound server, not yet serving.
pub struct Server {
    listener: TcpListener,
    udp: UdpSocket,
    shared: Arc<Shared>,
}

impl Server {
    /// Bind TCP and UDP on `cfg.bind` (port 0 picks a free port for both).
    pub fn bind(cfg: ServeConfig) -> Result<Server, ServeError> {
        let addr = cfg.bind;
        let bind_err = |source| ServeError::Bind { addr, source };
        let listener = TcpListener::bind(addr).map_err(bind_err)?;
        let local = listener.local_addr().map_err(bind_err)?;
        let udp = UdpSocket::bind(local).map_err(|source| ServeError::Bind {
            addr: local,
            source,
        })?;
        let io = |what| {
            move |source| ServeError::Io {
                addr: local,
                what,
                source,
            }
        };
        listener
            .set_nonblocking(true)
            .map_err(io("making the listener non-blocking"))?;
        udp.set_read_timeout(Some(TICK))
            .map_err(io("setting the UDP timeout"))?;
        let sources = Mutex::new(Sources::new(cfg.max_per_source));
        let shared = Arc::new(Shared {
            cfg,
            sources,
            stop: AtomicBool::new(false),
            active: AtomicUsize::new(0),
            sessions: Mutex::new(HashMap::new()),
            port: local.port(),
        });
        Ok(Server {
            listener,
            udp,
            shared,
        })
    }

    /// The bound address (with the real port when 0 was asked for).
    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.listener.local_addr().ok()
    }

    /// Set this to make [`Server::run`] return (SIGINT/SIGTERM do the same).
    pub fn stop_handle(&self) -> Arc<dyn Fn() + Send + Sync> {
        let s = Arc::clone(&self.shared);
        Arc::new(move || s.stop.store(true, Ordering::Relaxed))
    }

    /// Serve until stopped; every connection is closed and every thread joined on return.
    pub fn run(self) -> Result<(), ServeError> {
        let Server {
            listener,
            udp: sock,
            shared,
        } = self;
        let udp_shared = Arc::clone(&shared);
        let udp = std::thread::Builder::new()
            .name("serve-udp".into())
            .spawn(move || udp::respond(&sock, &udp_shared));
        let mut threads: Vec<JoinHandle<()>> = Vec::new();
        let result = accept_loop(&listener, &shared, &mut threads);
        shared.stop.store(true, Ordering::Relaxed);
        for t in threads {
            let _ = t.join();
        }
        if let Ok(h) = udp {
            let _ = h.join();
        }
        result
    }
}

fn accept_loop(
    listener: &TcpListener,
    shared: &Arc<Shared>,
    threads: &mut Vec<JoinHandle<()>>,
) -> Result<(), ServeError> {
    let addr = shared.cfg.bind;
    let mut swept = Instant::now();
    while !shared.stopping() {
        if swept.elapsed() >= Duration::from_secs(1) {
            swept = Instant::now();
            for line in shared.sources().sweep(swept) {
                log::line(&line);
            }
        }
        match sysmeter_sys::net::wait_readable(listener, TICK) {
            Ok(true) => {}
            Ok(false) => continue,
            Err(source) => {
                return Err(ServeError::Io {
                    addr,
                    what: "waiting for connections",
                    source,
                });
            }
        }
        let (stream, peer) = match listener.accept() {
            Ok(x) => x,
            // Gone before we took it, or out of descriptors for a moment: keep serving.
            Err(e) => {
                if e.kind() != std::io::ErrorKind::WouldBlock {
                    log::line(format!("serve: accept failed: {e}"));
                    std::thread::sleep(Duration::from_millis(10));
                }
                continue;
            }
        };
        threads.retain(|t| !t.is_finished());
        if let Some(t) = admit(shared, stream, peer) {
            threads.push(t);
        }
    }
    Ok(())
}

/// Start a thread for the connection, or refuse it: a blocked source, a source at its own
/// cap, or a full server. The refusal is written here, without a thread.
fn admit(shared: &Arc<Shared>, stream: TcpStream, peer: SocketAddr) -> Option<JoinHandle<()>> {
    let src = Source::of(peer.ip());
    let opened = shared.sources().open(src, Instant::now());
    if let Err(r) = opened {
        refuse_now(shared, &stream, peer, &source_refusal(src, r));
        return None;
    }
    let cap = shared.cfg.max_clients;
    if shared.active.fetch_add(1, Ordering::AcqRel) >= cap {
        shared.active.fetch_sub(1, Ordering::AcqRel);
        shared.sources().close(src);
        let e = busy(format!(
            "this server already serves {cap} clients (--max-clients); retry later"
        ));
        refuse_now(shared, &stream, peer, &e);
        return None;
    }
    let mine = Arc::clone(shared);
    let spawned = std::thread::Builder::new()
        .name("serve-conn".into())
        .spawn(move || {
            session::serve_connection(stream, peer, &mine);
            mine.active.fetch_sub(1, Ordering::AcqRel);
            mine.sources().close(src);
        });
    match spawned {
        Ok(t) => Some(t),
        Err(e) => {
            shared.active.fetch_sub(1, Ordering::AcqRel);
            shared.sources().close(src);
            log::line(format!("serve: cannot start a thread for {peer}: {e}"));
            None
        }
    }
}

fn busy(message: String) -> ProtocolError {
    ProtocolError {
        code: ErrorCode::Busy,
        message,
    }
}

fn source_refusal(src: Source, r: Refusal) -> ProtocolError {
    match r {
        Refusal::Blocked { left } => auth::blocked_error(src, left),
        Refusal::TooMany { cap } => busy(format!(
            "this server already serves {cap} connections from {src} (--max-per-source); close one or retry later"
        )),
    }
}

/// [`refuse`] on the accept thread, which must not wait: take whatever the client sent
/// already (closing with unread data would reset the connection, and the client could
/// lose the answer) and half-close.
fn refuse_now(shared: &Shared, stream: &TcpStream, peer: SocketAddr, e: &ProtocolError) {
    use std::io::Read;
    refuse(shared, stream, peer, e);
    let _ = stream.set_nonblocking(true);
    let mut buf = [0u8; 1024];
    while matches!((&*stream).read(&mut buf), Ok(n) if n > 0) {}
    let _ = stream.shutdown(std::net::Shutdown::Write);
}

/// Answer `ERR` and let the stream close; log it, at most once per source and period.
fn refuse(shared: &Shared, stream: &TcpStream, peer: SocketAddr, e: &ProtocolError) {
    use std::io::Write;
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_write_timeout(Some(TICK));
    let _ = (&*stream).write_all(Reply::Err(e.clone()).encode().as_bytes());
    let line = shared.sources().log(
        Source::of(peer.ip()),
        Instant::now(),
        format!("{peer}: refused: {e}"),
    );
    if let Some(line) = line {
        log::line(&line);
    }
}
