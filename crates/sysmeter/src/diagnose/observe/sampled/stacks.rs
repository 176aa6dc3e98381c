//! Symbolised call stacks and what is computed from them alone: the flat profile (self and
//! total samples per function, like gprof's), caller→callee edge counts, folded stacks for
//! flame graphs, and the accounting of stacks that stop before the program's entry point.
//!
//! Counting rules (the usual ones for sampling profiles): a sample counts as *self* for its
//! leaf function and as *total* once for every distinct function on its stack (recursion
//! does not count twice); an edge caller→callee counts once per sample whose stack holds
//! that adjacent pair. Pure: no I/O.

use std::collections::{HashMap, HashSet};

/// One function (or an unnamed place) in a stack.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Frame {
    /// Function name, or `[unknown in MODULE]` / `[unknown]` / a label like `[vdso]`.
    pub name: String,
    /// Short module name (`libc.so.6`, `[kernel]`), empty when unknown.
    pub module: String,
    /// A kernel function.
    pub kernel: bool,
    /// Whether a symbol was found.
    pub known: bool,
}

impl Frame {
    /// The name as folded stacks and flame graphs show it: kernel functions get the `_[k]`
    /// suffix that FlameGraph's palettes colour as kernel; `;` (the separator) is replaced.
    pub fn folded_name(&self) -> String {
        let name = self.name.replace(';', ":");
        if self.kernel {
            format!("{name}_[k]")
        } else {
            name
        }
    }
}

/// One row of the flat profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlatRow {
    /// Frame index.
    pub frame: u32,
    /// Samples whose leaf is this function.
    pub self_samples: u64,
    /// Samples with this function anywhere on the stack.
    pub total_samples: u64,
}

/// How many stacks end before an entry point, and where.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Truncation {
    /// Samples with at least one user frame.
    pub user_samples: u64,
    /// Of those, samples whose outermost frame is not an entry point (`_start`, libc's
    /// start code, a thread start).
    pub truncated: u64,
    /// Of the truncated ones, samples with a single user frame.
    pub depth_one: u64,
    /// Truncated samples by their outermost frame, most first.
    pub by_outermost: Vec<(u32, u64)>,
}

/// Functions a complete user stack starts with: process and thread entry points.
const ENTRY_POINTS: [&str; 10] = [
    "_start",
    "__libc_start_main",
    "__libc_start_main_impl",
    "__libc_start_call_main",
    "start_thread",
    "clone",
    "clone3",
    "__clone",
    "__clone3",
    "_dl_start_user",
];

/// How many outermost user frames may hold the entry point of a complete stack.
const ENTRY_DEPTH: usize = 3;

/// Whether a frame is where a complete stack begins.
pub fn is_entry_point(frame: &Frame) -> bool {
    !frame.kernel && ENTRY_POINTS.contains(&frame.name.as_str())
}

/// Interned frames and sample counts per distinct stack (outermost frame first).
#[derive(Debug, Clone, Default)]
pub struct Stacks {
    frames: Vec<Frame>,
    index: HashMap<Frame, u32>,
    counts: HashMap<Vec<u32>, u64>,
}

impl Stacks {
    /// The id of `frame`, adding it if new.
    pub fn intern(&mut self, frame: Frame) -> u32 {
        if let Some(&i) = self.index.get(&frame) {
            return i;
        }
        let i = self.frames.len() as u32;
        self.frames.push(frame.clone());
        self.index.insert(frame, i);
        i
    }

    /// Adds `count` samples of `stack` (frame ids, outermost first). Empty stacks are
    /// ignored.
    pub fn add(&mut self, stack: Vec<u32>, count: u64) {
        if !stack.is_empty() && count > 0 {
            *self.counts.entry(stack).or_default() += count;
        }
    }

    /// All frames, indexed by id.
    pub fn frames(&self) -> &[Frame] {
        &self.frames
    }

    /// The frame with id `id`.
    pub fn frame(&self, id: u32) -> &Frame {
        &self.frames[id as usize]
    }

    /// Distinct stacks with their counts, in no order (a live view merges them each second).
    pub fn counts(&self) -> impl Iterator<Item = (&[u32], u64)> {
        self.counts.iter().map(|(s, &c)| (s.as_slice(), c))
    }

    /// Samples in all stacks.
    pub fn total(&self) -> u64 {
        self.counts.values().sum()
    }

    /// Distinct stacks with their counts, in a stable order (by the frames' names).
    pub fn sorted(&self) -> Vec<(&[u32], u64)> {
        let mut list: Vec<(&[u32], u64)> = self
            .counts
            .iter()
            .map(|(s, &c)| (s.as_slice(), c))
            .collect();
        list.sort_by(|a, b| {
            let names = |s: &[u32]| s.iter().map(|&f| &self.frame(f).name).collect::<Vec<_>>();
            names(a.0).cmp(&names(b.0)).then(a.0.cmp(b.0))
        });
        list
    }

    /// The flat profile: functions by self samples (then total, then name), functions that
    /// only appear as callers last.
    pub fn flat(&self) -> Vec<FlatRow> {
        let mut own: HashMap<u32, u64> = HashMap::new();
        let mut total: HashMap<u32, u64> = HashMap::new();
        for (stack, &count) in &self.counts {
            if let Some(&leaf) = stack.last() {
                *own.entry(leaf).or_default() += count;
            }
            let distinct: HashSet<u32> = stack.iter().copied().collect();
            for f in distinct {
                *total.entry(f).or_default() += count;
            }
        }
        let mut rows: Vec<FlatRow> = total
            .into_iter()
            .map(|(frame, total_samples)| FlatRow {
                frame,
                self_samples: own.get(&frame).copied().unwrap_or(0),
                total_samples,
            })
            .collect();
        rows.sort_by(|a, b| {
            b.self_samples
                .cmp(&a.self_samples)
                .then(b.total_samples.cmp(&a.total_samples))
                .then_with(|| self.frame(a.frame).cmp(self.frame(b.frame)))
        });
        rows
    }

    /// Samples per caller→callee pair (each pair once per sample).
    pub fn edges(&self) -> HashMap<(u32, u32), u64> {
        let mut edges: HashMap<(u32, u32), u64> = HashMap::new();
        for (stack, &count) in &self.counts {
            let distinct: HashSet<(u32, u32)> = stack.windows(2).map(|w| (w[0], w[1])).collect();
            for e in distinct {
                *edges.entry(e).or_default() += count;
            }
        }
        edges
    }

    /// Folded stacks, one `outer;…;leaf COUNT` line per distinct stack, sorted.
    pub fn folded(&self) -> String {
        let mut lines: Vec<String> = self
            .counts
            .iter()
            .map(|(stack, count)| {
                let names: Vec<String> =
                    stack.iter().map(|&f| self.frame(f).folded_name()).collect();
                format!("{} {count}", names.join(";"))
            })
            .collect();
        lines.sort();
        let mut out = lines.join("\n");
        if !out.is_empty() {
            out.push('\n');
        }
        out
    }

    /// Samples whose leaf is a kernel function and whose kernel part holds a frame for which
    /// `pred` is true.
    pub fn kernel_samples_through(&self, pred: impl Fn(&Frame) -> bool) -> u64 {
        self.counts
            .iter()
            .filter(|(stack, _)| {
                stack.last().is_some_and(|&leaf| self.frame(leaf).kernel)
                    && stack.iter().any(|&f| {
                        let frame = self.frame(f);
                        frame.kernel && pred(frame)
                    })
            })
            .map(|(_, &count)| count)
            .sum()
    }

    /// Which stacks stop before an entry point (frame pointers missing somewhere below).
    pub fn truncation(&self) -> Truncation {
        let mut t = Truncation::default();
        let mut by: HashMap<u32, u64> = HashMap::new();
        for (stack, &count) in &self.counts {
            let user: Vec<u32> = stack
                .iter()
                .copied()
                .filter(|&f| !self.frame(f).kernel)
                .collect();
            let Some(&outermost) = user.first() else {
                continue;
            };
            t.user_samples += count;
            // The outermost frames rather than the outermost one: a stripped program's
            // `_start` has no name, but libc's start code (or `start_thread`, under a
            // nameless `clone3`) is right above it.
            let near_entry = user.iter().take(ENTRY_DEPTH);
            if near_entry.copied().any(|f| is_entry_point(self.frame(f))) {
                continue;
            }
            t.truncated += count;
            if user.len() == 1 {
                t.depth_one += count;
            }
            *by.entry(outermost).or_default() += count;
        }
        t.by_outermost = by.into_iter().collect();
        t.by_outermost.sort_by(|a, b| {
            b.1.cmp(&a.1)
                .then_with(|| self.frame(a.0).cmp(self.frame(b.0)))
        });
        t
    }
}

/// Frames and stacks made from names, for the tests of this module and of the diagnoses that
/// build on it.
#[cfg(test)]
pub(crate) mod fixture {
    use super::*;

    /// A known user frame of `prog` named `name`.
    pub fn frame(name: &str) -> Frame {
        Frame {
            name: name.into(),
            module: "prog".into(),
            kernel: false,
            known: true,
        }
    }

    /// Stacks of `list` (names, outermost first, and a count), interned in the order given.
    pub fn stacks(list: &[(&[&str], u64)]) -> Stacks {
        let mut s = Stacks::default();
        for (names, count) in list {
            let ids = names.iter().map(|n| s.intern(frame(n))).collect();
            s.add(ids, *count);
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::fixture::{frame, stacks};
    use super::*;

    fn by_name(s: &Stacks) -> HashMap<String, (u64, u64)> {
        s.flat()
            .into_iter()
            .map(|r| {
                (
                    s.frame(r.frame).name.clone(),
                    (r.self_samples, r.total_samples),
                )
            })
            .collect()
    }

    #[test]
    fn flat_profile_counts_self_at_the_leaf_and_total_once_per_sample() {
        let s = stacks(&[
            (&["_start", "main", "a"], 70),
            (&["_start", "main", "b"], 30),
            (&["_start", "main", "f", "f", "f"], 10),
        ]);
        let flat = by_name(&s);
        assert_eq!(flat["a"], (70, 70));
        assert_eq!(flat["b"], (30, 30));
        assert_eq!(flat["main"], (0, 110));
        assert_eq!(flat["f"], (10, 10), "recursion counts once");
        assert_eq!(s.frame(s.flat()[0].frame).name, "a");
        assert_eq!(s.total(), 110);
    }

    #[test]
    fn edges_count_each_pair_once_per_sample() {
        let s = stacks(&[(&["main", "f", "f", "f"], 5), (&["main", "g"], 2)]);
        let e = s.edges();
        let id = |n: &str| s.frames().iter().position(|f| f.name == n).expect("frame") as u32;
        assert_eq!(e[&(id("main"), id("f"))], 5);
        assert_eq!(e[&(id("f"), id("f"))], 5);
        assert_eq!(e[&(id("main"), id("g"))], 2);
    }

    #[test]
    fn folded_lines_are_sorted_and_mark_kernel_frames() {
        let mut s = stacks(&[(&["main", "b"], 3), (&["main", "a"], 7)]);
        let main = s.intern(frame("main"));
        let k = s.intern(Frame {
            name: "do_syscall_64".into(),
            module: "[kernel]".into(),
            kernel: true,
            known: true,
        });
        s.add(vec![main, k], 2);
        assert_eq!(s.folded(), "main;a 7\nmain;b 3\nmain;do_syscall_64_[k] 2\n");
    }

    #[test]
    fn kernel_samples_through_a_frame() {
        let mut s = stacks(&[(&["main", "a"], 10)]);
        let k = |s: &mut Stacks, n: &str| {
            s.intern(Frame {
                name: n.into(),
                module: "[kernel]".into(),
                kernel: true,
                known: true,
            })
        };
        let (main, a) = (s.intern(frame("main")), s.intern(frame("a")));
        let (ipi, exit, sys) = (
            k(&mut s, "asm_sysvec_reschedule_ipi"),
            k(&mut s, "irqentry_exit_to_user_mode"),
            k(&mut s, "do_syscall_64"),
        );
        s.add(vec![main, a, ipi, exit], 3);
        s.add(vec![main, a, sys], 2);
        assert_eq!(
            s.kernel_samples_through(|f| f.name.contains("reschedule")),
            3
        );
        assert_eq!(s.kernel_samples_through(|f| f.name == "main"), 0);
    }

    #[test]
    fn stacks_without_an_entry_point_are_truncated() {
        let s = stacks(&[
            (&["__libc_start_call_main", "main", "a"], 90),
            (&["memcpy"], 6),
            (&["helper", "leaf"], 4),
        ]);
        let t = s.truncation();
        assert_eq!(t.user_samples, 100);
        assert_eq!(t.truncated, 10);
        assert_eq!(t.depth_one, 6);
        assert_eq!(s.frame(t.by_outermost[0].0).name, "memcpy");
        assert_eq!(t.by_outermost[0].1, 6);
    }
}
