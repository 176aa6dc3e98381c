//! Helpers shared by the integration tests: the binary under test with a clean environment,
//! and the C fixture programs under `tests/fixtures/programs`, compiled on demand.

// Each test crate includes this module and uses a subset of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The `sysmeter` binary, with no database or serve token from the environment and no colour.
pub fn sysmeter() -> assert_cmd::Command {
    let mut c = assert_cmd::Command::cargo_bin("sysmeter").expect("binary is built");
    c.env_remove("SYSMETER_DB")
        .env_remove("SYSMETER_TOKEN")
        .env("NO_COLOR", "1");
    c
}

/// Compiles fixture `name.c` into `dir/name` with debug info, frame pointers and `extra`
/// flags. `Err` says why the test must be skipped (no C compiler); a source that does not
/// compile is a test failure.
pub fn compile_fixture(name: &str, dir: &Path, extra: &[&str]) -> Result<PathBuf, String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/programs")
        .join(format!("{name}.c"));
    let exe = dir.join(name);
    let status = std::process::Command::new("cc")
        .args(["-O1", "-g", "-fno-omit-frame-pointer"])
        .args(extra)
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .status()
        .map_err(|e| format!("no C compiler (cc: {e})"))?;
    assert!(status.success(), "cc failed on {}: {status}", src.display());
    Ok(exe)
}

/// [`compile_fixture`] for tests that skip without a compiler: prints the reason.
pub fn compile_or_skip(name: &str, dir: &Path, extra: &[&str]) -> Option<PathBuf> {
    compile_fixture(name, dir, extra)
        .map_err(|reason| println!("skipped: {reason}"))
        .ok()
}

/// `sysmeter bench --quick --no-store --format json ARGS`, which must succeed; its record.
pub fn bench_json(args: &[&str]) -> serde_json::Value {
    let out = sysmeter()
        .args(["bench", "--quick", "--no-store", "--format", "json"])
        .args(args)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    serde_json::from_slice(&out).expect("bench --format json prints JSON")
}

/// The result of experiment `id` in a run record (panics when it is missing).
pub fn result<'a>(run: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    run["results"]
        .as_array()
        .and_then(|r| r.iter().find(|x| x["id"] == id))
        .unwrap_or_else(|| panic!("{id} missing from the run"))
}

/// Whether this process runs as root (real uid 0, from /proc/self/status).
pub fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .map(|s| s.lines().any(|l| l.starts_with("Uid:\t0\t")))
        .unwrap_or(false)
}

/// Whether the tracepoint backend of `trace` may run here; prints the skip reason when not.
pub fn tracepoints_permitted() -> bool {
    let paranoid: i32 = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(2);
    if !is_root() && paranoid > -1 {
        println!("skipped: tracepoints need root or perf_event_paranoid ≤ -1 (it is {paranoid})");
        return false;
    }
    true
}

/// Runs `cmd`, which must succeed, and returns its stdout as text.
pub fn stdout_of(cmd: &mut assert_cmd::Command) -> String {
    let out = cmd.assert().success().get_output().stdout.clone();
    String::from_utf8_lossy(&out).into_owned()
}

/// Runs `cmd`, which must exit with `code`, and returns its stderr as text.
pub fn stderr_of(cmd: &mut assert_cmd::Command, code: i32) -> String {
    let out = cmd.assert().code(code).get_output().stderr.clone();
    String::from_utf8_lossy(&out).into_owned()
}
