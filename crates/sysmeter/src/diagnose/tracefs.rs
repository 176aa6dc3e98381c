//! Where tracefs is: the mount points tried, the one that holds a given file, and mounting it
//! as `perf` does. The tracepoint backend of `trace`, the path uprobes of `run`, `calls` and
//! `locks` read event ids or write probe definitions there.
//!
//! Depends on std only (and `mount(8)` when asked to mount).

use std::path::Path;

/// The tracefs mount points tried, in order.
pub const MOUNT_POINTS: [&str; 2] = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];

/// The first mount point holding `rel` (e.g. `uprobe_events`), if any.
pub fn holding(rel: &str) -> Option<&'static str> {
    MOUNT_POINTS
        .into_iter()
        .find(|base| Path::new(base).join(rel).exists())
}

/// Mounts tracefs at the first mount point with mount(8), as `perf` does; `true` if it
/// worked.
pub fn mount() -> bool {
    std::process::Command::new("mount")
        .args(["-t", "tracefs", "nodev", MOUNT_POINTS[0]])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}
