//! The in-process lock table of `locks` for a launched command (mutrace's columns): the
//! preload library's pthread hooks (`crates/sysmeter-sys/preload/mutex.c`, layout in
//! `mutex.h`: keep `Layout` in step) count and time every acquisition and release per lock
//! into a shared region that outlives the command (injected by the floor's `inject`, as for
//! `calls` and `alloc`); at the end it is read back
//! and every call site (resolved by each process at its exit into an object and a file
//! offset) named with the floor's symbols. A region that cannot be made leaves the futex view
//! alone. Depends on sysmeter-sys and `diagnose::observe`.

use std::ffi::OsString;
use std::fs::File;

use sysmeter_sys::preload;

use super::sites::lines_in;
use crate::diagnose::observe::bytes::{text_at, u32_at, u64_at};
use crate::diagnose::observe::inject;
use crate::diagnose::observe::symbolize::{Symbols as Names, line_symbolizer, short_module};
use crate::model::held::{HeldRow, lock_key};

/// The region's layout (mutex.h).
struct Layout;
impl Layout {
    const MAGIC: u64 = 0x314b_434f_4c53_4d53;
    const MAX: u32 = 4096;
    const PATHS: usize = 64;
    const PATH: usize = 256;
    const HEADER: u64 = 64 + (Self::PATHS * Self::PATH) as u64;
    const ENTRY: usize = 128;
    const SIZE: u64 = Self::HEADER + Self::MAX as u64 * Self::ENTRY as u64;
}

/// The library and the region a launched command inherits.
pub struct Region {
    lib: File,
    shm: File,
}

impl Region {
    /// A fresh region and the library (the floor's injection, as `calls` and `alloc` use);
    /// `None` where the library is not built (not x86-64) or a memfd cannot be made.
    pub fn prepare() -> Option<Region> {
        if preload::CALLS_LIBRARY.is_empty() {
            return None;
        }
        let mut header = Layout::MAGIC.to_le_bytes().to_vec();
        header.extend(Layout::MAX.to_le_bytes());
        let (lib, shm) =
            inject::library_and_region(c"sysmeter-locks-region", Layout::SIZE, &header).ok()?;
        Some(Region { lib, shm })
    }

    /// The command's environment: ours, the library preloaded last (the program's own
    /// preloads keep their precedence) and the region's path.
    pub fn environment(&self) -> Vec<OsString> {
        let shm = ("SYSMETER_LOCKS_SHM".to_string(), inject::path_of(&self.shm));
        inject::environment(&self.lib, &["SYSMETER_LOCKS_"], &[shm])
    }

    /// Every lock the command's processes recorded, hottest (longest held, then waited)
    /// first; empty when the library never loaded (a static or setuid program).
    pub fn read(&self) -> Vec<HeldRow> {
        let bytes = match inject::read_at(&self.shm, 0, Layout::SIZE as usize) {
            Ok(b) if u64_at(&b, 0) == Layout::MAGIC => b,
            _ => return Vec::new(),
        };
        let paths = paths(&bytes);
        let symbols = Symbols {
            lines: line_symbolizer(),
            names: Names::new(),
        };
        let mut rows: Vec<HeldRow> = (0..Layout::MAX as usize)
            .map(|i| &bytes[Layout::HEADER as usize + i * Layout::ENTRY..][..Layout::ENTRY])
            .filter(|e| u64_at(e, 0) != 0)
            .map(|e| row(e, &paths, &symbols))
            .collect();
        rows.sort_by_key(|r| std::cmp::Reverse((r.hold_ns, r.wait_ns)));
        rows
    }
}

/// Names for call sites: `function (file:line)` from DWARF, else the symbol table's name.
struct Symbols {
    lines: blazesym::symbolize::Symbolizer,
    names: Names,
}

fn paths(bytes: &[u8]) -> Vec<String> {
    let n = (u32_at(bytes, 24) as usize).min(Layout::PATHS);
    (0..n)
        .map(|i| text_at(bytes, 64 + i * Layout::PATH, Layout::PATH))
        .collect()
}

/// A call site at `at` of an entry, written as the futex view writes its sites
/// (`function (file:line)`, `function`, `module+0xSTART`), or the raw address when its
/// process never resolved it (it ended without running its exit handlers).
fn site(e: &[u8], at: usize, paths: &[String], symbols: &Symbols) -> String {
    let (addr, offset, path) = (u64_at(e, at), u64_at(e, at + 8), u32_at(e, at + 16));
    if addr == 0 {
        return "–".to_string();
    }
    let Some(module) = (path as usize).checked_sub(1).and_then(|p| paths.get(p)) else {
        return format!("{addr:#x}");
    };
    // The file itself, as the futex view's mappings name it (`liblzma.so.5.4.1`, not the
    // `liblzma.so.5` link the loader was given), so both views write one site alike.
    let real = std::fs::canonicalize(module).map(|p| p.to_string_lossy().into_owned());
    let module = real.as_deref().unwrap_or(module);
    // A return address: the call is the instruction before it.
    let offset = offset.saturating_sub(1);
    if let Some((name, line)) = lines_in(&symbols.lines, module, &[offset]).pop().flatten() {
        return format!("{name} ({line})");
    }
    match symbols.names.module(module, &[offset]).pop().flatten() {
        Some(r) => r.name,
        None => format!("{}+{offset:#x}", short_module(module)),
    }
}

fn row(e: &[u8], paths: &[String], symbols: &Symbols) -> HeldRow {
    let kind = match u32_at(e, 12) {
        1 => "mutex",
        2 => "rwlock",
        3 => "spinlock",
        _ => "condvar",
    };
    HeldRow {
        kind: kind.into(),
        lock: lock_key(u32_at(e, 8), u64_at(e, 0)),
        site: site(e, 80, paths, symbols),
        locked: u64_at(e, 24),
        contended: u64_at(e, 32),
        owner_changes: u64_at(e, 40),
        wait_ns: u64_at(e, 48),
        wait_max_ns: u64_at(e, 56),
        hold_ns: u64_at(e, 64),
        hold_max_ns: u64_at(e, 72),
        longest_hold_site: site(e, 104, paths, symbols),
    }
}
