//! Names for the allocation stacks: each return address is placed in the loaded object of
//! its process image that holds it (recorded by the library at start-up and again at a
//! normal exit), made a file offset (`observe::elf`) and named by the one symbolisation
//! (`observe::symbolize`: the function, then the source line of the call). The address
//! looked up is the return address less one, inside the call instruction, so the line is
//! the call's. An address no object holds keeps its hex value.
//!
//! A site is named by its first frame that is not an allocator's own wrapper (C++
//! `operator new`, Rust's global allocator shims): the code that asked for the memory.
//!
//! Depends on `diagnose::observe` and the sibling `region`.

use std::collections::HashMap;
use std::path::Path;

use super::Outcome;
use super::region::{Object, Proc};
use crate::diagnose::observe::elf;
use crate::diagnose::observe::symbolize::{Symbols, short_module, source_lines};

/// A named stack.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Named {
    /// Frames, innermost first: `function (file:line)`, `function`, `module+0x…` or `0x…`.
    pub frames: Vec<String>,
    /// The site: the first frame that is not an allocator's wrapper.
    pub site: String,
}

/// Frames of an allocator's own code, skipped when a site is named.
const WRAPPERS: &[&str] = &[
    "operator new",
    "operator delete",
    "__rust_alloc",
    "__rust_realloc",
    "__rdl_",
    "__rg_",
    "alloc::alloc::",
    "alloc::raw_vec::",
    "<std::alloc::System",
    "std::sys::alloc::",
    "std::sys::pal::unix::alloc",
    "__libc_",
];

fn is_wrapper(frame: &str) -> bool {
    WRAPPERS.iter().any(|w| frame.starts_with(w))
}

/// The objects of each image (the first record of the image that has them).
fn objects_by_image(procs: &[Proc]) -> HashMap<u32, &[Object]> {
    let mut by: HashMap<u32, &[Object]> = HashMap::new();
    for p in procs {
        if !p.objects.is_empty() {
            by.entry(p.image).or_insert(&p.objects);
        }
    }
    by
}

/// The name of every (object path, file address) asked for.
fn name_addresses(wanted: HashMap<String, Vec<u64>>) -> HashMap<(String, u64), String> {
    let symbols = Symbols::new();
    let mut out = HashMap::new();
    for (path, vaddrs) in wanted {
        let offsets = elf::file_offsets(Path::new(&path), &vaddrs)
            .unwrap_or_else(|_| vec![None; vaddrs.len()]);
        let known: Vec<(u64, u64)> = vaddrs
            .iter()
            .zip(&offsets)
            .filter_map(|(&v, o)| o.map(|o| (v, o)))
            .collect();
        let offs: Vec<u64> = known.iter().map(|&(_, o)| o).collect();
        let names = symbols.module(&path, &offs);
        let lines = source_lines(&path, &offs);
        for (((v, _), name), line) in known.iter().zip(names).zip(lines) {
            let label = match (name, line) {
                (Some(n), Some((file, l))) => format!("{} ({file}:{l})", n.name),
                (Some(n), None) => n.name,
                (None, _) => format!("{}+{:#x}", short_module(&path), v),
            };
            out.insert((path.clone(), *v), label);
        }
        for v in vaddrs {
            out.entry((path.clone(), v))
                .or_insert_with(|| format!("{}+{v:#x}", short_module(&path)));
        }
    }
    out
}

/// Where `pc` lies: (object path, file address of the call instruction).
fn place(objects: &[Object], pc: u64) -> Option<(String, u64)> {
    let at = pc.checked_sub(1)?;
    let o = objects.iter().find(|o| o.lo <= at && at < o.hi)?;
    Some((o.path.clone(), at.wrapping_sub(o.bias)))
}

/// A frame placed in its object (path, file address), or its bare address.
type Placed = Result<(String, u64), u64>;

/// Every stack of `out` named, by stack index.
pub fn name_sites(out: &Outcome) -> HashMap<usize, Named> {
    let by_image = objects_by_image(&out.procs);
    let none: &[Object] = &[];
    let placed: HashMap<usize, Vec<Placed>> = out
        .stacks
        .iter()
        .map(|(&i, s)| {
            let objs = by_image.get(&s.image).copied().unwrap_or(none);
            let frames = s.pcs.iter().map(|&pc| place(objs, pc).ok_or(pc)).collect();
            (i, frames)
        })
        .collect();
    let mut wanted: HashMap<String, Vec<u64>> = HashMap::new();
    for (path, v) in placed.values().flatten().flatten() {
        wanted.entry(path.clone()).or_default().push(*v);
    }
    for v in wanted.values_mut() {
        v.sort_unstable();
        v.dedup();
    }
    let names = name_addresses(wanted);
    placed
        .into_iter()
        .map(|(i, frames)| {
            let frames: Vec<String> = frames
                .into_iter()
                .map(|f| match f {
                    Ok(key) => names.get(&key).cloned().unwrap_or_default(),
                    Err(pc) => format!("{pc:#x}"),
                })
                .collect();
            let site = frames
                .iter()
                .find(|f| !is_wrapper(f))
                .or(frames.first())
                .cloned()
                .unwrap_or_else(|| "(no stack)".into());
            (i, Named { frames, site })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_is_placed_by_its_call_instruction() {
        let objs = [Object {
            bias: 0x5000,
            lo: 0x6000,
            hi: 0x7000,
            path: "/bin/x".into(),
        }];
        // A return address at the very end of the object still belongs to it (pc - 1).
        assert_eq!(place(&objs, 0x7000), Some(("/bin/x".into(), 0x1fff)));
        assert_eq!(place(&objs, 0x6000), None);
    }

    #[test]
    fn allocator_wrappers_are_not_sites() {
        assert!(is_wrapper("operator new(unsigned long)"));
        assert!(is_wrapper("alloc::alloc::alloc"));
        assert!(!is_wrapper("parse_line (parse.c:88)"));
    }
}
