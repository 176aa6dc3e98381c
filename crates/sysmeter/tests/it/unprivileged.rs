//! The tracers as an unprivileged user (uid 65534 through `setpriv`): each one that cannot
//! observe without privileges says why in one `error:` sentence with the fix and exits 2,
//! the same for all of them.

use std::os::unix::fs::PermissionsExt;
use std::process::Command;

use crate::support::skip::{Cap, Missing, skip};

/// A copy of the sysmeter binary that any user may run, in a world-readable temp dir.
pub(crate) fn public_binary(dir: &std::path::Path) -> std::path::PathBuf {
    let bin = dir.join("sysmeter");
    std::fs::copy(assert_cmd::cargo::cargo_bin("sysmeter"), &bin).expect("copy the binary");
    for p in [dir, bin.as_path()] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    bin
}

#[test]
fn tracers_without_privileges_are_a_usage_error_alike() {
    let root = std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(2) == Some("0"));
    let setpriv = Command::new("setpriv").arg("--version").output().is_ok();
    if !root || !setpriv {
        skip!(Missing::new(
            Cap::Root,
            "running as another user needs root and setpriv (util-linux)"
        ));
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = public_binary(dir.path());
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
        let out = Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(&bin)
            .args(args)
            .env("HOME", dir.path())
            .env("NO_COLOR", "1")
            .output()
            .expect("run as nobody");
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
