//! The programs a process of an in-process run exec'd that the preload library cannot enter
//! (a static program, a setuid or setgid one, an exec after the process dropped its privileges
//! and closed what reaches the run), as the library noted them before the exec in
//! the header page of the run's region (crates/sysmeter-sys/preload/exec_notes.h: keep both
//! in step). `calls` and `alloc` name them in their `lost` finding, the line under the
//! title: a child counted as nothing is never silent.
//!
//! Depends on `model` (the finding) and the siblings `bytes`, `error` and `inject`.

use std::fs::File;

use super::bytes::{text_at, u32_at};
use super::error::ObserveError;
use super::inject::read_at;
use crate::model::Finding;

/// Where the notes start in the region (`SM_NOTES_AT`), how many fit, bytes per note and of
/// its path.
const AT: usize = 3200;
const NOTES: usize = 13;
const NOTE: usize = 64;
const PATH: usize = 56;

/// Why a program could not be entered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// No dynamic linker to load the library.
    Static,
    /// Setuid or setgid: the dynamic linker ignores LD_PRELOAD.
    Setuid,
    /// The process dropped its privileges and closed the descriptors that would have
    /// reached the run's library and region (`/proc/<sysmeter's pid>/fd/N` needs them).
    Unreachable,
}

/// One program not entered: the process that exec'd it and its path as given to exec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    /// The process.
    pub pid: u32,
    /// The path it exec'd.
    pub path: String,
    /// Why the library could not enter it.
    pub why: Why,
}

/// The programs not entered, and how many more did not fit in the notes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NotEntered {
    /// Each one noted.
    pub programs: Vec<Program>,
    /// Those beyond the notes' room.
    pub more: u32,
}

/// The notes of the region `shm`, of the processes `counted` keeps (the launched one alone
/// without `-f`).
pub fn read(shm: &File, counted: impl Fn(u32) -> bool) -> Result<NotEntered, ObserveError> {
    let b = read_at(shm, AT as u64, 8 + NOTES * NOTE)?;
    Ok(parse(&b, counted))
}

fn parse(b: &[u8], counted: impl Fn(u32) -> bool) -> NotEntered {
    let taken = (u32_at(b, 0) as usize).min(NOTES);
    let programs = (0..taken)
        .map(|i| 8 + i * NOTE)
        .filter(|&at| u32_at(b, at) != 0 && counted(u32_at(b, at)))
        .filter_map(|at| {
            let why = match u32_at(b, at + 4) {
                1 => Why::Static,
                2 => Why::Setuid,
                3 => Why::Unreachable,
                _ => return None,
            };
            let path = text_at(b, at + 8, PATH);
            Some(Program {
                pid: u32_at(b, at),
                path,
                why,
            })
        })
        .collect();
    NotEntered {
        programs,
        more: u32_at(b, 4),
    }
}

impl NotEntered {
    /// How many programs were not entered.
    pub fn count(&self) -> u64 {
        self.programs.len() as u64 + u64::from(self.more)
    }

    /// The phrase naming them, e.g. "2 exec'd programs could not be entered by the
    /// in-process library: ./static (pid 10, statically linked), ./setuid (pid 11, setuid or
    /// setgid: …)"; `None` when there is none.
    pub fn phrase(&self) -> Option<String> {
        let n = self.count();
        if n == 0 {
            return None;
        }
        let mut each: Vec<String> = self
            .programs
            .iter()
            .map(|p| {
                let why = match p.why {
                    Why::Static => "statically linked",
                    Why::Setuid => "setuid or setgid: the dynamic linker ignores LD_PRELOAD",
                    Why::Unreachable => {
                        "exec'd after dropping privileges and closing the descriptors that \
                         reach the run"
                    }
                };
                format!("{} (pid {}, {why})", p.path, p.pid)
            })
            .collect();
        if self.more > 0 {
            each.push(format!("{} more", self.more));
        }
        let what = if n == 1 { "program" } else { "programs" };
        Some(format!(
            "{n} exec'd {what} could not be entered by the in-process library and {} not \
             counted: {}",
            if n == 1 { "was" } else { "were" },
            each.join(", ")
        ))
    }

    /// Puts the phrase first among `findings`: into the `lost` finding (the line a report
    /// prints under its title), made first when there was none.
    pub fn into_findings(&self, findings: &mut Vec<Finding>) {
        let Some(phrase) = self.phrase() else {
            return;
        };
        let advice = "run such a program directly to count it through uprobes";
        match findings.iter_mut().find(|f| f.key == "lost") {
            Some(f) => {
                f.text = format!("{phrase} ({advice}). {}", f.text);
                f.value = Some(f.value.unwrap_or(0.0) + self.count() as f64);
            }
            None => {
                let text = format!("Incomplete: {phrase} ({advice}).");
                findings.insert(0, Finding::new("lost", text, Some(self.count() as f64)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note(b: &mut [u8], i: usize, pid: u32, why: u32, path: &str) {
        let at = 8 + i * NOTE;
        b[at..at + 4].copy_from_slice(&pid.to_le_bytes());
        b[at + 4..at + 8].copy_from_slice(&why.to_le_bytes());
        b[at + 8..at + 8 + path.len()].copy_from_slice(path.as_bytes());
    }

    #[test]
    fn notes_are_read_for_the_counted_processes_and_said_in_one_sentence() {
        let mut b = vec![0u8; 8 + NOTES * NOTE];
        b[0] = 3;
        note(&mut b, 0, 10, 1, "./static");
        note(&mut b, 1, 11, 2, "./setuid");
        note(&mut b, 2, 99, 1, "./elsewhere");
        note(&mut b, 3, 12, 3, "./dropped");
        b[0] = 4;
        let got = parse(&b, |pid| pid != 99);
        assert_eq!(got.programs.len(), 3);
        assert_eq!(got.programs[2].why, Why::Unreachable);
        assert_eq!(got.programs[0].why, Why::Static);
        let mut findings = vec![Finding::new("total", "x".into(), None)];
        got.into_findings(&mut findings);
        let s = &findings[0].text;
        assert_eq!(findings[0].key, "lost");
        assert!(s.contains("3 exec'd programs"), "{s}");
        assert!(
            s.contains("./dropped (pid 12, exec'd after dropping"),
            "{s}"
        );
        assert!(s.contains("./static (pid 10, statically linked)"), "{s}");
        assert!(s.contains("./setuid (pid 11, setuid"), "{s}");
        assert_eq!(findings[0].value, Some(3.0));
        assert_eq!(parse(&vec![0u8; b.len()], |_| true).phrase(), None);
    }
}
