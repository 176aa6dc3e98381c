//! Names for addresses, via blazesym: user frames from the ELF file of their module at a
//! file offset (so it works after the process exited, docs/kernel-traps.md), kernel
//! frames from `/proc/kallsyms` (readable with addresses only when privileged), and the vDSO
//! through this process's own copy (the kernel maps the same image into every process).
//!
//! Code without symbols is named per function by the unwind table's entries (FDEs):
//! `libfoo.so+0x15a20`, the function's first address as stated in the file; only code no
//! FDE covers keeps just its module (`[unknown in libfoo.so]`). Depends on blazesym and the
//! unwinder's tables (`unwind::tables`); no aggregation here.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use blazesym::symbolize::source::{Elf, Kernel, Process, Source};
use blazesym::symbolize::{Input, Sym, Symbolized, Symbolizer};
use blazesym::{MaybeDefault, Pid};

use super::unwind::tables::FileTables;

/// A named address: the function and where the address is inside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// Demangled function name.
    pub name: String,
    /// Offset of the address from the function's first byte.
    pub offset_in_function: u64,
    /// No symbol names the function: `name` is `module+0xSTART`, its entry (FDE) in the
    /// file's unwind table.
    pub from_cfi: bool,
}

/// Wraps one blazesym symbolizer (it caches parsed files across calls).
pub struct Symbols {
    inner: blazesym::symbolize::Symbolizer,
    /// Start of this process's vDSO, for vDSO frames of the target.
    own_vdso: Option<u64>,
    /// Unwind tables read so far, by path, for naming code without symbols.
    tables: RefCell<HashMap<String, Option<Arc<FileTables>>>>,
}

impl Default for Symbols {
    fn default() -> Self {
        Symbols::new()
    }
}

impl Symbols {
    /// A symbolizer without source lines or inlined frames (names are all a profile needs,
    /// and DWARF line tables are the slow part).
    pub fn new() -> Symbols {
        let inner = blazesym::symbolize::Symbolizer::builder()
            .enable_code_info(false)
            .enable_inlined_fns(false)
            .build();
        Symbols {
            inner,
            own_vdso: own_vdso_start(),
            tables: RefCell::new(HashMap::new()),
        }
    }

    /// Names for `offsets` (file offsets) in the module at `path`; `None` where unknown.
    pub fn module(&self, path: &str, offsets: &[u64]) -> Vec<Option<Resolved>> {
        if path == "[vdso]" {
            return self.vdso(offsets);
        }
        let mapped = path;
        let Some(path) = super::preloaded::readable(mapped) else {
            return vec![None; offsets.len()];
        };
        let path: &str = &path;
        if !Path::new(path).exists() {
            return vec![None; offsets.len()];
        }
        // ELF symbol tables first: cheap, and enough for most code. DWARF (and separate
        // debug files in /usr/lib/debug) only for what they could not name, because
        // looking for debug information costs far more than reading a symbol table.
        let mut names = self.elf(path, offsets, false);
        let missing: Vec<usize> = (0..offsets.len()).filter(|&i| names[i].is_none()).collect();
        if !missing.is_empty() {
            let retry: Vec<u64> = missing.iter().map(|&i| offsets[i]).collect();
            for (i, r) in missing.into_iter().zip(self.elf(path, &retry, true)) {
                names[i] = r;
            }
        }
        for (name, &offset) in names.iter_mut().zip(offsets) {
            if name.is_none() {
                *name = self.by_cfi(path, mapped, offset);
            }
        }
        names
    }

    /// Code without a symbol named by the unwind-table entry (FDE) holding it, one per
    /// function: `liblzma.so.5+0x15a20`, the function's first address as stated in the file
    /// (what `objdump` and `addr2line` take), so a stripped library's hot function is still
    /// one row rather than one lump per library.
    fn by_cfi(&self, path: &str, mapped: &str, offset: u64) -> Option<Resolved> {
        let mut tables = self.tables.borrow_mut();
        let file = tables
            .entry(path.to_string())
            .or_insert_with(|| FileTables::read(path).map(Arc::new));
        let (start, at) = file.as_ref()?.function_at(offset)?;
        Some(Resolved {
            name: format!("{}+0x{start:x}", short_module(mapped)),
            offset_in_function: at - start,
            from_cfi: true,
        })
    }

    fn elf(&self, path: &str, offsets: &[u64], debug_syms: bool) -> Vec<Option<Resolved>> {
        let mut elf = Elf::new(path);
        elf.debug_syms = debug_syms;
        match self
            .inner
            .symbolize(&Source::Elf(elf), Input::FileOffset(offsets))
        {
            Ok(found) => found.into_iter().map(resolved).collect(),
            Err(_) => vec![None; offsets.len()],
        }
    }

    /// vDSO offsets resolved in this process's own vDSO.
    fn vdso(&self, offsets: &[u64]) -> Vec<Option<Resolved>> {
        let Some(base) = self.own_vdso else {
            return vec![None; offsets.len()];
        };
        let addrs: Vec<u64> = offsets.iter().map(|o| base + o).collect();
        let mut process = Process::new(Pid::Slf);
        // Reading /proc/self/map_files needs CAP_SYS_ADMIN; the vDSO needs neither.
        process.map_files = false;
        match self
            .inner
            .symbolize(&Source::Process(process), Input::AbsAddr(&addrs))
        {
            Ok(found) => found.into_iter().map(resolved).collect(),
            Err(_) => vec![None; offsets.len()],
        }
    }

    /// Names for kernel addresses from `/proc/kallsyms`; `None` where unknown (all of them
    /// when kallsyms hides addresses from this user).
    pub fn kernel(&self, addrs: &[u64]) -> Vec<Option<Resolved>> {
        let kernel = Kernel {
            kallsyms: MaybeDefault::Default,
            // No vmlinux search: it is rarely installed and slow to parse.
            vmlinux: MaybeDefault::None,
            kaslr_offset: None,
            debug_syms: false,
            ..Default::default()
        };
        match self
            .inner
            .symbolize(&Source::Kernel(kernel), Input::AbsAddr(addrs))
        {
            Ok(found) => found.into_iter().map(resolved).collect(),
            Err(_) => vec![None; addrs.len()],
        }
    }
}

fn resolved(s: Symbolized<'_>) -> Option<Resolved> {
    match s {
        Symbolized::Sym(sym) => Some(Resolved {
            name: sym.name.into_owned(),
            offset_in_function: sym.offset as u64,
            from_cfi: false,
        }),
        Symbolized::Unknown(_) => None,
    }
}

/// A symbolizer that reads code locations (the DWARF line tables) and inlined functions:
/// what [`Symbols`] skips for profiles, because it is the slow part. It caches parsed files
/// across calls.
pub fn line_symbolizer() -> Symbolizer {
    Symbolizer::builder()
        .enable_code_info(true)
        .enable_inlined_fns(true)
        .build()
}

/// What `read` takes from the symbol of each of `offsets` (file offsets) in the ELF file at
/// `path`, symbolized by `symbolizer` (a [`line_symbolizer`]); `None` where there is no
/// symbol, and everywhere when the file cannot be read (or `path` is not a file's).
pub fn read_lines<T: Clone>(
    symbolizer: &Symbolizer,
    path: &str,
    offsets: &[u64],
    read: impl Fn(&Sym<'_>) -> Option<T>,
) -> Vec<Option<T>> {
    if !path.starts_with('/') || !Path::new(path).exists() {
        return vec![None; offsets.len()];
    }
    match symbolizer.symbolize(&Source::Elf(Elf::new(path)), Input::FileOffset(offsets)) {
        Ok(found) => found
            .iter()
            .map(|s| match s {
                Symbolized::Sym(sym) => read(sym),
                Symbolized::Unknown(_) => None,
            })
            .collect(),
        Err(_) => vec![None; offsets.len()],
    }
}

/// The source file (its last component) and line of each of `offsets` (file offsets) in
/// the ELF file at `path`, from its DWARF line table; `None` where it has none.
pub fn source_lines(path: &str, offsets: &[u64]) -> Vec<Option<(String, u32)>> {
    read_lines(&line_symbolizer(), path, offsets, |sym| {
        let c = sym.code_info.as_deref()?;
        let file = Path::new(&c.file)
            .file_name()?
            .to_string_lossy()
            .into_owned();
        Some((file, c.line?))
    })
}

/// Start address of this process's `[vdso]` mapping.
fn own_vdso_start() -> Option<u64> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    let line = maps.lines().find(|l| l.ends_with("[vdso]"))?;
    let (start, _) = line.split_once('-')?;
    u64::from_str_radix(start, 16).ok()
}

/// The last path component of a module (`/usr/lib/x86_64-linux-gnu/libc.so.6` →
/// `libc.so.6`); labels such as `[vdso]` stay as they are, anonymous memory (JIT code) is
/// `[anon]`.
pub fn short_module(path: &str) -> &str {
    let path = path.strip_suffix(" (deleted)").unwrap_or(path);
    if path.starts_with("//anon") || path.is_empty() {
        return "[anon]";
    }
    if path.starts_with('[') {
        return path;
    }
    path.rsplit('/').next().unwrap_or(path)
}

/// Reads `len` bytes at file offset `offset` of `path` (for looking at a function's first
/// instructions); `None` when unreadable.
pub fn read_bytes(path: &str, offset: u64, len: usize) -> Option<Vec<u8>> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = std::fs::File::open(path).ok()?;
    file.seek(SeekFrom::Start(offset)).ok()?;
    let mut buf = vec![0u8; len];
    file.read_exact(&mut buf).ok()?;
    Some(buf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::fixture::assert_cases;

    #[test]
    fn short_module_names() {
        assert_cases(
            short_module,
            &[
                ("/usr/lib/x86_64-linux-gnu/libc.so.6", "libc.so.6"),
                ("[vdso]", "[vdso]"),
                ("/tmp/prog (deleted)", "prog"),
                ("//anon", "[anon]"),
            ],
        );
    }

    #[test]
    fn own_executable_symbolizes_by_file_offset() {
        // This test binary's own `main`-adjacent function: find our mapping of ourselves
        // and symbolise the address of a function we know.
        let maps = std::fs::read_to_string("/proc/self/maps").expect("maps");
        let exe = std::fs::read_link("/proc/self/exe").expect("exe");
        let exe = exe.to_string_lossy().to_string();
        let here = own_executable_symbolizes_by_file_offset as *const () as u64;
        let events = crate::diagnose::observe::maps::parse_proc_maps(1, &maps);
        let m = events
            .iter()
            .find(|m| m.path == exe && m.start <= here && here < m.start + m.len)
            .expect("our text mapping");
        let offset = here - m.start + m.pgoff;
        let names = Symbols::new().module(&exe, &[offset]);
        let name = names[0]
            .as_ref()
            .map(|r| r.name.clone())
            .unwrap_or_default();
        assert!(
            name.contains("own_executable_symbolizes_by_file_offset"),
            "got {name:?}"
        );
        assert_eq!(names[0].as_ref().map(|r| r.offset_in_function), Some(0));
    }
}
