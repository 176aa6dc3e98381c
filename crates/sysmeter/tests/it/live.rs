//! Integration tests of `sysmeter live` on the 70/30 fixture (`profile_split`: `hot_a`
//! takes 70% of the CPU): the JSON view grows between two reads and names `hot_a`, the page
//! is self-contained, every endpoint answers 401 without the token, `/metrics` is
//! OpenMetrics, `go tool pprof -top` on `/debug/pprof/profile` lists `hot_a` first, "save
//! this window" stores a run that `show` reads, headless Chromium shows the hot function
//! and a changing counter, SIGINT ends the session with the program's fate passed through,
//! and a program that ends by itself keeps its stdout and exit code.
//!
//! Needs perf events and `cc` (capabilities `perf`, `cc`); `go` and `chromium` for their
//! parts. `live` counts system calls on `raw_syscalls` through BPF where it may, so the
//! tests take `observing(RawSyscalls)`, and hold the CPUs ([`exclusive`]) while sampling.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::needs::{go, perf};
use crate::support::skip::Missing;
use crate::support::{Event, compile_fixture, exclusive, need, observing, sysmeter};

/// A running `sysmeter live` and where its page is.
pub(crate) struct Session {
    pub(crate) child: Child,
    /// `127.0.0.1:PORT`.
    pub(crate) addr: String,
    pub(crate) token: String,
    /// The rest of its stderr (kept open so its reader thread can go on).
    _stderr: mpsc::Receiver<String>,
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `sysmeter live --db DB ARGS` and waits for its URL line.
pub(crate) fn start(db: &Path, args: &[&str]) -> Session {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sysmeter"))
        .args(["live", "--db"])
        .arg(db)
        .args(args)
        .env_remove("SYSMETER_DB")
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sysmeter starts");
    let (tx, rx) = mpsc::channel();
    let stderr = child.stderr.take().expect("piped");
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let line = rx
        .recv_timeout(Duration::from_secs(120))
        .expect("live prints its URL first");
    let url = line
        .strip_prefix("sysmeter live: http://")
        .unwrap_or_else(|| panic!("not the URL line: {line}"));
    let (addr, token) = url.split_once("/?token=").expect("URL with a token");
    Session {
        child,
        addr: addr.to_string(),
        token: token.to_string(),
        _stderr: rx,
    }
}

/// `METHOD path` over HTTP/1.0: (status, body).
pub(crate) fn http(addr: &str, method: &str, path: &str) -> (u16, Vec<u8>) {
    let mut s = TcpStream::connect(addr).expect("the server listens");
    s.set_read_timeout(Some(Duration::from_secs(90))).ok();
    write!(s, "{method} {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").expect("request sent");
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).expect("response read");
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("headers end");
    let head = String::from_utf8_lossy(&raw[..split]);
    let status = head.split_whitespace().nth(1).and_then(|c| c.parse().ok());
    (status.expect("a status"), raw[split + 4..].to_vec())
}

impl Session {
    pub(crate) fn get(&self, path: &str) -> (u16, Vec<u8>) {
        let sep = if path.contains('?') { '&' } else { '?' };
        http(
            &self.addr,
            "GET",
            &format!("{path}{sep}token={}", self.token),
        )
    }

    pub(crate) fn snapshot(&self) -> Value {
        let (status, body) = self.get("/api/snapshot?window=all");
        assert_eq!(status, 200);
        serde_json::from_slice(&body).expect("JSON view")
    }

    /// The view once it holds at least one sample.
    pub(crate) fn first_samples(&self) -> Value {
        let start = Instant::now();
        loop {
            let v = self.snapshot();
            if v["samples_total"].as_u64() > Some(0) {
                return v;
            }
            assert!(start.elapsed() < Duration::from_secs(60), "no samples: {v}");
            std::thread::sleep(Duration::from_millis(300));
        }
    }

    /// The view once it holds more samples than `before` (the session goes on: at most 60 s,
    /// however loaded the machine).
    pub(crate) fn more_samples_than(&self, before: &Value) -> Value {
        let start = Instant::now();
        loop {
            let v = self.snapshot();
            if v["samples_total"].as_u64() > before["samples_total"].as_u64() {
                return v;
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "the counts never grew: {before} then {v}"
            );
            std::thread::sleep(Duration::from_millis(500));
        }
    }

    /// Waits for the session to end (at most 60 s): its exit code and its stdout.
    pub(crate) fn end(mut self) -> (Option<i32>, String) {
        let start = Instant::now();
        while self.child.try_wait().expect("wait").is_none() {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "live did not end"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        let mut out = String::new();
        if let Some(mut o) = self.child.stdout.take() {
            o.read_to_string(&mut out).ok();
        }
        let status = self.child.wait().expect("status");
        (status.code(), out)
    }
}

fn fixture(dir: &Path) -> Result<PathBuf, Missing> {
    perf()?;
    compile_fixture("profile_split", dir, &[])
}

/// The first function of `go tool pprof -top URL`.
fn pprof_first(go: &Path, url: &str) -> String {
    let out = Command::new(go)
        .args(["tool", "pprof", "-top", url])
        .output()
        .expect("go runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let row = text
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("flat"))
        .nth(1)
        .unwrap_or_else(|| panic!("no rows: {text}"));
    row.split_whitespace()
        .nth(5)
        .unwrap_or_default()
        .to_string()
}

/// The page after its script ran (headless Chromium, a few seconds of virtual time).
fn dom(chromium: &Path, url: &str, profile: &Path) -> String {
    let out = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(["--virtual-time-budget=3000", "--dump-dom", url])
        .stderr(Stdio::null())
        .output()
        .expect("chromium runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The text of the element with id `id` in `dom`.
fn text_of<'a>(dom: &'a str, id: &str) -> &'a str {
    let at = dom.find(&format!("id=\"{id}\"")).expect("the element");
    let rest = &dom[at..];
    let start = rest.find('>').expect("tag end") + 1;
    let end = rest[start..].find('<').expect("next tag");
    &rest[start..start + end]
}

#[test]
fn live_view_grows_serves_pprof_saves_a_run_and_ends_on_sigint() {
    let dir = tempfile::tempdir().expect("tempdir");
    let prog = need!(fixture(dir.path()));
    let _events = observing(&[Event::RawSyscalls]);
    let _alone = exclusive();
    let db = dir.path().join("runs.db");
    let session = start(&db, &["--", prog.to_str().expect("utf-8"), "100000"]);
    let first = session.first_samples();
    let second = session.more_samples_than(&first);
    assert_eq!(second["top"][0]["function"], "hot_a", "{second}");
    page_and_token(&session);
    pprof_of(&session);
    in_chromium(&session, dir.path());
    saved_window(&session, &db);
    assert_eq!(interrupt(session.child.id()), 0);
    let (code, _) = session.end();
    assert_eq!(
        code,
        Some(130),
        "the program's fate (SIGINT) is passed through"
    );
}

/// The page is self-contained; every endpoint needs the token; `/metrics` is OpenMetrics.
fn page_and_token(session: &Session) {
    let (status, page) = session.get("/");
    let page = String::from_utf8_lossy(&page).to_lowercase();
    assert_eq!(status, 200);
    assert!(page.contains("<script>") && !page.contains("<script src") && !page.contains("<link"));
    assert!(
        !page
            .replace("http://www.w3.org/2000/svg", "")
            .contains("http://")
    );
    assert!(!page.contains("https://"));
    for path in [
        "/",
        "/api/snapshot",
        "/metrics",
        "/debug/pprof/profile?seconds=1",
    ] {
        assert_eq!(
            http(&session.addr, "GET", path).0,
            401,
            "{path} without the token"
        );
    }
    let (status, metrics) = session.get("/metrics");
    let metrics = String::from_utf8_lossy(&metrics);
    assert_eq!(status, 200);
    assert!(metrics.contains("sysmeter_live_cpu_samples_total ") && metrics.ends_with("# EOF\n"));
}

/// `go tool pprof -top` on the next 3 s lists the hot function first.
fn pprof_of(session: &Session) {
    match go() {
        Ok(go) => {
            let url = format!(
                "http://{}/debug/pprof/profile?seconds=3&token={}",
                session.addr, session.token
            );
            // A profile of 3 s on a loaded machine may hold few samples: up to three.
            let firsts: Vec<String> = (0..3)
                .map(|_| pprof_first(&go, &url))
                .take_while(|f| f != "hot_a")
                .collect();
            assert!(firsts.len() < 3, "hot_a was never first: {firsts:?}");
        }
        Err(missing) => missing.skip_part("go tool pprof on /debug/pprof/profile"),
    }
}

/// Headless Chromium shows the hot function, and the sample counter moves between loads.
fn in_chromium(session: &Session, dir: &Path) {
    match crate::support::chromium::find_chromium() {
        Ok(chromium) => {
            let url = format!("http://{}/?token={}", session.addr, session.token);
            let one = dom(&chromium, &url, &dir.join("c1"));
            let two = dom(&chromium, &url, &dir.join("c2"));
            assert!(one.contains("hot_a"), "the page shows the hot function");
            let count = |d: &str| text_of(d, "samples-total").parse::<u64>().unwrap_or(0);
            assert!(
                count(&two) > count(&one),
                "the counter changes between two loads"
            );
        }
        Err(missing) => missing.skip_part("the page in headless Chromium"),
    }
}

/// "Save this window" stores a profile run that `show` reads.
fn saved_window(session: &Session, db: &Path) {
    let path = format!("/api/save?window=all&token={}", session.token);
    let (status, saved) = http(&session.addr, "POST", &path);
    let saved: Value = serde_json::from_slice(&saved).expect("JSON");
    assert_eq!(status, 200, "{saved}");
    let id = saved["id"].as_str().expect("a run id");
    let shown = sysmeter()
        .args(["show", "--db"])
        .arg(db)
        .arg(id)
        .output()
        .expect("show");
    assert!(shown.status.success());
    assert!(String::from_utf8_lossy(&shown.stdout).contains("hot_a"));
}

/// `kill -INT PID`: Ctrl-C sent to sysmeter alone (it passes it on to the program).
pub(crate) fn interrupt(pid: u32) -> i32 {
    let status = Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status();
    status.map_or(-1, |s| s.code().unwrap_or(-1))
}

#[test]
fn a_program_that_ends_keeps_its_stdout_and_exit_code() {
    let dir = tempfile::tempdir().expect("tempdir");
    let prog = need!(fixture(dir.path()));
    let _events = observing(&[Event::RawSyscalls]);
    let script = format!("echo from-the-program; exec {} 100 7", prog.display());
    let db = dir.path().join("runs.db");
    let session = start(&db, &["--", "sh", "-c", &script]);
    let (code, out) = session.end();
    assert_eq!(code, Some(7));
    assert_eq!(out, "from-the-program\n", "stdout belongs to the program");
}
