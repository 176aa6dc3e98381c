//! Uprobe definitions in tracefs, owned RAII: a [`UprobeGroup`] writes `p:GROUP/NAME
//! FILE:0xOFFSET [fetch args]` (entry) and `r:…` (return) lines into `uprobe_events`, under a
//! group unique to this process (`PREFIX<pid>x<random>`: pids repeat across pid namespaces,
//! and tracefs is shared by them), and dropping it removes each definition with
//! `-:GROUP/NAME` — after the perf events on them are closed, which the owner guarantees by
//! dropping its rings first. The owner also holds an exclusive `flock` on
//! `GROUP.lock` in [`lock_dir`] while it lives; the kernel drops it however the owner dies.
//! Groups of the same prefix whose lock can be taken are left by a sysmeter that died, and
//! are removed when a group is made; a group without a lock file (another container's
//! /run, an older sysmeter) is never touched. `calls` (entry and return probes on the functions it counts) and the path
//! probes of `trace`/`run` (entry probes that copy a path argument) both define theirs here.
//!
//! Why tracefs definitions and not the `uprobe` PMU: with `inherit`, the PMU makes the kernel
//! re-read the path string pointer in the *target's* memory at each clone, which then fails
//! (docs/kernel-traps.md). Each definition costs about 70 ms when its last event is closed
//! (the kernel unregisters it and waits for an RCU grace period), so callers keep their lists
//! short. File writes only; depends on [`super::tracefs`].

use std::io::Write;
use std::path::{Path, PathBuf};

use super::tracefs::{self, EventFormat};

/// Whether a probe fires at the function's entry or at its return.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fires {
    /// `p:` — at the instruction (the function's first one: its entry).
    Entry,
    /// `r:` — when the function entered there returns.
    Return,
}

/// Our probe definitions in one group; removed on drop.
#[derive(Debug)]
pub struct UprobeGroup {
    base: &'static str,
    group: String,
    names: Vec<String>,
    /// The owner lock of the group (`None` where no lock file could be made: the group is
    /// then never judged stale by others).
    lock: Option<(std::fs::File, PathBuf)>,
}

/// Where the owner locks of uprobe groups live: one directory per host (tracefs is one per
/// kernel), root's as uprobes are.
pub fn lock_dir() -> PathBuf {
    PathBuf::from("/run/sysmeter-uprobes")
}

/// The lock file of `group`.
fn lock_path(dir: &Path, group: &str) -> PathBuf {
    dir.join(format!("{group}.lock"))
}

/// Whether the owner of `group` is gone: its lock file exists and its lock can be taken.
fn abandoned(dir: &Path, group: &str) -> bool {
    crate::host::ownership::lock_is_free(&lock_path(dir, group))
}

/// Creates and locks the lock file of `group`.
fn take_lock(dir: &Path, group: &str) -> Option<(std::fs::File, PathBuf)> {
    std::fs::create_dir_all(dir).ok()?;
    let path = lock_path(dir, group);
    let f = std::fs::File::create(&path).ok()?;
    f.lock().ok()?;
    Some((f, path))
}

fn append(base: &str, line: &str) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(format!("{base}/uprobe_events"))?;
    f.write_all(format!("{line}\n").as_bytes())
}

/// The `GROUP/NAME` of the definitions in `uprobe_events` text whose group is one of ours
/// (`prefix`, digits, `x`, hex digits) and `abandoned`. Pure apart from `abandoned`.
pub fn stale(text: &str, prefix: &str, abandoned: &dyn Fn(&str) -> bool) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.split_whitespace().next()?.split_once(':').map(|x| x.1))
        .filter(|ev| {
            let group = ev.split('/').next().unwrap_or("");
            is_ours(group, prefix) && abandoned(group)
        })
        .map(str::to_string)
        .collect()
}

/// Whether `group` is named like the groups [`UprobeGroup::new`] makes with `prefix`.
fn is_ours(group: &str, prefix: &str) -> bool {
    let Some((pid, tag)) = group
        .strip_prefix(prefix)
        .and_then(|rest| rest.split_once('x'))
    else {
        return false;
    };
    let digits = |s: &str, f: fn(&char) -> bool| !s.is_empty() && s.chars().all(|c| f(&c));
    digits(pid, char::is_ascii_digit) && digits(tag, char::is_ascii_hexdigit)
}

/// The tracefs mount that holds `uprobe_events`, if any.
pub fn tracefs_base() -> Option<&'static str> {
    tracefs::holding("uprobe_events")
}

impl UprobeGroup {
    /// The group `PREFIX<our pid>` in the tracefs mount `base` (see [`tracefs_base`]), after
    /// removing the groups of `prefix` whose sysmeter died.
    pub fn new(base: &'static str, prefix: &str) -> UprobeGroup {
        let dir = lock_dir();
        if let Ok(text) = std::fs::read_to_string(format!("{base}/uprobe_events")) {
            let gone = |group: &str| abandoned(&dir, group);
            let events = stale(&text, prefix, &gone);
            for ev in &events {
                let _ = append(base, &format!("-:{ev}"));
            }
            for group in events.iter().filter_map(|ev| ev.split('/').next()) {
                let _ = std::fs::remove_file(lock_path(&dir, group));
            }
        }
        let group = format!("{prefix}{}x{:08x}", std::process::id(), fastrand::u32(..));
        let lock = take_lock(&dir, &group);
        UprobeGroup {
            base,
            group,
            names: Vec::new(),
            lock,
        }
    }

    /// The tracefs mount the group lives in.
    pub fn base(&self) -> &'static str {
        self.base
    }

    /// Defines probe `name` at `offset` in `file` (`fetch`: fetch arguments, or empty) and
    /// returns its event's id and format.
    pub fn define(
        &mut self,
        fires: Fires,
        name: &str,
        (file, offset): (&Path, u64),
        fetch: &str,
    ) -> std::io::Result<EventFormat> {
        let kind = match fires {
            Fires::Entry => 'p',
            Fires::Return => 'r',
        };
        let line = format!(
            "{kind}:{}/{name} {}:{offset:#x}",
            self.group,
            file.display()
        );
        let line = if fetch.is_empty() {
            line
        } else {
            format!("{line} {fetch}")
        };
        append(self.base, &line)?;
        self.names.push(name.to_string());
        EventFormat::read(self.base, &self.group, name).map_err(std::io::Error::other)
    }
}

impl Drop for UprobeGroup {
    fn drop(&mut self) {
        for name in self.names.drain(..).rev() {
            let _ = append(self.base, &format!("-:{}/{name}", self.group));
        }
        if let Some((_, path)) = self.lock.take() {
            let _ = std::fs::remove_file(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_abandoned_groups_named_like_ours_are_stale() {
        let text = "p:sysmeter_lk100x1f/access /lib/libc.so.6:0xf8410 path=+0(%di):ustring\n\
                    p:sysmeter_lk200x2e/open /lib/libc.so.6:0x1 path=+0(%di):ustring\n\
                    r:sysmeter_12x3d/f0_ret /bin/x:0x0000000000001030\n\
                    p:sysmeter_12/old /bin/x:0x10\n\
                    p:other/x /bin/true:0x10\n";
        let gone = |group: &str| group != "sysmeter_lk200x2e";
        assert_eq!(
            stale(text, "sysmeter_lk", &gone),
            ["sysmeter_lk100x1f/access"]
        );
        // `sysmeter_lk…` is not named like a `sysmeter_` group; old pid-only names are left.
        assert_eq!(stale(text, "sysmeter_", &gone), ["sysmeter_12x3d/f0_ret"]);
        assert!(stale("", "sysmeter_", &gone).is_empty());
    }

    #[test]
    fn a_group_is_abandoned_only_when_its_lock_is_free() {
        let dir = tempfile::tempdir().expect("dir");
        let held = take_lock(dir.path(), "sysmeter_1x1").expect("lock");
        assert!(
            !abandoned(dir.path(), "sysmeter_1x1"),
            "a live owner holds it"
        );
        assert!(
            !abandoned(dir.path(), "sysmeter_2x2"),
            "no lock file: not ours to judge"
        );
        drop(held);
        assert!(abandoned(dir.path(), "sysmeter_1x1"), "the owner is gone");
    }
}
