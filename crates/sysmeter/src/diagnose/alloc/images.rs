//! The process images of an `alloc` run, each counted apart: a wrapper (`#!/bin/sh … exec`,
//! a pyenv shim, `env`) and the program it execs are two images of one process, and each
//! keeps its own record, sites and peak. When a run counted more than one image, every site
//! is labelled with the image that allocated there (never merged into the first one), one
//! finding names the images with their allocations, the peak is the launched process's
//! largest image peak (not its first image's, which a wrapper holds), and an image replaced
//! by an exec has nothing live at the end (its blocks went with its address space).
//!
//! Pure; depends on the sibling `Outcome` and `region`.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::Outcome;

/// The label of each image number: its program name, with `#N` (its load of the library)
/// where two images of the run share a name. Empty when the run counted one image only.
pub fn labels(out: &Outcome) -> BTreeMap<u32, String> {
    let mut names: BTreeMap<u32, &str> = BTreeMap::new();
    for p in &out.procs {
        names.entry(p.image).or_insert(p.exe.as_str());
    }
    if names.len() < 2 {
        return BTreeMap::new();
    }
    let mut uses: HashMap<&str, usize> = HashMap::new();
    for n in names.values() {
        *uses.entry(n).or_default() += 1;
    }
    names
        .iter()
        .map(|(&image, &name)| {
            let label = if uses[name] > 1 {
                format!("{name} #{image}")
            } else {
                name.to_string()
            };
            (image, label)
        })
        .collect()
}

/// The label of the image of process record `index`, if the run has more than one image.
pub fn label_of(out: &Outcome, labels: &BTreeMap<u32, String>, index: usize) -> Option<String> {
    let p = out.procs.iter().find(|p| p.index == index)?;
    labels.get(&p.image).cloned()
}

/// The process records whose image was replaced by an exec (a later image of the same pid
/// exists): their blocks were not freed but went with the address space, so they are not
/// live at the end (nor leaks).
pub fn replaced(out: &Outcome) -> HashSet<usize> {
    out.procs
        .iter()
        .filter(|p| {
            out.procs
                .iter()
                .any(|q| q.pid == p.pid && q.image > p.image)
        })
        .map(|p| p.index)
        .collect()
}

/// The sentence naming every image with its allocations, in the order they loaded the
/// library; `None` with one image.
pub fn sentence(out: &Outcome) -> Option<String> {
    let labels = labels(out);
    if labels.is_empty() {
        return None;
    }
    let each: Vec<String> = labels
        .iter()
        .map(|(&image, label)| {
            let allocs: u64 = out
                .procs
                .iter()
                .filter(|p| p.image == image)
                .map(|p| p.heap.allocs)
                .sum();
            format!("{label} {allocs}")
        })
        .collect();
    Some(format!(
        "{} process images were counted, each apart (a wrapper and the program it execs are \
         two; sites are labelled by image), allocations per image: {}.",
        labels.len(),
        each.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::alloc::region::Proc;

    fn proc(index: usize, pid: u32, image: u32, exe: &str, allocs: u64, peak: u64) -> Proc {
        let mut p = Proc {
            index,
            pid,
            image,
            exe: exe.into(),
            ..Proc::default()
        };
        p.heap.allocs = allocs;
        p.heap.peak = peak;
        p
    }

    #[test]
    fn a_wrapper_and_its_program_are_two_labelled_images() {
        let out = Outcome {
            pid: 7,
            procs: vec![
                proc(0, 7, 1, "sh", 12, 4096),
                proc(1, 7, 2, "prog", 1000, 64_000),
            ],
            ..Outcome::default()
        };
        let l = labels(&out);
        assert_eq!(label_of(&out, &l, 0).as_deref(), Some("sh"));
        assert_eq!(label_of(&out, &l, 1).as_deref(), Some("prog"));
        assert_eq!(replaced(&out), HashSet::from([0]));
        let s = sentence(&out).unwrap_or_default();
        assert!(s.contains("sh 12, prog 1000"), "{s}");
    }

    #[test]
    fn images_of_one_name_are_numbered_and_one_image_has_no_label() {
        let mut out = Outcome {
            pid: 7,
            procs: vec![proc(0, 7, 1, "loop", 1, 1), proc(1, 7, 2, "loop", 1, 1)],
            ..Outcome::default()
        };
        assert_eq!(
            labels(&out).values().cloned().collect::<Vec<_>>(),
            ["loop #1", "loop #2"]
        );
        out.procs.pop();
        assert!(labels(&out).is_empty() && sentence(&out).is_none());
    }
}
