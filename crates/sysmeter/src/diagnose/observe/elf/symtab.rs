//! Functions named in the full symbol table (`.symtab`) as file offsets: a statically linked
//! program has no `.dynsym`, so its own copy of the C library's `malloc` is found only
//! here (the uprobe fallback of `alloc` probes it). A stripped static program has neither
//! table and yields nothing. Pure apart from reading the file; depends on the parent's
//! reader only.

use std::collections::BTreeSet;
use std::path::Path;

use super::{Elf, ElfError, STT_FUNC};

/// `SHT_SYMTAB`.
const SHT_SYMTAB: u32 = 2;

/// The file offsets of the functions named `names` that `path` defines in `.dynsym` or
/// `.symtab`, one per address (aliases such as `malloc`/`__libc_malloc` share one):
/// `(name, offset)` in `names` order; IFUNC resolvers are left out (they probe nothing).
pub fn static_offsets(path: &Path, names: &[&str]) -> Result<Vec<(String, u64)>, ElfError> {
    let shown = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| ElfError::Read(shown.clone(), e.to_string()))?;
    let elf = Elf::parse(&bytes).ok_or(ElfError::NotElf(shown))?;
    let mut syms = elf.dynsyms();
    syms.extend(elf.symbols(SHT_SYMTAB));
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for name in names {
        for (_, value, kind, shndx) in syms.iter().filter(|s| s.0 == *name) {
            if *value == 0 || *shndx == 0 || *kind != STT_FUNC {
                continue;
            }
            if let Some(offset) = elf.file_offset(*value)
                && seen.insert(offset)
            {
                out.push((name.to_string(), offset));
            }
        }
    }
    Ok(out)
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
