//! A `sysmeter serve` child for tests: started with arguments, its address read from the
//! first line it prints, stopped with SIGINT (then SIGKILL) and reaped when dropped; its
//! stderr kept in a file when the test reads the log. And a TCP connection from a chosen
//! source address (any of 127.0.0.0/8 on loopback), for the per-address limits.

use std::io::{BufRead, BufReader};
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// A running server.
pub struct Serve {
    child: Option<Child>,
    /// Where it listens.
    pub addr: SocketAddr,
    log: Option<tempfile::NamedTempFile>,
}

impl Serve {
    /// Start `prefix... sysmeter serve args...` (prefix e.g. `ip netns exec NS`) and wait for
    /// its "listening on" line.
    pub fn start_with(prefix: &[&str], args: &[&str]) -> Serve {
        Serve::spawn(prefix, args, None, Stdio::null())
    }

    /// Start `sysmeter serve args...` with its stderr a pipe whose reader has gone (a dead
    /// log pipe): every line it logs fails with EPIPE.
    pub fn start_with_dead_stderr(args: &[&str]) -> Serve {
        let (reader, writer) = std::io::pipe().expect("pipe");
        drop(reader);
        Serve::spawn(&[], args, None, Stdio::from(writer))
    }

    /// Start `sysmeter serve args...` with its stderr kept for [`Serve::log`].
    pub fn start_logged(args: &[&str]) -> Serve {
        let log = tempfile::NamedTempFile::new().expect("log file");
        let stderr = Stdio::from(log.reopen().expect("reopen the log"));
        Serve::spawn(&[], args, Some(log), stderr)
    }

    /// What it printed on stderr so far (empty unless started with [`Serve::start_logged`]).
    pub fn log(&self) -> String {
        self.log.as_ref().map_or_else(String::new, |f| {
            std::fs::read_to_string(f.path()).expect("read the log")
        })
    }

    fn spawn(
        prefix: &[&str],
        args: &[&str],
        log: Option<tempfile::NamedTempFile>,
        stderr: Stdio,
    ) -> Serve {
        let bin = assert_cmd::cargo::cargo_bin("sysmeter");
        let mut cmd = match prefix.split_first() {
            Some((first, rest)) => {
                let mut c = Command::new(first);
                c.args(rest).arg(&bin);
                c
            }
            None => Command::new(&bin),
        };
        let mut child = cmd
            .arg("serve")
            .args(args)
            .env_remove("SYSMETER_TOKEN")
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("start sysmeter serve");
        let out = child.stdout.take().expect("stdout");
        let mut line = String::new();
        BufReader::new(out)
            .read_line(&mut line)
            .expect("first line");
        let Some(addr) = line
            .split_whitespace()
            .find_map(|w| w.parse::<SocketAddr>().ok())
        else {
            // Do not leave it running when the test fails here.
            let _ = child.kill();
            let _ = child.wait();
            panic!("sysmeter serve printed no address: {line:?}");
        };
        Serve {
            child: Some(child),
            addr,
            log,
        }
    }

    /// Start `sysmeter serve args...` on this host.
    pub fn start(args: &[&str]) -> Serve {
        Serve::start_with(&[], args)
    }

    /// Whether it is still running.
    pub fn alive(&mut self) -> bool {
        self.child
            .as_mut()
            .is_some_and(|c| matches!(c.try_wait(), Ok(None)))
    }

    /// Send SIGINT and wait (up to 10 s) for the exit status.
    pub fn interrupt(&mut self) -> Option<ExitStatus> {
        let mut child = self.child.take()?;
        let _ = Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status();
        let until = Instant::now() + Duration::from_secs(10);
        while Instant::now() < until {
            if let Ok(Some(st)) = child.try_wait() {
                return Some(st);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
        None
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        self.interrupt();
    }
}

/// A TCP connection to `to` from the address `from` (bound before connecting).
pub fn connect_from(from: IpAddr, to: SocketAddr) -> TcpStream {
    use socket2::{Domain, SockAddr, Socket, Type};
    let s = Socket::new(Domain::for_address(to), Type::STREAM, None).expect("socket");
    s.bind(&SockAddr::from(SocketAddr::new(from, 0)))
        .expect("bind the source address");
    s.connect_timeout(&SockAddr::from(to), Duration::from_secs(10))
        .expect("connect");
    s.into()
}

/// Every net experiment ran and every metric is plausible.
pub fn check_net_results(run: &Value) {
    let results = run["results"].as_array().expect("results");
    for id in ["net.rtt", "net.bandwidth", "net.connect", "net.udp_rr"] {
        let r = results
            .iter()
            .find(|r| r["id"] == id)
            .unwrap_or_else(|| panic!("{id} missing"));
        assert_eq!(r["status"], "ok", "{r}");
        let metrics = r["metrics"].as_array().expect("metrics");
        assert!(!metrics.is_empty(), "{id} has no metrics");
        for m in metrics {
            let median = m["summary"]["median"].as_f64().expect("median");
            assert!(median > 0.0, "{id} {} = {median}", m["name"]);
            match m["unit"].as_str() {
                // Anything on one host or a veth pair is well under 100 ms.
                Some("ns") => assert!(median < 100e6, "{id} {} = {median} ns", m["name"]),
                Some("bytes_per_sec") => assert!(median > 1e5, "{id} {} = {median} B/s", m["name"]),
                u => panic!("unexpected unit {u:?}"),
            }
        }
    }
    let names = |id: &str| -> Vec<String> {
        results.iter().find(|r| r["id"] == id).map_or(vec![], |r| {
            r["metrics"].as_array().map_or(vec![], |m| {
                m.iter()
                    .filter_map(|x| x["name"].as_str().map(str::to_string))
                    .collect()
            })
        })
    };
    assert!(names("net.rtt").contains(&"TCP round trip 1 B".to_string()));
    assert_eq!(names("net.bandwidth").len(), 4);
    assert!(names("net.connect").contains(&"connect (handshake)".to_string()));
}
