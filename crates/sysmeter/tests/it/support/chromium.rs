//! Headless Chromium for the HTML tests: find the binary (or say why there is none, as a
//! `Cap::Chromium` miss for `need!`), load a page with `--dump-dom` under a time limit, and
//! kill and reap the browser when a test ends early.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command as Process, Stdio};
use std::time::{Duration, Instant};

use super::skip::{Cap, Missing};

/// Longest a headless Chromium may take to load the page.
const CHROMIUM_TIMEOUT: Duration = Duration::from_secs(120);

/// Kills and reaps the browser if a test ends while it runs.
struct Browser(Child);

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The Chromium binary on PATH, or why there is none.
pub fn find_chromium() -> Result<PathBuf, Missing> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        for dir in std::env::split_paths(&path) {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Ok(candidate);
            }
        }
    }
    Err(Missing::new(
        Cap::Chromium,
        "chromium is not installed (Debian: apt-get install chromium; .ci/run does)",
    ))
}

/// Starts headless Chromium on `page`, dumping its DOM to a piped stdout.
fn spawn(bin: &Path, page: &Path, profile: &Path, extra: &[&str]) -> Result<Browser, String> {
    let child = Process::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
        ])
        .args(["--no-first-run", "--disable-background-networking"])
        .args(["--disable-component-update", "--disable-sync"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(["--enable-logging=stderr", "--v=0", "--dump-dom"])
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("chromium could not start: {e}"))?;
    Ok(Browser(child))
}

/// Loads `page` in headless Chromium with `--dump-dom` (and `extra` flags such as
/// `--window-size=1280,900`): (DOM, browser log), or why Chromium could not run.
pub fn load_in_chromium(
    bin: &Path,
    page: &Path,
    profile: &Path,
    extra: &[&str],
) -> Result<(String, String), String> {
    let mut browser = spawn(bin, page, profile, extra)?;
    let mut stdout = browser.0.stdout.take().expect("piped stdout");
    let mut stderr = browser.0.stderr.take().expect("piped stderr");
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = browser.0.try_wait().map_err(|e| e.to_string())? {
            break status;
        }
        if start.elapsed() > CHROMIUM_TIMEOUT {
            return Err(format!(
                "chromium did not finish within {CHROMIUM_TIMEOUT:?}"
            ));
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let (dom, log) = (
        out.join().unwrap_or_default(),
        err.join().unwrap_or_default(),
    );
    if !status.success() || !dom.contains("</html>") {
        let last = log.lines().rev().take(3).collect::<Vec<_>>().join(" | ");
        return Err(format!(
            "chromium could not render a page ({status}): {last}"
        ));
    }
    Ok((dom, log))
}
