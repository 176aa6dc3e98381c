//! Why each unwound walk stopped, and the tally a diagnosis reports: at the outermost
//! frame, at the end of the stack copy (a bigger copy would have gone on), in JIT code or
//! anonymous memory, in code without CFI, or where the tables led astray — the reasons the
//! truncated-stack findings name. Pure.

use crate::model::{Finding, units};

/// Why a walk stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stop {
    /// The tables (or a zero frame pointer) say the last frame is the outermost one.
    End,
    /// The next frame lies beyond the copied stack: a bigger copy would have gone on.
    CopyEnded,
    /// At code outside any mapped file (JIT code, anonymous memory), whose frame pointer
    /// led nowhere.
    Anonymous,
    /// At code of a file with no CFI for it, whose frame pointer led nowhere.
    NoCfi,
    /// The tables led to an address that is not a frame of this stack.
    Lost,
    /// [`MAX_FRAMES`](super::MAX_FRAMES) frames deep.
    Deep,
}

/// How the walks of a session ended, in samples, and what they cost this process.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stops {
    /// Walks that reached the outermost frame.
    pub end: u64,
    /// Walks cut by the end of the stack copy.
    pub copy_ended: u64,
    /// Walks stopped in JIT code or anonymous memory.
    pub anonymous: u64,
    /// Walks stopped in code without CFI.
    pub no_cfi: u64,
    /// Walks the tables led astray, or cut at [`MAX_FRAMES`](super::MAX_FRAMES).
    pub lost: u64,
    /// Time spent unwinding, ns (this process's, not the target's).
    pub unwind_ns: u64,
    /// Bytes of stack copied per sample (asked of the kernel).
    pub copy_bytes: u32,
    /// The most bytes above the stack pointer one walk read (what a copy must hold).
    pub deepest: u64,
}

impl Stops {
    /// Counts one walk that ended with `stop`.
    pub fn add(&mut self, stop: Stop) {
        let n = match stop {
            Stop::End => &mut self.end,
            Stop::CopyEnded => &mut self.copy_ended,
            Stop::Anonymous => &mut self.anonymous,
            Stop::NoCfi => &mut self.no_cfi,
            Stop::Lost | Stop::Deep => &mut self.lost,
        };
        *n += 1;
    }

    /// Walks in all.
    pub fn total(&self) -> u64 {
        self.end + self.copy_ended + self.anonymous + self.no_cfi + self.lost
    }

    /// Mean time one walk took, ns.
    pub fn ns_per_walk(&self) -> Option<f64> {
        let n = self.total();
        (n > 0).then(|| self.unwind_ns as f64 / n as f64)
    }

    /// A `truncated_stacks` finding when some walks stopped before an outermost frame
    /// (`what` names the stacks: `futex`, `switch-out`); none when every walk ended there.
    pub fn finding(&self, what: &str) -> Option<Finding> {
        let (total, early) = (self.total(), self.total() - self.end);
        (early > 0).then(|| {
            Finding::new(
                "truncated_stacks",
                format!(
                    "{early} of {total} {what} stacks were not unwound to an outermost frame. {}",
                    self.explain()
                ),
                Some(early as f64 / total as f64),
            )
        })
    }

    /// What stopped the walks that did not reach the outermost frame, in a sentence.
    pub fn explain(&self) -> String {
        if self.total() == 0 {
            return "No stack was copied, so only frame pointers were followed: code below \
                    those frames has none; rebuild with -fno-omit-frame-pointer (C/C++) or -C \
                    force-frame-pointers=yes (Rust)."
                .into();
        }
        let copy = units::bytes(f64::from(self.copy_bytes));
        let parts: Vec<String> = [
            (
                self.copy_ended,
                format!("the stack copy ended (it needed more than {copy})"),
            ),
            (
                self.anonymous,
                "JIT code or anonymous memory was reached (no file, no table)".into(),
            ),
            (
                self.no_cfi,
                "code without CFI was reached and its frame pointer led nowhere".into(),
            ),
            (
                self.lost,
                "the unwind tables led to no further frame".into(),
            ),
        ]
        .into_iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, why)| format!("{n} where {why}"))
        .collect();
        match parts.is_empty() {
            true => "Every walk reached what the unwind tables call the outermost frame, which \
                     is not a known entry point."
                .into(),
            false => format!(
                "The stacks were unwound with DWARF CFI ({copy} copied per sample); walks that \
                 did not end at an outermost frame of the tables (some of them still at an \
                 entry point without CFI, such as a program's own _start): {}.",
                parts.join(", ")
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_explanation_names_only_the_reasons_seen() {
        let none = Stops::default();
        assert!(none.explain().contains("only frame pointers"));
        let mut s = Stops {
            copy_bytes: 16 << 10,
            ..Stops::default()
        };
        s.add(Stop::End);
        assert!(s.explain().contains("outermost frame"), "{}", s.explain());
        s.add(Stop::CopyEnded);
        s.add(Stop::NoCfi);
        s.add(Stop::Deep);
        let text = s.explain();
        assert!(
            text.contains("1 where the stack copy ended (it needed more than 16 KiB)"),
            "{text}"
        );
        assert!(
            text.contains("1 where code without CFI") && !text.contains("JIT"),
            "{text}"
        );
        assert_eq!((s.total(), s.lost), (4, 1));
        let f = s.finding("futex").expect("a finding");
        assert_eq!(f.value, Some(0.75));
        assert!(f.text.starts_with("3 of 4 futex stacks"), "{}", f.text);
        assert!(Stops::default().finding("futex").is_none());
    }
}
