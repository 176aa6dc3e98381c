//! `sysmeter serve`: the remote end of the net group. The wire protocol and the client live
//! in [`crate::wire`], below both this module and the net experiments.
//!
//! A TCP listener and a UDP socket on the same address and port. Each TCP connection asks
//! for one test in its hello line ([`crate::wire::protocol`]); a thread per connection runs it until the
//! client closes, the granted time runs out, or the server stops. Everything a client can
//! send is bounded: the hello line's length and arrival time, the number of connections at
//! once, each test's duration; whatever is wrong is answered with one `ERR` line and a
//! closed connection. The UDP socket answers only datagrams of a live `udp` session (cookie
//! and source address checked), never larger than [`MAX_UDP_REPLY`](crate::wire::protocol::MAX_UDP_REPLY), so the
//! server cannot be used to reflect traffic at a third host. Stops when SIGINT/SIGTERM
//! arrive (or [`Server::stop_handle`] is set), closing every connection within a fraction
//! of a second. Depends on `wire` for the protocol and on `sysmeter-sys` for poll and the signal flag
//! only.

mod session;
mod udp;

use std::collections::HashMap;
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

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
}

/// State shared by the accept loop, connection threads and the UDP responder.
struct Shared {
    cfg: ServeConfig,
    stop: AtomicBool,
    active: AtomicUsize,
    sessions: Mutex<HashMap<u64, UdpSession>>,
    port: u16,
}

impl Shared {
    fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed) || sysmeter_sys::signal::interrupted()
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
        let shared = Arc::new(Shared {
            cfg,
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
    while !shared.stopping() {
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
                    eprintln!("serve: accept failed: {e}");
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

/// Start a thread for the connection, or refuse it when the cap is reached.
fn admit(shared: &Arc<Shared>, stream: TcpStream, peer: SocketAddr) -> Option<JoinHandle<()>> {
    let cap = shared.cfg.max_clients;
    if shared.active.fetch_add(1, Ordering::AcqRel) >= cap {
        shared.active.fetch_sub(1, Ordering::AcqRel);
        let e = ProtocolError {
            code: ErrorCode::Busy,
            message: format!(
                "this server already serves {cap} clients (--max-clients); retry later"
            ),
        };
        refuse(&stream, peer, &e);
        return None;
    }
    let mine = Arc::clone(shared);
    let spawned = std::thread::Builder::new()
        .name("serve-conn".into())
        .spawn(move || {
            session::serve_connection(stream, peer, &mine);
            mine.active.fetch_sub(1, Ordering::AcqRel);
        });
    match spawned {
        Ok(t) => Some(t),
        Err(e) => {
            shared.active.fetch_sub(1, Ordering::AcqRel);
            eprintln!("serve: cannot start a thread for {peer}: {e}");
            None
        }
    }
}

/// Answer `ERR` and let the stream close.
fn refuse(stream: &TcpStream, peer: SocketAddr, e: &ProtocolError) {
    use std::io::Write;
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_write_timeout(Some(TICK));
    let _ = (&*stream).write_all(Reply::Err(e.clone()).encode().as_bytes());
    eprintln!("serve: {peer}: refused: {e}");
}
