//! The per-thread stacks of a sampled profile (`model::thread_stacks`): each sample's
//! thread and symbolised stack, every user frame placed on its source file and line (the
//! DWARF line tables, read through the floor's one line symbolizer, `symbolize`), summed per
//! thread, stack and (off-CPU) reason. What the exports need to show threads apart and
//! `file:line` per frame, which the folded stacks (summed over threads, one row per
//! function) do not keep.

use std::collections::{HashMap, HashSet};

use super::aggregate::{Analysis, EachSample};
use crate::diagnose::observe::maps::Location;
use crate::diagnose::observe::preloaded;
use crate::diagnose::observe::records::RawData;
use crate::diagnose::observe::symbolize::{line_symbolizer, read_lines};
use crate::model::thread_stacks::{SourceFrame, Thread, ThreadStack, ThreadStacks};

/// Sums samples into [`ThreadStacks`].
pub struct ThreadStacksBuilder<'a> {
    analysis: &'a Analysis,
    each: &'a EachSample,
    lines: HashMap<Location, (String, u32)>,
    frames: HashMap<SourceFrame, u32>,
    stacks: HashMap<(u32, Vec<u32>, Option<String>), u32>,
    pids: HashMap<u32, u32>,
    out: ThreadStacks,
}

impl<'a> ThreadStacksBuilder<'a> {
    /// A builder over the samples of `each`, named by `analysis`; reads the source lines
    /// of every place once, per module.
    pub fn new(analysis: &'a Analysis, each: &'a EachSample) -> ThreadStacksBuilder<'a> {
        ThreadStacksBuilder {
            analysis,
            each,
            lines: source_lines(each),
            frames: HashMap::new(),
            stacks: HashMap::new(),
            pids: HashMap::new(),
            out: ThreadStacks::default(),
        }
    }

    /// Adds sample number `sample` of thread `tid` (of process `pid`) with `weight`; the
    /// index of its stack in [`ThreadStacks::stacks`], `None` when the sample has no stack.
    pub fn add(
        &mut self,
        sample: usize,
        (pid, tid): (u32, u32),
        weight: u64,
        reason: Option<&str>,
    ) -> Option<u32> {
        let ids = self.each.stacks.get(sample).filter(|s| !s.is_empty())?;
        let places = &self.each.places[sample];
        let mut frames = Vec::with_capacity(ids.len());
        for (i, &id) in ids.iter().enumerate() {
            let f = self.analysis.stacks.frame(id);
            let line = places.get(i).copied().flatten();
            let line = line.and_then(|l| self.lines.get(&l));
            let frame = SourceFrame {
                function: f.name.clone(),
                module: f.module.clone(),
                kernel: f.kernel,
                file: line.map(|l| l.0.clone()),
                line: line.map(|l| l.1),
            };
            let next = self.out.frames.len() as u32;
            let index = *self.frames.entry(frame.clone()).or_insert(next);
            if index == next {
                self.out.frames.push(frame);
            }
            frames.push(index);
        }
        self.pids.entry(tid).or_insert(pid);
        let key = (tid, frames, reason.map(str::to_string));
        let next = self.out.stacks.len() as u32;
        let index = *self.stacks.entry(key.clone()).or_insert(next);
        if index == next {
            self.out.stacks.push(ThreadStack {
                tid,
                frames: key.1,
                weight: 0,
                reason: key.2,
            });
        }
        self.out.stacks[index as usize].weight += weight;
        Some(index)
    }

    /// The stacks in the order first seen, and every thread named by `name(pid, tid)`.
    pub fn finish(mut self, name: impl Fn(u32, u32) -> String) -> ThreadStacks {
        let mut threads: Vec<Thread> = (self.pids.iter())
            .map(|(&tid, &pid)| Thread {
                tid,
                pid,
                name: name(pid, tid),
            })
            .collect();
        threads.sort_by_key(|t| t.tid);
        self.out.threads = threads;
        self.out
    }
}

/// The per-thread stacks of the CPU-clock samples of `raw` (named in `analysis`, `each`).
pub fn on_cpu(raw: &RawData, analysis: &Analysis, each: &EachSample) -> ThreadStacks {
    let mut b = ThreadStacksBuilder::new(analysis, each);
    for (i, s) in raw.samples.iter().enumerate().filter(|(_, s)| s.weight > 0) {
        b.add(i, (s.pid, s.tid), s.weight, None);
    }
    b.finish(|pid, tid| raw.thread_name(pid, tid))
}

/// The source file (the line table's path) and line of every user place of `each`.
fn source_lines(each: &EachSample) -> HashMap<Location, (String, u32)> {
    let mut per_module: HashMap<u32, HashSet<u64>> = HashMap::new();
    for loc in each.places.iter().flatten().flatten() {
        per_module.entry(loc.module).or_default().insert(loc.offset);
    }
    let symbolizer = line_symbolizer();
    let mut lines = HashMap::new();
    for (module, offsets) in per_module {
        let Some(path) = preloaded::readable(&each.modules[module as usize]) else {
            continue;
        };
        let offsets: Vec<u64> = offsets.into_iter().collect();
        let found = read_lines(&symbolizer, &path, &offsets, |sym| {
            let code = sym.code_info.as_deref()?;
            Some((code.to_path().to_string_lossy().into_owned(), code.line?))
        });
        for (offset, line) in offsets.into_iter().zip(found) {
            if let Some(line) = line {
                lines.insert(Location { module, offset }, line);
            }
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::observe::sampled::aggregate::analyse_each;

    #[test]
    fn samples_sum_per_thread_stack_and_reason() {
        let mut raw = RawData::default();
        raw.push_sample(1, 1, 5, &[0x1000, 0x2000]);
        raw.push_sample(1, 2, 6, &[0x1000, 0x2000]);
        raw.push_sample(1, 2, 7, &[0x1000, 0x2000]);
        let (analysis, each) = analyse_each(&raw, &[]);
        let mut b = ThreadStacksBuilder::new(&analysis, &each);
        for (i, s) in raw.samples.iter().enumerate() {
            b.add(i, (s.pid, s.tid), 10, Some("sleep"));
        }
        b.add(2, (1, 2), 1, Some("lock"));
        let t = b.finish(|pid, tid| format!("{pid}/{tid}"));
        let sums: Vec<(u32, u64, Option<&str>)> = (t.stacks.iter())
            .map(|s| (s.tid, s.weight, s.reason.as_deref()))
            .collect();
        assert_eq!(
            sums,
            [
                (1, 10, Some("sleep")),
                (2, 20, Some("sleep")),
                (2, 1, Some("lock"))
            ]
        );
        assert_eq!(t.frames.len(), 1, "one unknown place, shared");
        assert_eq!(t.threads[1].name, "1/2");
    }
}
