//! Integration tests of the unwinder (`observe::unwind`) through the three diagnoses that
//! take stacks, on code without frame pointers:
//! - a C fixture (tests/fixtures/programs/unwind_tree.c) built with `-O2
//!   -fomit-frame-pointer`, with the known call tree main → tree_loop → tree_a → tree_b →
//!   leaf: every stack through the fixture's functions reaches `main` (or, in the mutex
//!   variant's threads, the thread's start) in `profile` (spin), `profile --off-cpu`
//!   (block: nanosleep) and `locks` (mutex);
//! - Debian's `/usr/bin/xz`: in `unwind_xz`.
//!
//! - `.debug_frame`: a fixture built without unwind tables (its CFI only in `.debug_frame`)
//!   is unwound, and a stripped one through its compressed separate debug file.
//!
//! The checks are on stacks, not times, so they hold on a loaded machine; CPU-bound runs
//! hold [`exclusive`] like the other profile tests.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::needs::{off_cpu, perf, tracepoints};
use crate::support::skip::{Cap, Missing};
use crate::support::{compile_fixture, exclusive, need, result, sysmeter};

/// The fixture built without frame pointers (the flags after the helper's own win).
fn tree(dir: &Path) -> Result<PathBuf, Missing> {
    compile_fixture(
        "unwind_tree",
        dir,
        &["-O2", "-fomit-frame-pointer", "-pthread"],
    )
}

/// Folded stacks (`a;b;c N`) as (frames outermost first, weight).
fn folded(text: &str) -> Vec<(Vec<String>, u64)> {
    text.lines()
        .filter_map(|l| {
            let (stack, n) = l.rsplit_once(' ')?;
            let frames = stack.split(';').map(str::to_string).collect();
            Some((frames, n.parse().ok()?))
        })
        .collect()
}

pub(crate) fn has(frames: &[String], name: &str) -> bool {
    frames.iter().any(|f| f == name)
}

/// Whether `frames` hold `names` in this order (outermost first), others between allowed.
fn in_order(frames: &[String], names: &[&str]) -> bool {
    let mut it = frames.iter();
    names.iter().all(|n| it.any(|f| f == n))
}

/// Runs `sysmeter ARGS… --folded FILE` and returns the folded stacks.
pub(crate) fn profile_folded(dir: &Path, args: &[&str]) -> Vec<(Vec<String>, u64)> {
    let path = dir.join("folded.txt");
    sysmeter()
        .args(["profile", "--no-store", "--folded"])
        .arg(&path)
        .args(args)
        .assert()
        .success();
    folded(&std::fs::read_to_string(&path).expect("folded stacks written"))
}

/// Every stack through the fixture's `tree_b` goes up through `tree_a` and `tree_loop`
/// to `main`, and those ending in `leaf` hold at least `min_share` of the weight (the
/// others are in the mode check's `strcmp` or the loop's clock reads).
fn check_reaches_main(stacks: &[(Vec<String>, u64)], leaf: &str, min_share: f64) {
    let total: u64 = stacks.iter().map(|s| s.1).sum();
    let mut through = 0;
    for (frames, n) in stacks.iter().filter(|(f, _)| has(f, "tree_b")) {
        assert!(
            in_order(frames, &["main", "tree_loop", "tree_a", "tree_b"]),
            "a stack through tree_b does not reach main: {frames:?}"
        );
        if in_order(frames, &["tree_b", leaf]) {
            through += n;
        }
    }
    assert!(
        through as f64 >= min_share * total as f64,
        "{through} of {total} through tree_b → {leaf}: {stacks:?}"
    );
}

/// The stacks of a fixture that `build` makes, run in `mode` for `ms` under `profile
/// ARGS`, each through `tree_<mode>` checked to reach main; `Err` when it cannot be built.
fn profiled_tree(
    build: fn(&Path) -> Result<PathBuf, Missing>,
    args: &[&str],
    mode: &str,
    ms: &str,
) -> Result<Vec<(Vec<String>, u64)>, Missing> {
    let dir = tempfile::tempdir().expect("tempdir");
    let prog = build(dir.path())?;
    let prog = prog.to_string_lossy().to_string();
    let args = [args, &["--", &prog, mode, ms]].concat();
    let stacks = profile_folded(dir.path(), &args);
    check_reaches_main(&stacks, &format!("tree_{mode}"), 0.8);
    Ok(stacks)
}

#[test]
fn cpu_samples_of_frameless_code_reach_main() {
    let _alone = exclusive();
    need!(perf());
    need!(profiled_tree(tree, &[], "spin", "600"));
}

/// The fixture with its own code's CFI in `.debug_frame` only (no unwind tables asked
/// for; `-g` still describes the frames), beside the C runtime's small `.eh_frame`.
fn tree_debug_frame(dir: &Path) -> Result<PathBuf, Missing> {
    let flags = [
        "-O2",
        "-fomit-frame-pointer",
        "-fno-asynchronous-unwind-tables",
    ];
    compile_fixture(
        "unwind_tree",
        dir,
        &[&flags[..], &["-fno-unwind-tables", "-pthread"]].concat(),
    )
}

#[test]
fn a_debug_frame_serves_when_the_eh_frame_does_not_cover_the_code() {
    let _alone = exclusive();
    need!(perf());
    need!(profiled_tree(tree_debug_frame, &[], "spin", "400"));
}

/// Runs `tool args…`; `Err` when the tool is missing.
fn tool(name: &str, args: &[&std::ffi::OsStr]) -> Result<(), Missing> {
    let status = std::process::Command::new(name)
        .args(args)
        .status()
        .map_err(|e| Missing::new(Cap::Cc, format!("no {name} (binutils): {e}")))?;
    assert!(status.success(), "{name} {args:?}: {status}");
    Ok(())
}

/// The stated address of `symbol` in `exe`, from `nm`.
fn address_of(exe: &Path, symbol: &str) -> u64 {
    let out = std::process::Command::new("nm")
        .arg(exe)
        .output()
        .expect("nm");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let line = text.lines().find(|l| l.ends_with(&format!(" {symbol}")));
    let word = line.and_then(|l| l.split_whitespace().next());
    u64::from_str_radix(word.unwrap_or_else(|| panic!("no {symbol}: {text}")), 16).expect("hex")
}

#[test]
fn a_separate_debug_file_gives_the_tables_a_stripped_file_lacks() {
    use sysmeter::diagnose::observe::elf::read_layout;
    use sysmeter::diagnose::observe::unwind::tables::FileTables;
    let dir = tempfile::tempdir().expect("tempdir");
    let prog = need!(tree_debug_frame(dir.path()));
    let spin = address_of(&prog, "tree_spin");
    let build_id = read_layout(&prog)
        .and_then(|l| l.build_id)
        .expect("a build id");
    let hex: String = build_id.iter().map(|b| format!("{b:02x}")).collect();
    let debug_dir = dir.path().join("debug");
    let debug = debug_dir.join(format!("{}/{}.debug", &hex[..2], &hex[2..]));
    std::fs::create_dir_all(debug.parent().expect("parent")).expect("mkdir");
    // Compressed, as Debian's debug packages ship them (SHF_COMPRESSED, zlib).
    need!(tool(
        "objcopy",
        &[
            "--only-keep-debug".as_ref(),
            "--compress-debug-sections=zlib".as_ref(),
            prog.as_os_str(),
            debug.as_os_str()
        ]
    ));
    need!(tool("strip", &["--strip-debug".as_ref(), prog.as_os_str()]));
    let kept = read_layout(&debug).and_then(|l| l.debug_frame);
    assert!(kept.is_some_and(|s| s.compressed), "{kept:?}");
    let layout = read_layout(&prog).expect("layout");
    assert!(layout.debug_frame.is_none(), "strip left .debug_frame");
    let offset = |svma: u64| {
        let &(va, _, off) = layout
            .loads
            .iter()
            .find(|l| l.0 <= svma && svma < l.0 + l.1)
            .expect("load");
        svma - va + off
    };
    let without = FileTables::read_in(&prog, &dir.path().join("none")).expect("tables");
    assert_eq!(
        without.function_at(offset(spin + 1)),
        None,
        "only the start files' CFI"
    );
    let with = FileTables::read_in(&prog, &debug_dir).expect("tables");
    assert_eq!(with.function_at(offset(spin + 1)), Some((spin, spin + 1)));
}

#[test]
fn blocked_stacks_of_frameless_code_reach_main() {
    let _on = crate::support::observing(&[crate::support::Event::Sched]);
    need!(off_cpu());
    let stacks = need!(profiled_tree(tree, &["--off-cpu"], "block", "400"));
    // The libc wrapper between the fixture and the kernel is kept too.
    assert!(
        stacks
            .iter()
            .any(|(f, _)| in_order(f, &["tree_block", "nanosleep"])),
        "{stacks:?}"
    );
}

/// Starts the fixture in `mode` for `ms` and profiles it with `-p` for a second (`extra`
/// arguments first); the folded stacks.
fn attached(dir: &Path, mode: &str, ms: &str, extra: &[&str]) -> Vec<(Vec<String>, u64)> {
    let prog = tree(dir).expect("checked by the caller");
    let mut child = std::process::Command::new(&prog)
        .args([mode, ms])
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("fixture started");
    // Let it reach its loop: the stacks of its start-up are not the point.
    std::thread::sleep(std::time::Duration::from_millis(200));
    let pid = child.id().to_string();
    let args = [extra, &["--duration", "1", "-p", &pid]].concat();
    let stacks = profile_folded(dir, &args);
    let _ = child.kill();
    let _ = child.wait();
    stacks
}

#[test]
fn attached_processes_are_unwound_through_their_existing_mappings() {
    let _alone = crate::support::observing_alone(&[crate::support::Event::Sched]);
    need!(perf());
    let dir = tempfile::tempdir().expect("tempdir");
    need!(tree(dir.path()));
    let stacks = attached(dir.path(), "spin", "5000", &[]);
    check_reaches_main(&stacks, "tree_spin", 0.8);
    match off_cpu() {
        Ok(()) => {
            let stacks = attached(dir.path(), "block", "5000", &["--off-cpu"]);
            check_reaches_main(&stacks, "tree_block", 0.8);
        }
        Err(missing) => missing.skip_part("the off-CPU part"),
    }
}

/// The `wait stacks` artifact of a `locks` run of `args`.
pub(crate) fn wait_stacks(dir: &Path, args: &[&str]) -> (Value, Vec<(Vec<String>, u64)>) {
    let out = dir.join("locks.json");
    sysmeter()
        .args(["locks", "--no-store", "--format", "json", "--out"])
        .arg(&out)
        .arg("--")
        .args(args)
        .assert()
        .success();
    let run: Value = serde_json::from_slice(&std::fs::read(&out).expect("report")).expect("JSON");
    let text = crate::support::artifact(result(&run, "locks"), "wait stacks").to_string();
    (run, folded(&text))
}

#[test]
fn lock_waits_of_frameless_code_reach_main_or_the_thread_start() {
    let _on =
        crate::support::observing(&[crate::support::Event::Futex, crate::support::Event::Sched]);
    need!(tracepoints());
    let dir = tempfile::tempdir().expect("tempdir");
    let prog = need!(tree(dir.path()));
    let prog = prog.to_string_lossy().to_string();
    let (_, stacks) = wait_stacks(dir.path(), &[&prog, "mutex", "400"]);
    let locked: Vec<_> = stacks
        .iter()
        .filter(|(f, _)| has(f, "pthread_mutex_lock"))
        .collect();
    assert!(!locked.is_empty(), "no mutex wait: {stacks:?}");
    for (frames, _) in &locked {
        let path = [
            "tree_loop",
            "tree_a",
            "tree_b",
            "tree_lock",
            "pthread_mutex_lock",
        ];
        let from_main = in_order(frames, &[&["main"][..], &path].concat());
        let from_thread = in_order(
            frames,
            &[&["start_thread", "tree_worker"][..], &path].concat(),
        );
        assert!(from_main || from_thread, "cut stack: {frames:?}");
    }
    assert!(
        locked.iter().any(|(f, _)| has(f, "main")),
        "main never waited: {stacks:?}"
    );
}
