//! Functions by name as file offsets, the form uprobes are defined in: those an object
//! exports in `.dynsym` ([`defined_offsets`]: the C library's path functions that `trace`
//! and `run` probe), and those of the full symbol table (`.symtab`) too
//! ([`static_offsets`]): a statically linked program has no `.dynsym`, so its own copy of the
//! C library's `malloc` is found only there (the uprobe fallback of `alloc` probes it). A
//! stripped static program has neither table and yields nothing. Both are one lookup
//! (`named_offsets`). Pure apart from reading the file; depends on the parent's reader only.

use std::collections::BTreeSet;
use std::path::Path;

use super::{Elf, ElfError, STT_FUNC, STT_GNU_IFUNC, with_file};

/// `SHT_SYMTAB`.
const SHT_SYMTAB: u32 = 2;

/// The file offsets of the functions named `names` that the ELF file `path` defines in
/// `.dynsym`, one per address (aliases such as `open`/`open64` share one): `(name, offset)`
/// in `names` order; IFUNC resolvers included (`calls` and the path probes take them).
pub fn defined_offsets(path: &Path, names: &[&str]) -> Result<Vec<(String, u64)>, ElfError> {
    with_file(path, |elf| {
        named_offsets(elf, &elf.dynsyms(), names, &[STT_FUNC, STT_GNU_IFUNC])
    })
}

/// The file offsets of the functions named `names` that `path` defines in `.dynsym` or
/// `.symtab`, one per address (aliases such as `malloc`/`__libc_malloc` share one):
/// `(name, offset)` in `names` order; IFUNC resolvers are left out (they probe nothing).
pub fn static_offsets(path: &Path, names: &[&str]) -> Result<Vec<(String, u64)>, ElfError> {
    with_file(path, |elf| {
        let mut syms = elf.dynsyms();
        syms.extend(elf.symbols(SHT_SYMTAB));
        named_offsets(elf, &syms, names, &[STT_FUNC])
    })
}

/// The one lookup of functions by name: of the symbols `syms` of `elf`, those named `names`
/// that are defined (a value and a section) and of a symbol type in `kinds`, as `(name,
/// file offset)` in `names` order, the first name at each offset only.
fn named_offsets(
    elf: &Elf,
    syms: &[(String, u64, u8, u16)],
    names: &[&str],
    kinds: &[u8],
) -> Vec<(String, u64)> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for name in names {
        for (_, value, kind, shndx) in syms.iter().filter(|s| s.0 == *name) {
            if *value == 0 || *shndx == 0 || !kinds.contains(kind) {
                continue;
            }
            if let Some(offset) = elf.file_offset(*value)
                && seen.insert(offset)
            {
                out.push((name.to_string(), offset));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_c_librarys_malloc_is_found_once_and_a_script_refused() {
        let libc = Path::new("/lib/x86_64-linux-gnu/libc.so.6");
        if libc.exists() {
            let found = static_offsets(libc, &["malloc", "malloc", "free"]).unwrap();
            assert_eq!(found.len(), 2, "{found:?}");
            assert!(found.iter().all(|(_, off)| *off > 0));
        }
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("s");
        std::fs::write(&script, "#!/bin/sh\n").unwrap();
        assert!(static_offsets(&script, &["malloc"]).is_err());
    }
}
