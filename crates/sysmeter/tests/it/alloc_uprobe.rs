//! The uprobe fallback of `sysmeter alloc` (in-kernel aggregation; needs root and the
//! kernel's BTF, capability `bpf`): the three-site fixture built static (`cc -static`, no
//! frame pointers, so the stack of the leaks comes from the DWARF walk of the snapshot)
//! reported exactly — counts, bytes, the 100 leaks with their stack, the peak and its time
//! within 10% of the program's own clock — and a running process (`-p`) that allocates a
//! known pattern after the attach, counted exactly after it exits, with its free of a block
//! allocated before the attach counted apart; a setuid program (which the dynamic linker
//! will not preload into) takes the fallback on its C library; a static program whose main
//! thread exits first is still counted and named. Fixtures need a C compiler
//! and, for the static one, the static C library (libc.a, in libc6-dev).

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::alloc::{alloc, assert_three_sites, site, sites};
use crate::support::cmd::{start_attached, started_with_line};
use crate::support::needs::bpf;
use crate::support::skip::{Cap, Missing};
use crate::support::{compile_fixture, need};

/// The finding `key` of the run: (text, value).
fn finding(run: &Value, key: &str) -> (String, f64) {
    let all = run["results"][0]["findings"].as_array().cloned();
    let f = all
        .unwrap_or_default()
        .into_iter()
        .find(|f| f["key"] == key);
    let f = f.unwrap_or_else(|| panic!("no finding {key} in {run:#}"));
    let text = f["text"].as_str().unwrap_or_default().to_string();
    (text, f["value"].as_f64().unwrap_or(f64::NAN))
}

/// The static C library, which `cc -static` links.
fn static_libc() -> Result<(), Missing> {
    let out = Command::new("cc").arg("-print-file-name=libc.a").output();
    let path = out.map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    match path {
        Ok(p) if Path::new(&p).is_absolute() && Path::new(&p).exists() => Ok(()),
        _ => Err(Missing::new(
            Cap::Cc,
            "no static C library (libc.a; apt-get install libc6-dev)",
        )),
    }
}

/// `alloc` of fixture `name` built with `-static` and `flags` (which must succeed): the
/// run and its stderr; `Err` when there is no BPF, no static C library or no compiler.
fn static_alloc(name: &str, flags: &[&str]) -> Result<(Value, String), Missing> {
    bpf()?;
    static_libc()?;
    let dir = tempfile::tempdir().expect("tempdir");
    let flags: Vec<&str> = ["-static"].iter().chain(flags).copied().collect();
    let bin = crate::support::fixture_arg(name, dir.path(), &flags)?;
    Ok(alloc(&[], &[&bin], dir.path()))
}

#[test]
fn a_static_program_is_reported_exactly_through_uprobes() {
    // No frame pointers: the kernel's walk stops at the allocating function, the DWARF walk
    // of the snapshot finds main.
    let (run, stderr) = need!(static_alloc("alloc_sites", &["-fomit-frame-pointer"]));
    assert_three_sites(&run, &stderr);
    let (text, _) = finding(&run, "mechanism");
    assert!(text.contains("uprobes"), "{text}");
    // The start-up of the static C library may leave a stack the kernel cannot walk (one
    // lump site); the fixture's own allocations all kept theirs (above). Never silent:
    let (text, lost) = finding(&run, "stacks");
    assert!(lost <= 5.0, "{text}");
}

#[test]
fn a_running_process_is_counted_exactly_after_the_attach() {
    need!(bpf());
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = need!(compile_fixture("alloc_wait", dir.path(), &[]));
    let mut waiting = Command::new(&bin);
    waiting.stdin(Stdio::piped());
    let (mut child, mut out) = started_with_line(&mut waiting, "ready\n");
    let json = dir.path().join("run.json");
    let pid = child.id().to_string();
    let json_arg = json.to_string_lossy().into_owned();
    let args = [
        "alloc",
        "--no-store",
        "--format",
        "json",
        "--out",
        &json_arg,
    ];
    let args: Vec<&str> = args.iter().copied().chain(["-p", pid.as_str()]).collect();
    let (mut tracer, mut err, mut said) = start_attached(&args, 0);
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(b"go\n").expect("the fixture reads");
    let mut rest = String::new();
    out.read_to_string(&mut rest).expect("the rest");
    assert_eq!(rest, "done\n");
    assert_eq!(child.wait().expect("fixture ends").code(), Some(0));
    // The process's end ends the session.
    err.read_to_string(&mut said).expect("stderr");
    assert_eq!(
        tracer.wait().expect("sysmeter ends").code(),
        Some(0),
        "{said}"
    );
    let text = std::fs::read_to_string(&json).expect("the run");
    let run: Value = serde_json::from_str(&text).expect("JSON");
    let (churn, stack) = site(&run, "churn (alloc_wait.c:");
    assert_eq!(churn, (1000, 128_000, 0, 0, 1000), "{stack:?}");
    assert!(stack.iter().any(|f| f.starts_with("main")), "{stack:?}");
    let (kept, _) = site(&run, "keep (alloc_wait.c:");
    assert_eq!((kept.0, kept.1, kept.2, kept.3), (50, 51_200, 50, 51_200));
    // The block allocated before the attach: its free is counted apart, never as a site's.
    let (text, foreign) = finding(&run, "mechanism");
    assert!(foreign >= 1.0, "{text}");
    assert!(!sites(&run).iter().any(|r| r["bytes"] == 333), "{run:#}");
    let (text, _) = finding(&run, "leaks");
    assert!(text.contains("when observation stopped"), "{text}");
    finding(&run, "ended");
}

#[test]
fn a_setuid_program_takes_the_fallback_on_its_c_library() {
    use std::os::unix::fs::PermissionsExt;
    need!(bpf());
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = need!(compile_fixture("alloc_sites", dir.path(), &[]));
    let mode = std::fs::Permissions::from_mode(0o4755);
    std::fs::set_permissions(&bin, mode).expect("chmod u+s");
    let (run, stderr) = alloc(&[], &[&bin.to_string_lossy()], dir.path());
    assert!(stderr.contains("libc.so"), "{stderr}");
    assert_counted_on_libc(&run, "setuid");
}

/// The leaks and the small blocks of `alloc_sites` counted exactly on its C library, and the
/// `mechanism` finding saying `why` uprobes were used.
fn assert_counted_on_libc(run: &Value, why: &str) {
    let (leak, stack) = site(run, "leak_pages");
    assert_eq!((leak.0, leak.2, leak.3), (100, 100, 409_600), "{stack:?}");
    let (small, _) = site(run, "small_blocks (alloc_sites.c:48)");
    assert_eq!((small.0, small.1, small.2), (100_000, 6_400_000, 0));
    let (text, _) = finding(run, "mechanism");
    assert!(text.contains(why), "{text}");
}

#[test]
fn backend_uprobes_counts_a_program_the_library_could_enter_the_same() {
    need!(bpf());
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = need!(compile_fixture("alloc_sites", dir.path(), &[]));
    let args = ["--backend", "uprobes"];
    let (run, stderr) = alloc(&args, &[&bin.to_string_lossy()], dir.path());
    assert!(stderr.contains("chosen with --backend uprobes"), "{stderr}");
    assert_counted_on_libc(&run, "chosen with --backend uprobes");
}

#[test]
fn a_static_program_whose_main_thread_leaves_first_is_still_counted() {
    let (run, _) = need!(static_alloc("alloc_mainexit", &["-pthread"]));
    let (pairs, stack) = site(&run, "pairs (alloc_mainexit.c:");
    assert_eq!(pairs, (2000, 64_000, 0, 0, 2000), "{stack:?}");
    assert!(stack.iter().any(|f| f.starts_with("worker")), "{stack:?}");
}
