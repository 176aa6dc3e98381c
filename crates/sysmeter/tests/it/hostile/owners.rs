//! The cases of `hostile.rs` about whose leftovers a bench removes. Every bench first removes
//! the fs test directories (`sysmeter-fs-<pid>-…`) of benches that were killed, judged by
//! the owner's `flock` on the directory's lock file, never by the pid in its name: pid
//! numbers repeat across pid namespaces (a bench in a container) and are reused. So a
//! directory whose lock a live process holds stays whatever pid its name shows, another
//! user's directory stays, and only our own directory whose owner died goes.

use std::process::Command;

use super::setup::v;
use super::{Case, Ctx, Io};
use crate::support::cmd::quick_bench;
use crate::support::is_root;

/// The lock file every test directory holds (`experiments::fs::stale::OWNER_LOCK`).
const LOCK: &str = ".sysmeter-owner";

/// The base directory the cases' benches use (`--dir`), made once.
fn base(c: &Ctx) -> String {
    let base = c.path("fsbase");
    let _ = std::fs::create_dir_all(&base);
    base
}

/// A test directory `name` in the base with its lock file, left alone for two hours.
fn test_dir(c: &Ctx, name: &str) -> Result<String, String> {
    let dir = format!("{}/{name}", base(c));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    std::fs::write(format!("{dir}/{LOCK}"), "").map_err(|e| e.to_string())?;
    for p in [format!("{dir}/{LOCK}"), dir.clone()] {
        let touched = Command::new("touch")
            .args(["-d", "2 hours ago", &p])
            .status();
        if !touched.is_ok_and(|t| t.success()) {
            return Err("touch -d failed".into());
        }
    }
    Ok(dir)
}

/// A quick bench that stores nothing, with its fs test directories in the base.
fn bench(c: &Ctx) -> Vec<String> {
    let mut args = quick_bench("os.syscall");
    args.extend(v(&["--dir", &base(c)]));
    args
}

/// Whether `dir` of the base still exists.
fn still_there(c: &Ctx, name: &str) -> Result<(), String> {
    match std::path::Path::new(&format!("{}/{name}", base(c))).exists() {
        true => Ok(()),
        false => Err(format!("{name} was removed")),
    }
}

// 4194999 is above the largest pid_max (2^22): no process here has it, as a bench in another
// pid namespace would have written it.
const LIVE: &str = "sysmeter-fs-4194999-live";
const FOREIGN: &str = "sysmeter-fs-4194999-theirs";
const DEAD: &str = "sysmeter-fs-4194999-dead";

pub const OWNERS: &[Case] = &[
    Case {
        name: "test-dir-of-a-live-bench-elsewhere-stays",
        args: |c| {
            let dir = test_dir(c, LIVE)?;
            // The owner's lock, held by a live process (as a bench in a container would).
            // Its streams are not the test's: the `sleep` outlives the killed `flock`, and
            // would hold a piped test run's output open for its 300 s.
            let holder = Command::new("flock")
                .args(["--exclusive", &format!("{dir}/{LOCK}"), "sleep", "300"])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .map_err(|e| format!("flock: {e}"))?;
            c.kept.child(holder);
            std::thread::sleep(std::time::Duration::from_millis(300));
            Ok(bench(c))
        },
        code: 0,
        says: "",
        runs_after: 1,
        io: Io::Piped,
        after: |c| still_there(c, LIVE),
    },
    Case {
        name: "test-dir-of-another-user-stays",
        args: |c| {
            if !is_root() {
                return Err("giving a directory to another user needs root".into());
            }
            let dir = test_dir(c, FOREIGN)?;
            let given = Command::new("chown")
                .args(["-R", "65534:65534", &dir])
                .status();
            match given.is_ok_and(|g| g.success()) {
                true => Ok(bench(c)),
                false => Err("chown failed".into()),
            }
        },
        code: 0,
        says: "",
        runs_after: 1,
        io: Io::Piped,
        after: |c| still_there(c, FOREIGN),
    },
    Case {
        name: "test-dir-of-a-killed-bench-goes",
        args: |c| {
            test_dir(c, DEAD)?;
            Ok(bench(c))
        },
        code: 0,
        says: "removed 1 test directory",
        runs_after: 1,
        io: Io::Piped,
        after: |c| match still_there(c, DEAD) {
            Ok(()) => Err(format!("{DEAD} of a dead owner was kept")),
            Err(_) => Ok(()),
        },
    },
];
