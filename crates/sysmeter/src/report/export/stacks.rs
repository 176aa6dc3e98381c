//! The one neutral form every stack export is written from: frames (function, source file
//! and line, module) shared by all samples, and weighted stacks with one value per value
//! type (`samples/count`, `cpu/nanoseconds`, `alloc_space/bytes`, …). `stacks_of` reads it
//! from a run record; `pprof` and `speedscope` write it. Also the one reading of a frame
//! label as sysmeter writes it, `function (file:line)`. Pure: no I/O.

use std::collections::HashMap;

/// One function (or unnamed place) on a stack.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Frame {
    /// Function name.
    pub function: String,
    /// Source file, when the record names it.
    pub file: Option<String>,
    /// Source line, when the record names it.
    pub line: Option<u64>,
    /// Module (`libc.so.6`, `[kernel]`), when the record names it.
    pub module: Option<String>,
}

impl Frame {
    /// A frame from a label `function (file:line)`, or a bare `function`.
    pub fn from_label(label: &str) -> Frame {
        let (function, file, line) = split_label(label);
        Frame {
            function: function.to_string(),
            file: file.map(str::to_string),
            line,
            module: None,
        }
    }
}

/// `function (file:line)` → (function, file, line); anything else is a bare function name.
fn split_label(label: &str) -> (&str, Option<&str>, Option<u64>) {
    let place = label
        .strip_suffix(')')
        .and_then(|l| l.rsplit_once(" ("))
        .and_then(|(function, place)| {
            let (file, line) = place.rsplit_once(':')?;
            let line = line.parse().ok()?;
            (!function.is_empty() && !file.is_empty()).then_some((function, file, line))
        });
    match place {
        Some((function, file, line)) => (function, Some(file), Some(line)),
        None => (label, None, None),
    }
}

/// What one value of a sample counts: pprof's `ValueType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ValueType {
    /// What is counted (`cpu`, `alloc_space`, `contentions`).
    pub name: &'static str,
    /// Its unit (`count`, `nanoseconds`, `bytes`).
    pub unit: &'static str,
}

/// One stack and its values (one per value type).
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// Frame indices, innermost (the leaf) first.
    pub stack: Vec<usize>,
    /// One value per value type of the [`Stacks`].
    pub values: Vec<i64>,
    /// String labels (`kind` = `mutex`, …).
    pub labels: Vec<(&'static str, String)>,
}

/// Weighted stacks of one run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stacks {
    /// What each value of a sample counts.
    pub types: Vec<ValueType>,
    /// The value type a viewer shows first.
    pub default_type: Option<&'static str>,
    /// What one sampling event stands for, and how much (pprof's `period_type`, `period`).
    pub period: Option<(ValueType, i64)>,
    /// Every frame once.
    pub frames: Vec<Frame>,
    /// The stacks.
    pub samples: Vec<Sample>,
    /// When the run started, ns since the epoch, and how long it observed, ns.
    pub time: (i64, i64),
    index: HashMap<Frame, usize>,
}

impl Stacks {
    /// No stacks yet, with these value types.
    pub fn new(types: Vec<ValueType>) -> Stacks {
        Stacks {
            types,
            ..Stacks::default()
        }
    }

    /// The index of `frame`, added if new.
    pub fn frame(&mut self, frame: Frame) -> usize {
        if let Some(&i) = self.index.get(&frame) {
            return i;
        }
        self.frames.push(frame.clone());
        self.index.insert(frame, self.frames.len() - 1);
        self.frames.len() - 1
    }

    /// Adds a stack of labels, innermost first, with its values.
    pub fn add(&mut self, innermost_first: &[Frame], values: Vec<i64>) -> &mut Sample {
        let stack = innermost_first
            .iter()
            .map(|f| self.frame(f.clone()))
            .collect();
        self.samples.push(Sample {
            stack,
            values,
            labels: Vec::new(),
        });
        let last = self.samples.len() - 1;
        &mut self.samples[last]
    }

    /// The position of the value type named `name`.
    pub fn type_index(&self, name: &str) -> Option<usize> {
        self.types.iter().position(|t| t.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_split_into_function_file_and_line() {
        let f = Frame::from_label("leak_pages (alloc_sites.c:42)");
        assert_eq!(f.function, "leak_pages");
        assert_eq!(
            (f.file.as_deref(), f.line),
            (Some("alloc_sites.c"), Some(42))
        );
        // C++ signatures and labels without a line stay whole.
        for bare in [
            "f(int)",
            "std::vector<int>::push (x)",
            "libc.so.6+0x10",
            "g ()",
        ] {
            let f = Frame::from_label(bare);
            assert_eq!((f.function.as_str(), f.line), (bare, None));
        }
        let f = Frame::from_label("a::b(int) (src/x.cc:7)");
        assert_eq!((f.function.as_str(), f.line), ("a::b(int)", Some(7)));
    }

    #[test]
    fn frames_are_shared_between_stacks() {
        let mut s = Stacks::new(vec![ValueType {
            name: "samples",
            unit: "count",
        }]);
        let (a, b) = (Frame::from_label("a"), Frame::from_label("b"));
        s.add(&[a.clone(), b.clone()], vec![1]);
        s.add(&[b, a], vec![2]);
        assert_eq!(s.frames.len(), 2);
        assert_eq!(s.samples[1].stack, vec![1, 0]);
        assert_eq!(s.type_index("samples"), Some(0));
    }
}
