//! The tracers as an unprivileged user (uid 65534 through `setpriv`): each one that cannot
//! observe without privileges says why in one `error:` sentence with the fix and exits 2,
//! the same for all of them.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::need;
use crate::support::skip::{Cap, Missing};

/// A copy of the sysmeter binary that any user may run, in a world-readable temp dir.
fn public_binary(dir: &Path) -> PathBuf {
    let bin = dir.join("sysmeter");
    std::fs::copy(assert_cmd::cargo::cargo_bin("sysmeter"), &bin).expect("copy the binary");
    for p in [dir, bin.as_path()] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    bin
}

/// Running sysmeter as another user needs root and `setpriv` (util-linux).
pub(crate) fn can_run_as_nobody() -> Result<(), Missing> {
    crate::support::needs::root("run sysmeter as another user")?;
    match Command::new("setpriv").arg("--version").output() {
        Ok(_) => Ok(()),
        Err(_) => Err(Missing::new(
            Cap::Root,
            "running as another user needs setpriv (util-linux)",
        )),
    }
}

/// Runs `sysmeter ARGS` as user 65534 (`setpriv`), from a copy of the binary in `dir`
/// (also its home), without colour.
pub(crate) fn as_nobody(dir: &Path, args: &[&str]) -> Output {
    Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(public_binary(dir))
        .args(args)
        .env("HOME", dir)
        .env("NO_COLOR", "1")
        .output()
        .expect("run as nobody")
}

#[test]
fn tracers_without_privileges_are_a_usage_error_alike() {
    need!(can_run_as_nobody());
    let dir = tempfile::tempdir().expect("tempdir");
    for args in [
        // The in-process backend needs no privileges; uprobes do.
        &[
            "calls",
            "--backend",
            "uprobe",
            "--no-store",
            "--",
            "/bin/true",
        ][..],
        &["locks", "--no-store", "--", "/bin/true"],
        &["profile", "--off-cpu", "--no-store", "--", "/bin/true"],
    ] {
        let out = as_nobody(dir.path(), args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
        assert_eq!(errors.len(), 1, "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        // A permission problem says so, with the fix, and is not called a missing feature.
        assert!(errors[0].contains("root"), "{args:?}: {err}");
        assert!(!errors[0].contains("missing"), "{args:?}: {err}");
    }
}
