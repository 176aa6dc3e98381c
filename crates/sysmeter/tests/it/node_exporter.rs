//! The Prometheus path of docs/fleet.md, end to end with the real node_exporter (Debian's
//! `prometheus-node-exporter`): a stored run exported with `export --openmetrics --out` into
//! a textfile-collector directory, node_exporter started on a free loopback port with only
//! that collector, scraped with an HTTP GET; its series must be there and the collector must
//! report no error. Skips (capability `node_exporter`) where the binary is missing.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::fleet::{fleet_files, host_run};
use crate::support::skip::{Cap, Missing};
use crate::support::{need, stdout_of, sysmeter};

/// node_exporter, stopped when dropped.
struct Exporter(Child);

impl Drop for Exporter {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn node_exporter() -> Result<PathBuf, Missing> {
    [
        "/usr/bin/prometheus-node-exporter",
        "/usr/bin/node_exporter",
    ]
    .iter()
    .map(PathBuf::from)
    .find(|p| p.is_file())
    .ok_or_else(|| {
        let why = "no node_exporter; apt-get install prometheus-node-exporter";
        Missing::new(Cap::NodeExporter, why)
    })
}

fn start(bin: &Path, dir: &Path, port: u16) -> Exporter {
    let child = Command::new(bin)
        .arg("--collector.disable-defaults")
        .arg("--collector.textfile")
        .arg(format!("--collector.textfile.directory={}", dir.display()))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start node_exporter");
    Exporter(child)
}

/// The body of `GET /metrics`, once node_exporter answers (within 30 s: a loaded machine).
fn scrape(exporter: &mut Exporter, port: u16) -> Option<String> {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = exporter.0.try_wait() {
            return None; // it exited: the port was taken meanwhile
        }
        if let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) {
            let request = "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
            let mut reply = String::new();
            let sent = s.write_all(request.as_bytes()).is_ok();
            if sent
                && s.read_to_string(&mut reply).is_ok()
                && let Some((head, body)) = reply.split_once("\r\n\r\n")
            {
                assert!(
                    head.starts_with("HTTP/1.") && head.contains(" 200 "),
                    "{head}"
                );
                return Some(body.to_string());
            }
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    panic!("node_exporter did not answer on 127.0.0.1:{port} within 30 s");
}

#[test]
fn node_exporter_serves_the_exported_run_through_its_textfile_collector() {
    let bin = need!(node_exporter());
    let dir = tempfile::tempdir().expect("tempdir");
    let files = fleet_files(dir.path());
    let db = dir.path().join("runs.db");
    stdout_of(sysmeter().arg("import").arg("--db").arg(&db).arg(&files[0]));
    let textfiles = dir.path().join("textfile");
    std::fs::create_dir(&textfiles).expect("mkdir");
    let prom = textfiles.join("sysmeter.prom");
    let mut export = sysmeter();
    export
        .args(["export", "latest", "--openmetrics", "--out"])
        .arg(&prom);
    stdout_of(export.arg("--db").arg(&db));
    // A free port can be taken between the probe and node_exporter's bind: try a few.
    let body = (0..3)
        .find_map(|_| {
            let port = TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .expect("a free port")
                .port();
            scrape(&mut start(&bin, &textfiles, port), port)
        })
        .expect("node_exporter kept losing its port");
    let run = host_run(0);
    assert!(body.contains("node_textfile_scrape_error 0"), "{body}");
    // node_exporter sorts the labels: look for each.
    let run_label = format!("run=\"{}\"", run.id);
    let info = body.lines().find(|l| l.starts_with("sysmeter_run_info{"));
    let info = info.unwrap_or_else(|| panic!("no sysmeter_run_info in:\n{body}"));
    assert!(
        info.contains("host=\"node-0\"") && info.contains(&run_label) && info.ends_with(" 1"),
        "{info}"
    );
    let metric = &run.results[0].metrics[0].name;
    let series = body
        .lines()
        .filter(|l| l.starts_with("sysmeter_") && l.contains(&format!("metric=\"{metric}\"")))
        .count();
    assert!(series > 0, "no series of {metric} in:\n{body}");
}
