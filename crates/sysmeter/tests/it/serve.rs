//! `sysmeter serve` over loopback: the protocol's refusals (token, version, client cap,
//! slow hello), ten thousand random and truncated requests without a crash or a hang, a
//! clean stop on SIGINT, and the net group measured against it. [`limits`]: what makes it
//! safe to expose (a token or an explicit `--no-token` off loopback, the brake on token
//! guessing, the per-address cap, UDP replies that do not amplify).

mod limits;

use std::io::{Read, Write};
use std::net::{IpAddr, Shutdown, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use crate::support::serve::{Serve, check_net_results, connect_from};
use crate::support::{BENCH_JSON, bench_json, error_of, json_out_code, sysmeter};

/// Send `line`, half-close, and return the server's answer line.
fn ask(addr: SocketAddr, line: &[u8]) -> String {
    ask_on(TcpStream::connect(addr).expect("connect"), line)
}

/// [`ask`] from the source address `from`.
fn ask_from(from: [u8; 4], addr: SocketAddr, line: &[u8]) -> String {
    ask_on(connect_from(IpAddr::from(from), addr), line)
}

fn ask_on(mut s: TcpStream, line: &[u8]) -> String {
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    s.write_all(line).expect("send");
    let _ = s.shutdown(Shutdown::Write);
    // The first line is the answer; a granted test may send data after it (source).
    let mut reply = Vec::new();
    let mut buf = [0u8; 4096];
    while !reply.contains(&b'\n') {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => reply.extend_from_slice(&buf[..n]),
        }
    }
    let end = reply
        .iter()
        .position(|&b| b == b'\n')
        .map_or(reply.len(), |p| p + 1);
    String::from_utf8_lossy(&reply[..end]).into_owned()
}

/// Open a session and return the stream after checking the first reply line.
fn session(addr: SocketAddr, line: &str, expect: &str) -> TcpStream {
    session_on(TcpStream::connect(addr).expect("connect"), line, expect).0
}

/// [`session`] on the connection `s`; also returns the reply line.
fn session_on(s: TcpStream, line: &str, expect: &str) -> (TcpStream, String) {
    let (s, text) = first_reply(s, line);
    assert!(text.starts_with(expect), "{line:?} answered {text:?}");
    (s, text)
}

/// Sends `line` on `s` and reads the reply line, whatever it says.
fn first_reply(mut s: TcpStream, line: &str) -> (TcpStream, String) {
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    s.write_all(line.as_bytes()).expect("send");
    let mut got = Vec::new();
    let mut b = [0u8; 1];
    while !got.ends_with(b"\n") && s.read(&mut b).expect("reply") == 1 {
        got.push(b[0]);
    }
    (s, String::from_utf8_lossy(&got).into_owned())
}

/// Repeats `attempt` while the server answers "ERR busy" (a slot is freed when the server
/// notices the client's close, which a loaded machine can delay), for up to 30 s.
fn when_free<T>(attempt: impl Fn() -> (T, String)) -> (T, String) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (got, reply) = attempt();
        if !reply.starts_with("ERR busy ") || Instant::now() > deadline {
            return (got, reply);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn echo_works(addr: SocketAddr, token: &str) {
    let line = format!("SYSMETER/1 echo token={token}\n");
    let (mut s, reply) =
        when_free(|| first_reply(TcpStream::connect(addr).expect("connect"), &line));
    assert!(reply.starts_with("OK echo"), "{line:?} answered {reply:?}");
    s.write_all(b"ping").expect("write");
    let mut b = [0u8; 4];
    s.read_exact(&mut b).expect("echo");
    assert_eq!(&b, b"ping");
}

#[test]
fn wrong_or_missing_token_and_other_versions_are_refused() {
    let server = Serve::start(&["--bind", "127.0.0.1:0", "--token", "s3cret"]);
    let a = server.addr;
    assert!(ask(a, b"SYSMETER/1 echo\n").starts_with("ERR auth "));
    assert!(ask(a, b"SYSMETER/1 echo token=nope\n").starts_with("ERR auth "));
    assert!(ask(a, b"SYSMETER/9 echo token=s3cret\n").starts_with("ERR version "));
    assert!(ask(a, b"SYSMETER/1 juggle token=s3cret\n").starts_with("ERR unknown-test "));
    assert!(ask(a, &[b'x'; 2000]).starts_with("ERR too-long "));
    echo_works(a, "s3cret");
}

#[test]
fn clients_over_the_cap_are_refused_and_slots_come_back() {
    // Two clients in all, one per address (the default per-address cap is below the total).
    let server = Serve::start(&["--bind", "127.0.0.1:0", "--max-clients", "2"]);
    let a = server.addr;
    let from = |ip, line: &str, expect| session_on(connect_from(ip, a), line, expect).0;
    let first = from([127, 0, 0, 1].into(), "SYSMETER/1 echo\n", "OK echo");
    let r = ask(a, b"SYSMETER/1 echo\n");
    assert!(
        r.starts_with("ERR busy ") && r.contains("from 127.0.0.1"),
        "{r}"
    );
    let second = from([127, 0, 0, 2].into(), "SYSMETER/1 sink\n", "OK sink");
    let r = ask_from([127, 0, 0, 3], a, b"SYSMETER/1 echo\n");
    assert!(
        r.starts_with("ERR busy ") && r.contains("--max-clients"),
        "{r}"
    );
    drop((first, second));
    // The slots free up once the server sees the closes.
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        let r = ask(a, b"SYSMETER/1 accept\n");
        if r.starts_with("OK accept") {
            break;
        }
        assert!(Instant::now() < until, "slots never freed: {r:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_silent_client_is_dropped_after_the_hello_timeout() {
    let server = Serve::start(&["--bind", "127.0.0.1:0", "--hello-timeout", "1"]);
    let mut s = TcpStream::connect(server.addr).expect("connect");
    s.write_all(b"SYSMETER/1 ec").expect("partial hello");
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let t0 = Instant::now();
    let mut reply = String::new();
    let _ = s.read_to_string(&mut reply);
    assert!(reply.starts_with("ERR timeout "), "{reply:?}");
    assert!(t0.elapsed() < Duration::from_secs(8));
}

#[test]
fn test_time_is_capped() {
    let server = Serve::start(&["--bind", "127.0.0.1:0", "--max-test-secs", "1"]);
    let mut s = session(
        server.addr,
        "SYSMETER/1 source secs=100 size=4096\n",
        "OK source secs=1 size=4096",
    );
    let t0 = Instant::now();
    let mut buf = vec![0u8; 65536];
    let mut total = 0u64;
    // The server stops sending (closes) after its one-second cap, long before 100 s.
    loop {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => total += n as u64,
        }
        assert!(
            t0.elapsed() < Duration::from_secs(15),
            "source ran past its cap"
        );
    }
    assert!(total > 0);
}

#[test]
fn ten_thousand_random_and_truncated_requests_do_not_crash_it() {
    let mut server = Serve::start(&["--bind", "127.0.0.1:0", "--max-clients", "32"]);
    let addr = server.addr;
    let valid: Vec<&[u8]> = vec![
        b"SYSMETER/1 echo\n",
        b"SYSMETER/1 source secs=1 size=100\n",
        b"SYSMETER/1 udp secs=1\n",
        b"SYSMETER/1 sink token=x secs=5\n",
    ];
    let threads: Vec<_> = (0..4u64)
        .map(|t| {
            let valid = valid.iter().map(|v| v.to_vec()).collect::<Vec<_>>();
            std::thread::spawn(move || {
                let mut rng = fastrand::Rng::with_seed(0x5eed + t);
                let mut answered = 0;
                for i in 0..2500 {
                    let msg: Vec<u8> = match i % 3 {
                        0 => (0..rng.usize(0..700)).map(|_| rng.u8(..)).collect(),
                        1 => {
                            let v = &valid[rng.usize(0..valid.len())];
                            v[..rng.usize(0..v.len())].to_vec()
                        }
                        _ => {
                            let mut v = valid[rng.usize(0..valid.len())].clone();
                            let at = rng.usize(0..v.len());
                            v[at] = rng.u8(..);
                            v
                        }
                    };
                    let r = ask(addr, &msg);
                    if r.starts_with("ERR ") || r.starts_with("OK ") {
                        answered += 1;
                    }
                }
                answered
            })
        })
        .collect();
    let answered: usize = threads.into_iter().map(|t| t.join().expect("client")).sum();
    assert!(server.alive(), "the server died");
    // Every request gets one answer line (an empty message is answered too: ERR malformed).
    assert_eq!(answered, 10_000);
    echo_works(addr, "any");
    let status = server.interrupt().expect("stopped within 10 s");
    assert_eq!(status.code(), Some(130), "{status:?}");
}

#[test]
fn the_net_group_measures_against_a_loopback_server() {
    let server = Serve::start(&["--bind", "127.0.0.1:0", "--token", "tok"]);
    let addr = server.addr.to_string();
    let run = bench_json(&["net", "--remote", &addr, "--token", "tok"]);
    check_net_results(&run);
}

#[test]
fn a_wrong_token_fails_the_net_group_with_the_servers_reason() {
    // The token comes from SYSMETER_TOKEN here and from --token above: both reach the server.
    let server = Serve::start(&["--bind", "127.0.0.1:0", "--token", "tok"]);
    let mut bench = sysmeter();
    bench
        .args(BENCH_JSON)
        .args(["--only", "net.rtt", "--remote"]);
    let run = json_out_code(
        bench
            .arg(server.addr.to_string())
            .env("SYSMETER_TOKEN", "wrong"),
        1,
    );
    let error = error_of(&run["results"][0]);
    assert!(error.contains("token"), "{error}");
}

#[test]
fn a_dead_log_pipe_never_stops_the_server() {
    // Every finished client and every refusal logs a line; with nobody reading stderr each
    // of those writes fails. The server must go on answering, and free each client's slot.
    let mut server = Serve::start_with_dead_stderr(&["--bind", "127.0.0.1:0", "--token", "s3cret"]);
    for _ in 0..3 {
        echo_works(server.addr, "s3cret");
        // Refusals that do not count as token guesses (those would slow this source down).
        let (_, malformed) = when_free(|| ((), ask(server.addr, b"hello\n")));
        assert!(malformed.starts_with("ERR malformed "), "{malformed}");
        let (_, version) = when_free(|| ((), ask(server.addr, b"SYSMETER/9 echo\n")));
        assert!(version.starts_with("ERR version "), "{version}");
    }
    assert!(server.alive(), "serve died on a closed stderr");
    echo_works(server.addr, "s3cret");
}
