//! The binary under test with a clean environment, and the run-and-read-output patterns:
//! stdout of a command that must succeed, stderr of one that must fail with a given code,
//! `bench --format json` parsed.

use serde_json::Value;

/// The `sysmeter` binary, with no database or serve token from the environment and no colour.
pub fn sysmeter() -> assert_cmd::Command {
    let mut c = assert_cmd::Command::cargo_bin("sysmeter").expect("binary is built");
    c.env_remove("SYSMETER_DB")
        .env_remove("SYSMETER_TOKEN")
        .env("NO_COLOR", "1");
    c
}

/// [`sysmeter`] as a `std::process::Command`, for tests that spawn it in the background or
/// hand it their own pipes.
pub fn std_sysmeter() -> std::process::Command {
    let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("sysmeter"));
    c.env_remove("SYSMETER_DB")
        .env_remove("SYSMETER_TOKEN")
        .env("NO_COLOR", "1");
    c
}

/// The arguments of a quick bench that prints its record as JSON and stores nothing.
pub const BENCH_JSON: [&str; 7] = [
    "bench",
    "--quick",
    "--rounds",
    "1",
    "--no-store",
    "--format",
    "json",
];

/// `sysmeter bench --quick --no-store --format json ARGS`, which must succeed; its record.
/// Runs alone ([`super::exclusive`]): a bench loads both CPUs and the caches, which would
/// blur the timing-sensitive tests (scale's knee, profile's shares) running beside it.
pub fn bench_json(args: &[&str]) -> Value {
    let _alone = super::exclusive();
    json_out(sysmeter().args(BENCH_JSON).args(args))
}

/// Parses command output as JSON (panics when it is not).
pub fn json_of(out: &[u8]) -> Value {
    serde_json::from_slice(out).expect("stdout is JSON")
}

/// Runs `cmd`, which must succeed, and returns its stdout parsed as JSON.
pub fn json_out(cmd: &mut assert_cmd::Command) -> Value {
    json_out_code(cmd, 0)
}

/// Runs `cmd`, which must exit with `code`, and returns its stdout parsed as JSON.
pub fn json_out_code(cmd: &mut assert_cmd::Command, code: i32) -> Value {
    json_of(&cmd.assert().code(code).get_output().stdout)
}

/// Runs `cmd`, which must succeed, and returns its stdout as text (which must be UTF-8).
pub fn stdout_of(cmd: &mut assert_cmd::Command) -> String {
    let out = cmd.assert().success().get_output().stdout.clone();
    String::from_utf8(out).expect("stdout is UTF-8")
}

/// Runs `cmd`, which must exit with `code`, and returns its stderr as text.
pub fn stderr_of(cmd: &mut assert_cmd::Command, code: i32) -> String {
    let out = cmd.assert().code(code).get_output().stderr.clone();
    String::from_utf8_lossy(&out).into_owned()
}
