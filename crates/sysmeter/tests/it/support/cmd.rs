//! The binary under test with a clean environment, and the run-and-read-output patterns:
//! stdout of a command that must succeed, stderr of one that must fail with a given code,
//! `bench --format json` parsed, a usage error of one sentence, a tracer's JSON run, a
//! tracer attached with `-p` and stopped by Ctrl-C, a fixture started and ready, a group of
//! processes killed until none is left.

use serde_json::Value;

/// The `sysmeter` binary, with no database or serve token from the environment and no colour.
pub fn sysmeter() -> assert_cmd::Command {
    let mut c = assert_cmd::Command::cargo_bin("sysmeter").expect("binary is built");
    c.env_remove("SYSMETER_DB")
        .env_remove("SYSMETER_TOKEN")
        .env("NO_COLOR", "1");
    c
}

/// `sysmeter ARGS --db DB`: a command on the database `db` (more arguments may follow).
pub fn sysmeter_db(db: impl AsRef<std::ffi::OsStr>, args: &[&str]) -> assert_cmd::Command {
    let mut cmd = sysmeter();
    cmd.args(args).arg("--db").arg(db);
    cmd
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

/// `bench --quick --rounds 1 --only ONLY --no-store`: one quick round of one experiment
/// group, stored nowhere (the hostile and kill tests' workload).
pub fn quick_bench(only: &str) -> Vec<String> {
    [
        "bench",
        "--quick",
        "--rounds",
        "1",
        "--only",
        only,
        "--no-store",
    ]
    .map(String::from)
    .to_vec()
}

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

/// Starts `sysmeter ARGS` (a tracer attached with `-p PID`) in the background and reads its
/// stderr until it says it is tracing; returns the process, its stderr to read on, and what
/// it said so far. `round` names the attempt in the failure message.
pub fn start_attached(
    args: &[&str],
    round: usize,
) -> (
    std::process::Child,
    std::io::BufReader<std::process::ChildStderr>,
    String,
) {
    use std::io::BufRead;
    let mut tracer = std_sysmeter()
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("sysmeter starts");
    let mut err = std::io::BufReader::new(tracer.stderr.take().expect("stderr"));
    let mut said = String::new();
    while !said.contains("Ctrl-C stops tracing") {
        let mut line = String::new();
        let n = err.read_line(&mut line).expect("stderr");
        assert!(
            n > 0,
            "round {round}: sysmeter ended before tracing: {said}"
        );
        said.push_str(&line);
    }
    (tracer, err, said)
}

/// Stops a tracer of [`start_attached`] as Ctrl-C does (SIGINT), reads the rest of its
/// stderr onto `report`, and checks that it exits 0. `round` names the attempt.
pub fn interrupt_attached(
    tracer: &mut std::process::Child,
    mut err: std::io::BufReader<std::process::ChildStderr>,
    report: &mut String,
    round: usize,
) {
    use std::io::Read;
    let kill = std::process::Command::new("kill")
        .args(["-INT", &tracer.id().to_string()])
        .status();
    assert!(
        kill.is_ok_and(|s| s.success()),
        "round {round}: kill -INT failed"
    );
    err.read_to_string(report).expect("stderr");
    let status = tracer.wait().expect("sysmeter ends");
    assert_eq!(status.code(), Some(0), "round {round}: {report}");
}

/// Starts a fixture (`cmd`) with stdout piped and reads its first line, which must be
/// `first` (the fixture says it is ready to be observed); the process and its stdout.
pub fn started_with_line(
    cmd: &mut std::process::Command,
    first: &str,
) -> (
    std::process::Child,
    std::io::BufReader<std::process::ChildStdout>,
) {
    use std::io::BufRead;
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("fixture starts");
    let mut out = std::io::BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    out.read_line(&mut line).expect("first line");
    assert_eq!(line, first);
    (child, out)
}

/// The stdout of command line `cmd` (which must succeed) run without sysmeter, to compare
/// with what it prints under sysmeter.
pub fn plain_stdout(cmd: &[&str]) -> String {
    let out = std::process::Command::new(cmd[0])
        .args(&cmd[1..])
        .output()
        .expect("runs");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Runs `sysmeter COMMAND ARGS --format json --out FILE -- CMD…` (a tracer launching CMD);
/// returns the run read from FILE, whose kind must be COMMAND, and the process's output.
pub fn traced_json(
    command: &str,
    args: &[&str],
    cmd: &[&str],
    dir: &std::path::Path,
) -> (Value, std::process::Output) {
    let out = dir.join(format!("{command}-{}.json", fastrand::u32(..)));
    let output = sysmeter()
        .arg(command)
        .args(args)
        .args(["--format", "json", "--out"])
        .arg(&out)
        .arg("--")
        .args(cmd)
        .output()
        .expect("sysmeter runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let text = std::fs::read_to_string(&out).unwrap_or_else(|e| panic!("no JSON ({e}): {stderr}"));
    let run: Value = serde_json::from_str(&text).expect("valid JSON");
    assert_eq!(run["kind"], command);
    (run, output)
}

/// Runs `cmd`, which must exit with `code` and name each of `names` on stderr. Returns
/// the stderr.
pub fn refused(cmd: &mut assert_cmd::Command, code: i32, names: &[&str]) -> String {
    let err = stderr_of(cmd, code);
    for name in names {
        assert!(err.contains(name), "no {name:?} in: {err}");
    }
    err
}

/// Runs `cmd`, which must be refused as a usage error: exit 2 and one sentence on stderr,
/// which must name each of `names`. Returns the sentence.
pub fn usage_error(cmd: &mut assert_cmd::Command, names: &[&str]) -> String {
    let err = refused(cmd, 2, names);
    assert_eq!(err.trim().lines().count(), 1, "one sentence: {err}");
    err
}

/// [`traced_json`] of `calls PRESET ARGS -- CMD…` (`PRESET`: the backend and options a
/// test file always passes), which must succeed: the run and the process's output.
pub fn calls_ok(
    preset: &[&str],
    args: &[&str],
    cmd: &[&str],
    dir: &std::path::Path,
) -> (Value, std::process::Output) {
    let args: Vec<&str> = preset.iter().chain(args).copied().collect();
    let (run, output) = traced_json("calls", &args, cmd, dir);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    (run, output)
}

/// Sends SIGKILL to the processes `pids` lists, again while new ones appear (a server forks
/// while it dies), for at most 10 s.
pub fn kill_until_empty(pids: impl Fn() -> Vec<String>) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let list = pids();
        if list.is_empty() || std::time::Instant::now() > deadline {
            return;
        }
        let _ = std::process::Command::new("kill")
            .arg("-KILL")
            .args(&list)
            .output();
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// `sysmeter <args> --no-store --format json --out run.json -- <argv>` in `dir`: the
/// report and the command's stdout (the run must succeed).
pub fn json_run(
    dir: &std::path::Path,
    args: &[&str],
    argv: &[&std::ffi::OsStr],
) -> (Value, String) {
    let json = dir.join("run.json");
    let out = sysmeter()
        .args(args)
        .args(["--no-store", "--format", "json", "--out"])
        .arg(&json)
        .arg("--")
        .args(argv)
        .output()
        .expect("sysmeter runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let run = serde_json::from_slice(&std::fs::read(&json).expect("report")).expect("JSON");
    (run, String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `compare FILES… --html PAGE`, which must succeed; returns `page`.
pub fn compare_html(files: &[std::path::PathBuf], page: std::path::PathBuf) -> std::path::PathBuf {
    sysmeter()
        .arg("compare")
        .args(files)
        .arg("--html")
        .arg(&page)
        .assert()
        .success();
    page
}
