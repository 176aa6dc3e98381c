//! Checks of the capabilities several test modules need, each giving the thing needed or
//! the [`Missing`] capability for `need!`: root, a C compiler (the fixtures under
//! `tests/fixtures/programs`, compiled on demand), perf events, tracepoints.

use std::path::{Path, PathBuf};

use super::skip::{Cap, Missing};

/// Whether this process runs as root (real uid 0, from /proc/self/status).
pub fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .map(|s| s.lines().any(|l| l.starts_with("Uid:\t0\t")))
        .unwrap_or(false)
}

/// Root, or `Missing` root because a test needs it `to` do something.
pub fn root(to: &str) -> Result<(), Missing> {
    if is_root() {
        Ok(())
    } else {
        Err(Missing::new(Cap::Root, format!("needs root to {to}")))
    }
}

/// Compiles fixture `name.c` into `dir/name` with debug info, frame pointers and `extra`
/// flags. `Err` when there is no C compiler; a source that does not compile is a test
/// failure.
pub fn compile_fixture(name: &str, dir: &Path, extra: &[&str]) -> Result<PathBuf, Missing> {
    let flags: Vec<&str> = ["-O1", "-g", "-fno-omit-frame-pointer"]
        .iter()
        .chain(extra)
        .copied()
        .collect();
    build_fixture("cc", &flags, &format!("{name}.c"), dir.join(name))
}

/// A path as the text of a command-line argument.
pub fn path_arg(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// [`compile_fixture`], the program's path as the text of a command-line argument.
pub fn fixture_arg(name: &str, dir: &Path, extra: &[&str]) -> Result<String, Missing> {
    Ok(path_arg(&compile_fixture(name, dir, extra)?))
}

/// Builds the fixture source `src` (a file of tests/fixtures/programs: C, C++ or Rust) into
/// `exe` with `compiler FLAGS -o EXE SRC`, the one compiler call of every fixture. `Err`
/// when `compiler` cannot be run; a source that does not compile is a test failure.
pub fn build_fixture(
    compiler: &str,
    flags: &[&str],
    src: &str,
    exe: PathBuf,
) -> Result<PathBuf, Missing> {
    let language = match src.rsplit_once('.').map(|(_, ext)| ext) {
        Some("c") => "C",
        Some("rs") => "Rust",
        _ => "C++",
    };
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/programs")
        .join(src);
    let status = std::process::Command::new(compiler)
        .args(flags)
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .status()
        .map_err(|e| {
            let reason = format!("no {language} compiler ({compiler}: {e})");
            Missing::new(Cap::Cc, reason)
        })?;
    assert!(
        status.success(),
        "{compiler} failed on {}: {status}",
        src.display()
    );
    Ok(exe)
}

/// Whether perf events (the sampling profiler's) are permitted here.
pub fn perf() -> Result<(), Missing> {
    sysmeter::diagnose::profile::perf_available().map_err(|e| {
        Missing::new(
            Cap::Perf,
            format!("perf events are not permitted here: {e}"),
        )
    })
}

/// Whether the tracepoint backend of `trace` may run here (root or
/// perf_event_paranoid ≤ -1; as root sysmeter mounts tracefs itself when needed).
pub fn tracepoints() -> Result<(), Missing> {
    let paranoid: i32 = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(2);
    if !is_root() && paranoid > -1 {
        return Err(Missing::new(
            Cap::Tracepoints,
            format!("tracepoints need root or perf_event_paranoid ≤ -1 (it is {paranoid})"),
        ));
    }
    Ok(())
}

/// Whether off-CPU profiles (scheduler tracepoints, system-wide wakings) may run here.
pub fn off_cpu() -> Result<(), Missing> {
    tracepoints()?;
    sysmeter::diagnose::offcpu::available().map_err(|e| {
        Missing::new(
            Cap::Tracepoints,
            format!("off-CPU profiles cannot run here: {e}"),
        )
    })
}

/// Whether the in-kernel off-CPU backend (`--backend bpf`) can load its programs here.
pub fn bpf() -> Result<(), Missing> {
    tracepoints()?;
    sysmeter::diagnose::offcpu::bpf::available().map_err(|e| {
        Missing::new(
            Cap::Bpf,
            format!("the in-kernel backend cannot run here: {e}"),
        )
    })
}

/// Go's `go`, for `go tool pprof`: on PATH (Debian's golang-go), else the upstream install's.
pub fn go() -> Result<PathBuf, Missing> {
    let candidates = [PathBuf::from("go"), PathBuf::from("/usr/local/go/bin/go")];
    candidates
        .into_iter()
        .find(|go| {
            std::process::Command::new(go)
                .arg("version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .ok_or_else(|| Missing::new(Cap::Go, "no Go toolchain (`go`) to run `go tool pprof`"))
}
