//! Whether a session saw what happened, judged once for every mechanism: a session compares
//! what arrived through its kernel event with an independent count of the same target that
//! never passes through that event ([`Witness`]: the command's rusage context switches
//! against the `sched_switch` records, the in-process lock table's contended attempts against
//! the futex calls, the kernel's per-process read and write counts against the traced system
//! calls). When far fewer arrived than the independent count allows, the mechanism was
//! blinded ([`Blinded`]): a BPF program on that tracepoint that returns 0 makes the kernel drop
//! the tracepoint's perf samples for every perf event on the machine (docs/bpf.md). The
//! session then says so in its first finding (key `lost`, which every report shows right
//! under its title) and names the BPF programs attached to the tracepoint ([`holders`]),
//! and its diagnosis must not claim "no contention" or "exact" beside it.
//!
//! Depends on `model` and, through [`holders`], on `sysmeter_sys` and aya (the kernel's list
//! of BPF links, programs and perf descriptors).

pub mod holders;

use crate::model::{Finding, units};

/// Below this many independent counts nothing is judged: a short command, or events that
/// happened before the session's events were enabled, say nothing. (The off-CPU naps
/// fixture blocks 15 times: a higher floor left a blinded run of it unjudged.)
const MIN_COUNTED: u64 = 8;

/// What a session received through one kernel event, beside an independent count.
#[derive(Debug, Clone, PartialEq)]
pub struct Witness {
    /// The tracepoint the mechanism reads, as perf names it (`syscalls:sys_enter_futex`).
    pub event: &'static str,
    /// What arrived through it.
    pub seen: u64,
    /// What the session received, in words after the number ("futex calls").
    pub seen_what: &'static str,
    /// Records the rings reported lost (any kind: an upper bound of those of `seen`'s
    /// kind). A lost record was sent, so it speaks against blindness: the session lost
    /// records, which its `lost` finding says.
    pub lost: u64,
    /// The independent count.
    pub counted: u64,
    /// Who counted what, in words after the number ("contended lock attempts in the
    /// command's in-process table").
    pub counted_what: &'static str,
    /// Blinded when `seen × margin < counted`: how many independent counts one received
    /// record may stand for at most when nothing is hidden (≥ 2: a wide margin).
    pub margin: u64,
}

/// A mechanism that received far fewer records than the independent count allows.
#[derive(Debug, Clone, PartialEq)]
pub struct Blinded {
    /// The comparison that showed it.
    pub witness: Witness,
    /// The BPF programs attached to that tracepoint when it was judged.
    pub holders: Vec<holders::Holder>,
}

impl Witness {
    /// `Some` when the session was blinded: the independent count is large enough to judge
    /// and far above what arrived; the tracepoint's BPF programs are listed then.
    pub fn judge(self) -> Option<Blinded> {
        if !self.blinded() {
            return None;
        }
        let holders = holders::on_tracepoint(self.tracepoint());
        Some(Blinded {
            witness: self,
            holders,
        })
    }

    /// Whether the counts disagree beyond the margin (the pure half of [`Witness::judge`]).
    pub fn blinded(&self) -> bool {
        let sent = self.seen.saturating_add(self.lost);
        self.counted >= MIN_COUNTED && sent.saturating_mul(self.margin.max(2)) < self.counted
    }

    /// The tracepoint's own name (`sys_enter_futex`), as the kernel's BPF queries give it.
    fn tracepoint(&self) -> &str {
        self.event.rsplit(':').next().unwrap_or(self.event)
    }
}

impl Blinded {
    /// The share of the independent count that did not arrive, 0..1.
    pub fn share(&self) -> f64 {
        let w = &self.witness;
        (1.0 - w.seen as f64 / w.counted.max(1) as f64).clamp(0.0, 1.0)
    }

    /// The sentence: blinded, by the counts, by what, and `fix` (how to see anyway).
    pub fn text(&self, fix: &str) -> String {
        let w = &self.witness;
        format!(
            "Blinded: {} {} against {} {} received through {}: a BPF program on {} that \
             returns 0 hides that tracepoint from perf, for every perf reader on the \
             machine; {}. {fix}",
            units::count(w.counted as f64),
            w.counted_what,
            units::count(w.seen as f64),
            w.seen_what,
            w.event,
            w.event,
            holders::sentence(&self.holders)
        )
    }

    /// The first finding of a blinded session (key `lost`, shown under the title; its
    /// value the share unseen).
    pub fn finding(&self, fix: &str) -> Finding {
        Finding::new("lost", self.text(fix), Some(self.share()))
    }
}

/// The first finding of a session that `blinded` judged, ahead of `findings`, with every
/// finding that would read an empty recording as a fact (`quiet`: keys such as
/// `no_contention`) taken out: a blinded source proves nothing.
pub fn lead(
    blinded: Option<&Blinded>,
    fix: &str,
    findings: Vec<Finding>,
    quiet: &[&str],
) -> Vec<Finding> {
    let Some(b) = blinded else {
        return findings;
    };
    std::iter::once(b.finding(fix))
        .chain(
            findings
                .into_iter()
                .filter(|f| !quiet.contains(&f.key.as_str())),
        )
        .collect()
}

/// The kernel's own count of a process's read and write system calls (`syscr` and `syscw`
/// of `/proc/PID/io`, kept for the whole thread group, exited threads included), sampled
/// while a session runs: an independent witness of a system-call tracer. Each read-family
/// call (read, readv, pread64, …) adds at most one to `syscr`, each write-family call at most
/// one to `syscw` (sendfile and copy_file_range one to each), so a tracer that saw every call
/// counted at least the larger of the two increments. The last sample before the process
/// is reaped is a lower bound of its final count.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IoCalls {
    first: Option<(u64, u64)>,
    last: Option<(u64, u64)>,
}

impl IoCalls {
    /// Reads `/proc/pid/io` now (the first sample is the baseline); a process that is gone
    /// or unreadable leaves the samples as they were.
    pub fn sample(&mut self, pid: i32) {
        let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/io")) else {
            return;
        };
        let field = |name: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.trim().parse::<u64>().ok())
        };
        if let (Some(r), Some(w)) = (field("syscr:"), field("syscw:")) {
            self.first.get_or_insert((r, w));
            self.last = Some((r, w));
        }
    }

    /// The larger of the read and write calls counted between the first and last samples.
    pub fn counted(&self) -> Option<u64> {
        let ((r0, w0), (r1, w1)) = (self.first?, self.last?);
        Some(r1.saturating_sub(r0).max(w1.saturating_sub(w0)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn futex(seen: u64, counted: u64) -> Witness {
        Witness {
            event: "syscalls:sys_enter_futex",
            seen,
            seen_what: "futex calls",
            lost: 0,
            counted,
            counted_what: "contended lock attempts",
            margin: 4,
        }
    }

    #[test]
    fn io_calls_count_from_the_first_sample_of_this_process() {
        let mut io = IoCalls::default();
        assert_eq!(io.counted(), None);
        let me = std::process::id() as i32;
        io.sample(me);
        for _ in 0..20 {
            let _ = std::fs::read("/proc/self/stat");
        }
        io.sample(me);
        assert!(io.counted().is_some_and(|n| n >= 20), "{io:?}");
    }

    #[test]
    fn far_fewer_records_than_the_independent_count_is_blindness() {
        assert!(futex(0, 49).blinded());
        assert!(futex(10, 49).blinded());
        assert!(!futex(13, 49).blinded(), "within the margin");
        assert!(!futex(0, 7).blinded(), "too few to judge");
        assert!(futex(0, 8).blinded());
        assert!(!futex(90, 49).blinded());
        let lost_from_the_rings = Witness {
            lost: 40,
            ..futex(0, 49)
        };
        assert!(
            !lost_from_the_rings.blinded(),
            "records lost were sent, not hidden"
        );
    }

    #[test]
    fn a_blinded_session_leads_with_it_and_drops_what_an_empty_source_would_claim() {
        let b = Blinded {
            witness: futex(0, 49),
            holders: Vec::new(),
        };
        assert_eq!(b.share(), 1.0);
        let said = vec![
            Finding::new("no_contention", "No lock was contended".into(), Some(0.0)),
            Finding::new("observed", "Observed 0 futex calls".into(), Some(0.0)),
        ];
        let out = lead(
            Some(&b),
            "Use `--backend bpf`.",
            said.clone(),
            &["no_contention"],
        );
        assert_eq!(out[0].key, "lost");
        assert!(
            out[0]
                .text
                .starts_with("Blinded: 49 contended lock attempts against 0")
        );
        assert!(out[0].text.contains("hides that tracepoint from perf"));
        assert!(out.iter().all(|f| f.key != "no_contention"));
        assert_eq!(out.len(), 2);
        assert_eq!(lead(None, "", said.clone(), &["no_contention"]), said);
    }
}
