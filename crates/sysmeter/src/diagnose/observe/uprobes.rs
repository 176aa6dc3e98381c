//! Uprobe definitions in tracefs, owned RAII: a [`UprobeGroup`] writes `p:GROUP/NAME
//! FILE:0xOFFSET [fetch args]` (entry) and `r:…` (return) lines into `uprobe_events`, under a
//! group unique to this process (`PREFIX<pid>`, so concurrent sysmeters never clash), and
//! dropping it removes each definition with `-:GROUP/NAME` — after the perf events on them
//! are closed, which the owner guarantees by dropping its rings first. Groups of the same
//! prefix left by a sysmeter that died (whose pid no longer exists) are removed when a
//! group is made. `calls` (entry and return probes on the functions it counts) and the path
//! probes of `trace`/`run` (entry probes that copy a path argument) both define theirs here.
//!
//! Why tracefs definitions and not the `uprobe` PMU: with `inherit`, the PMU makes the kernel
//! re-read the path string pointer in the *target's* memory at each clone, which then fails
//! (docs/kernel-traps.md). Each definition costs about 70 ms when its last event is closed
//! (the kernel unregisters it and waits for an RCU grace period), so callers keep their lists
//! short. File writes only; depends on [`super::tracefs`].

use std::io::Write;
use std::path::Path;

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
}

fn append(base: &str, line: &str) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(format!("{base}/uprobe_events"))?;
    f.write_all(format!("{line}\n").as_bytes())
}

/// The `GROUP/NAME` of the definitions in `uprobe_events` text whose group is `prefix`
/// followed by the pid of a process that is not `alive`. Pure apart from `alive`.
pub fn stale(text: &str, prefix: &str, alive: &dyn Fn(u32) -> bool) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.split_whitespace().next()?.split_once(':').map(|x| x.1))
        .filter(|ev| {
            ev.strip_prefix(prefix)
                .and_then(|rest| rest.split('/').next()?.parse::<u32>().ok())
                .is_some_and(|pid| !alive(pid))
        })
        .map(str::to_string)
        .collect()
}

/// The tracefs mount that holds `uprobe_events`, if any.
pub fn tracefs_base() -> Option<&'static str> {
    tracefs::holding("uprobe_events")
}

impl UprobeGroup {
    /// The group `PREFIX<our pid>` in the tracefs mount `base` (see [`tracefs_base`]), after
    /// removing the groups of `prefix` whose sysmeter died.
    pub fn new(base: &'static str, prefix: &str) -> UprobeGroup {
        if let Ok(text) = std::fs::read_to_string(format!("{base}/uprobe_events")) {
            let alive = |pid: u32| Path::new(&format!("/proc/{pid}")).exists();
            for ev in stale(&text, prefix, &alive) {
                let _ = append(base, &format!("-:{ev}"));
            }
        }
        UprobeGroup {
            base,
            group: format!("{prefix}{}", std::process::id()),
            names: Vec::new(),
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
    }
}

#[cfg(test)]
mod tests {
    use super::stale;

    #[test]
    fn only_groups_of_dead_sysmeters_with_our_prefix_are_stale() {
        let text = "p:sysmeter_lk100/access /lib/libc.so.6:0xf8410 path=+0(%di):ustring\n\
                    p:sysmeter_lk200/open /lib/libc.so.6:0x1 path=+0(%di):ustring\n\
                    r:sysmeter_12/f0_ret /bin/x:0x0000000000001030\n\
                    p:other/x /bin/true:0x10\n";
        let alive = |pid: u32| pid == 200;
        assert_eq!(
            stale(text, "sysmeter_lk", &alive),
            ["sysmeter_lk100/access"]
        );
        assert_eq!(stale(text, "sysmeter_", &alive), ["sysmeter_12/f0_ret"]);
        assert!(stale("", "sysmeter_", &alive).is_empty());
    }
}
