//! A diagnosis made to lose records: the fixture and sysmeter both on CPU 0, sysmeter at
//! nice 19 and the fixture at nice -19, so the reader cannot drain the rings in time; and the
//! check that the report then says so right under its title, with the share lost. Used by
//! the perf backends of `locks` and `profile --off-cpu`.
//!
//! Needs taskset(1) from util-linux (capability `script`, the same package) and nice(1).

use std::path::Path;

use super::needs::compile_fixture;
use super::skip::{Cap, Missing};

/// A starved run: the fixture (built with `-pthread`) and its argument, the diagnosis and
/// its options, and what the report must say: the start of its title line and the words of
/// the loss under it.
pub struct Starved<'a> {
    pub fixture: &'a str,
    pub rounds: &'a str,
    pub diagnosis: &'a [&'a str],
    pub title: &'a str,
    pub lost: &'a str,
}

/// Builds the fixture, runs it starved ([`starved_run`]) and asserts that the report says
/// it lost records right under its title ([`assert_lost_under_title`]).
pub fn says_lost_under_title(run: Starved<'_>) -> Result<(), Missing> {
    taskset_and_nice()?;
    let dir = tempfile::tempdir().expect("tempdir");
    let prog = compile_fixture(run.fixture, dir.path(), &["-pthread"])?;
    let stderr = starved_run(dir.path(), run.diagnosis, &prog, run.rounds);
    assert_lost_under_title(&stderr, run.title, run.lost);
    Ok(())
}

/// Whether taskset(1) and nice(1) are on the `PATH`, or the [`Missing`] `script` capability.
pub fn taskset_and_nice() -> Result<(), Missing> {
    let on_path = |tool: &str| {
        std::env::var_os("PATH")
            .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()))
    };
    if on_path("taskset") && on_path("nice") {
        Ok(())
    } else {
        Err(Missing::new(
            Cap::Script,
            "taskset (util-linux) or nice (coreutils) missing",
        ))
    }
}

/// Runs `sysmeter <diagnosis> --no-store -- nice -n -19 <prog> <rounds>` on CPU 0 at nice
/// 19, in `dir`: its stderr (the run must succeed).
pub fn starved_run(dir: &Path, diagnosis: &[&str], prog: &Path, rounds: &str) -> String {
    let bin = assert_cmd::cargo::cargo_bin("sysmeter");
    let done = std::process::Command::new("taskset")
        .args(["-c", "0", "nice", "-n", "19"])
        .arg(bin)
        .args(diagnosis)
        .args(["--no-store", "--"])
        .args(["nice", "-n", "-19"])
        .arg(prog)
        .arg(rounds)
        .current_dir(dir)
        .output()
        .expect("run taskset");
    assert_eq!(done.status.code(), Some(0));
    String::from_utf8_lossy(&done.stderr).into_owned()
}

/// Asserts that the line right under the line starting with `title` in `stderr` is an
/// `Incomplete` warning that names `lost` (such as `"records lost ("`) and the share lost.
pub fn assert_lost_under_title(stderr: &str, title: &str, lost: &str) {
    let lines: Vec<&str> = stderr.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with(title))
        .unwrap_or_else(|| panic!("no title: {stderr}"));
    let next = lines.get(at + 1).copied().unwrap_or_default();
    assert!(
        next.starts_with("warning: Incomplete: ") && next.contains(lost),
        "the line under the title: {next:?}\n{stderr}"
    );
    assert!(next.contains('%'), "the share lost: {next}");
}
