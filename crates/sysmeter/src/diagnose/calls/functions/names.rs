//! Names for the function addresses the hooks recorded: a runtime address less the
//! thread's load bias (0 unless the program is PIE) is the address the ELF file states,
//! turned into a file offset through its `PT_LOAD` segment (`observe::elf`) and named by the
//! one symbolisation (`observe::symbolize`, blazesym: `.symtab`, then DWARF, then the unwind
//! table). An address nothing names keeps its file address, `0x1139`.
//!
//! Depends on `diagnose::observe` only.

use std::collections::HashMap;
use std::path::Path;

use crate::diagnose::observe::elf;
use crate::diagnose::observe::symbolize::Symbols;

/// The name of each `(load bias, runtime address)` in `addrs`, read from `program`.
pub fn resolve(program: &Path, addrs: &[(u64, u64)]) -> HashMap<(u64, u64), String> {
    // The symbolizer wants an absolute path.
    let program = program
        .canonicalize()
        .unwrap_or_else(|_| program.to_path_buf());
    let vaddrs: Vec<u64> = addrs
        .iter()
        .map(|&(base, a)| a.wrapping_sub(base))
        .collect();
    let offsets = elf::file_offsets(&program, &vaddrs).unwrap_or_else(|_| vec![None; addrs.len()]);
    let known: Vec<(usize, u64)> = offsets
        .iter()
        .enumerate()
        .filter_map(|(i, o)| o.map(|o| (i, o)))
        .collect();
    // The symbolizer wants an absolute path.
    let program = program
        .canonicalize()
        .unwrap_or_else(|_| program.to_path_buf());
    let path = program.to_string_lossy();
    let only: Vec<u64> = known.iter().map(|&(_, o)| o).collect();
    let found = Symbols::new().module(&path, &only);
    let mut names: Vec<String> = vaddrs.iter().map(|v| format!("{v:#x}")).collect();
    for ((i, _), r) in known.into_iter().zip(found) {
        if let Some(r) = r {
            names[i] = r.name;
        }
    }
    addrs.iter().copied().zip(names).collect()
}
