//! What the tests of a full disk and an exhausted quota share (hardening/disk.rs and the
//! audit cases of hostile/audit.rs): a 1 MiB tmpfs (root), filling it, and whether `strace`
//! can inject EDQUOT here (this kernel's tmpfs and ext4 have no quota support).

use std::path::Path;
use std::process::{Command, Stdio};

use super::needs::is_root;
use super::skip::{Cap, Missing};

/// Mounts a 1 MiB tmpfs on `mnt` (created here), or says why it cannot. The caller unmounts
/// it.
pub fn mount_small_tmpfs(mnt: &Path) -> Result<(), Missing> {
    if !is_root() {
        return Err(Missing::new(Cap::Root, "mounting a small tmpfs needs root"));
    }
    std::fs::create_dir_all(mnt).expect("mkdir");
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=1M", "tmpfs"])
        .arg(mnt)
        .status();
    if !mounted.is_ok_and(|s| s.success()) {
        return Err(Missing::new(Cap::Root, "cannot mount a tmpfs here"));
    }
    Ok(())
}

/// Writes zeros into `dir/fill` until the file system says it is full.
pub fn fill(dir: &Path) {
    let mut f = std::fs::File::create(dir.join("fill")).expect("fill");
    while std::io::Write::write_all(&mut f, &[0u8; 4096]).is_ok() {}
}

/// Whether `strace` can inject system call errors here (installed, and ptrace allowed).
pub fn strace_injects() -> Result<(), Missing> {
    let ok = Command::new("strace")
        .args([
            "-f",
            "-qq",
            "-o",
            "/dev/null",
            "-e",
            "inject=getpid:error=EDQUOT",
            "true",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    match ok {
        Ok(st) if st.success() => Ok(()),
        _ => Err(Missing::new(
            Cap::Strace,
            "strace is not installed or cannot trace here",
        )),
    }
}
