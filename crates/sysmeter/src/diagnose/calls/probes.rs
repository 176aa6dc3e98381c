//! Uprobe definitions in tracefs, owned RAII: [`Probes::define`] writes
//! `p:GROUP/fN PATH:0xOFF` and `r:GROUP/fN_ret PATH:0xOFF` lines into `uprobe_events` (group
//! `sysmeter_<our pid>`, so concurrent sysmeters never clash), and dropping [`Probes`]
//! removes each with `-:GROUP/NAME` — after the perf events on them are closed, which the
//! caller guarantees by dropping its rings first. Groups left by a sysmeter that died
//! (whose pid no longer exists) are removed at start-up ([`clean_stale`]).
//!
//! Why tracefs definitions and not the `uprobe` PMU: with `inherit`, the PMU makes the kernel
//! re-read the path pointer in the *target's* memory at each clone, which then fails
//! (DEPENDENCIES.md §5b). File writes only; depends on nothing else in sysmeter.

use std::io::Write;
use std::path::{Path, PathBuf};

/// Prefix of our groups.
const PREFIX: &str = "sysmeter_";

/// The tracefs directory holding `uprobe_events`, if any.
pub fn tracefs() -> Option<PathBuf> {
    crate::diagnose::tracefs::holding("uprobe_events").map(PathBuf::from)
}

fn append(base: &Path, line: &str) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(base.join("uprobe_events"))?;
    f.write_all(format!("{line}\n").as_bytes())
}

/// The `GROUP/NAME` of every definition line in `uprobe_events` text.
pub fn parse_events(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| {
            l.split_whitespace()
                .next()?
                .split_once(':')
                .map(|(_, n)| n.to_string())
        })
        .collect()
}

/// Removes the probes of `sysmeter_<pid>` groups whose pid is gone; returns how many.
pub fn clean_stale(base: &Path) -> usize {
    let text = std::fs::read_to_string(base.join("uprobe_events")).unwrap_or_default();
    parse_events(&text)
        .into_iter()
        .filter(|name| {
            name.strip_prefix(PREFIX)
                .and_then(|rest| rest.split('/').next()?.parse::<u32>().ok())
                .is_some_and(|pid| !Path::new(&format!("/proc/{pid}")).exists())
        })
        .filter(|name| append(base, &format!("-:{name}")).is_ok())
        .count()
}

/// One probed function: its entry and return events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Defined {
    /// Tracepoint id of the entry probe.
    pub entry_id: u64,
    /// Tracepoint id of the return probe.
    pub return_id: u64,
}

/// Our probe definitions; removed on drop.
#[derive(Debug)]
pub struct Probes {
    base: PathBuf,
    group: String,
    names: Vec<String>,
}

impl Probes {
    /// An empty set in the group of this process.
    pub fn new(base: PathBuf) -> Probes {
        Probes {
            base,
            group: format!("{PREFIX}{}", std::process::id()),
            names: Vec::new(),
        }
    }

    fn id(&self, name: &str) -> std::io::Result<u64> {
        let path = self
            .base
            .join("events")
            .join(&self.group)
            .join(name)
            .join("id");
        std::fs::read_to_string(&path)?
            .trim()
            .parse()
            .map_err(|_| std::io::Error::other(format!("{} holds no number", path.display())))
    }

    /// Defines entry and return probes named `name` on `path` at file offset `offset`.
    pub fn define(&mut self, name: &str, path: &Path, offset: u64) -> std::io::Result<Defined> {
        let target = format!("{}:{offset:#x}", path.display());
        let ret = format!("{name}_ret");
        append(&self.base, &format!("r:{}/{ret} {target}", self.group))?;
        self.names.push(ret.clone());
        append(&self.base, &format!("p:{}/{name} {target}", self.group))?;
        self.names.push(name.to_string());
        Ok(Defined {
            entry_id: self.id(name)?,
            return_id: self.id(&ret)?,
        })
    }
}

impl Drop for Probes {
    fn drop(&mut self) {
        for name in self.names.drain(..) {
            let _ = append(&self.base, &format!("-:{}/{name}", self.group));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parse_events;

    #[test]
    fn definition_lines_give_group_and_name() {
        let text = "p:sysmeter_12/f0 /bin/x:0x0000000000001030\n\
                    r:sysmeter_12/f0_ret /bin/x:0x0000000000001030\n";
        assert_eq!(parse_events(text), ["sysmeter_12/f0", "sysmeter_12/f0_ret"]);
        assert!(parse_events("").is_empty());
    }
}
