//! `sysmeter live -p PID` on a running multi-threaded server (`live_server`: four workers,
//! each a millisecond of CPU in `serve_request` then a 2 ms nap, until killed): every worker
//! is listed with CPU and blocked time, the hot function is `serve_request`, 20 viewers at
//! once and two that stall (one sends half a request, one never reads its answer) leave
//! the observation and the other viewers unaffected, and Ctrl-C ends the session while the
//! server runs on. Needs perf events and `cc`; takes `observing(RawSyscalls)` as live.rs.

use std::io::Write;
use std::net::TcpStream;
use std::process::{Child, Command};

use crate::live::{http, interrupt, start};
use crate::support::needs::perf;
use crate::support::{Event, compile_fixture, exclusive, need, observing};

/// The server, killed when the test ends.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn live_attaches_to_a_threaded_server_and_many_viewers_do_not_disturb_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    need!(perf());
    let prog = need!(compile_fixture("live_server", dir.path(), &["-pthread"]));
    let _events = observing(&[Event::RawSyscalls]);
    let _alone = exclusive();
    let mut server = Server(Command::new(&prog).spawn().expect("server starts"));
    let pid = server.0.id().to_string();
    let db = dir.path().join("runs.db");
    let session = start(&db, &["-p", &pid]);
    let first = session.first_samples();
    // Two stalled viewers: half a request, and a request whose answer is never read.
    let mut half = TcpStream::connect(&session.addr).expect("connect");
    half.write_all(b"GET /api/snap").expect("half a request");
    let mut mute = TcpStream::connect(&session.addr).expect("connect");
    let full = format!(
        "GET /api/snapshot?window=all&token={} HTTP/1.1\r\n\r\n",
        session.token
    );
    mute.write_all(full.as_bytes()).expect("a request");
    let viewers: Vec<_> = (0..20)
        .map(|_| {
            let (addr, token) = (session.addr.clone(), session.token.clone());
            std::thread::spawn(move || {
                (0..3)
                    .map(|_| http(&addr, "GET", &format!("/api/snapshot?token={token}")).0)
                    .collect::<Vec<u16>>()
            })
        })
        .collect();
    for v in viewers {
        assert_eq!(
            v.join().expect("viewer"),
            vec![200; 3],
            "every viewer is answered"
        );
    }
    let later = session.more_samples_than(&first);
    assert_eq!(later["top"][0]["function"], "serve_request", "{later}");
    let workers = later["threads"].as_array().expect("threads").iter();
    let busy = workers
        .filter(|t| t["cpu_share"].as_f64() > Some(0.0))
        .count();
    assert!(busy >= 4, "the four workers are seen: {later}");
    assert_eq!(interrupt(session.child.id()), 0);
    let (code, _) = session.end();
    assert_eq!(code, Some(0), "Ctrl-C is how a -p session ends");
    assert!(
        server.0.try_wait().expect("wait").is_none(),
        "the server runs on"
    );
    drop((half, mute));
}
