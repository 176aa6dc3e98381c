//! The preload library as a target maps it: a memfd (`/memfd:sysmeter-calls.so (deleted)`
//! in `/proc/PID/maps`), which has no path this process can open. Its frames sit between a
//! program's lock, allocation or library calls and the C library, so without its unwind
//! tables a walk through it depends on the hook keeping a frame pointer, and without its
//! symbols it is `[unknown in …]`. Here the mapped name is recognised ([`is_library`]) and
//! tables and symbols are read from this process's own copy ([`readable`]). Depends on
//! `sysmeter_sys::preload` only.

use std::borrow::Cow;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::sync::OnceLock;

use sysmeter_sys::preload::{LIBRARY_NAME, library_copy};

/// Whether the module at `path` (as `/proc/PID/maps` or a mapping record names it) is the
/// preload library.
pub fn is_library(path: &str) -> bool {
    let path = path.strip_suffix(" (deleted)").unwrap_or(path);
    let name = path.rsplit('/').next().unwrap_or(path);
    name.strip_prefix("memfd:").unwrap_or(name) == LIBRARY_NAME
}

/// The path to open for reading the code mapped from `path`: the path itself for a file that
/// is still there, this process's copy of the library for the preload library, `None` for
/// what cannot be read (anonymous memory, a deleted file, `[vdso]`).
pub fn readable(path: &str) -> Option<Cow<'_, str>> {
    if is_library(path) {
        static COPY: OnceLock<Option<File>> = OnceLock::new();
        let copy = COPY.get_or_init(|| library_copy().ok()).as_ref()?;
        return Some(Cow::Owned(format!("/proc/self/fd/{}", copy.as_raw_fd())));
    }
    let readable = path.starts_with('/') && !path.ends_with(" (deleted)");
    readable.then_some(Cow::Borrowed(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mapped_library_is_recognised_and_read_from_our_copy() {
        assert!(is_library("/memfd:sysmeter-calls.so (deleted)"));
        assert!(!is_library("/usr/lib/x86_64-linux-gnu/libc.so.6"));
        assert!(!is_library("/memfd:sysmeter-calls-region (deleted)"));
        assert_eq!(readable("/usr/bin/xz").as_deref(), Some("/usr/bin/xz"));
        assert_eq!(readable("/tmp/gone (deleted)"), None);
        assert_eq!(readable("[vdso]"), None);
        if sysmeter_sys::preload::CALLS_LIBRARY.is_empty() {
            return;
        }
        let copy = readable("/memfd:sysmeter-calls.so (deleted)").expect("our copy");
        let bytes = std::fs::read(copy.as_ref()).expect("the copy reads");
        assert_eq!(bytes, sysmeter_sys::preload::CALLS_LIBRARY);
    }

    /// The unwinder reads the library's tables through the copy: a hook's frame between a
    /// program and the C library is unwound by its CFI, whether or not the compiler kept a
    /// frame pointer in it.
    #[test]
    fn the_hooks_have_unwind_tables() {
        if sysmeter_sys::preload::CALLS_LIBRARY.is_empty() {
            return;
        }
        let path = readable("/memfd:sysmeter-calls.so (deleted)").expect("our copy");
        let tables = super::super::unwind::tables::FileTables::read(&path).expect("an ELF file");
        assert!(tables.has_cfi(), "the preload library has no unwind table");
        let symbols = super::super::symbolize::Symbols::new();
        let file = std::path::Path::new(path.as_ref());
        let hooks = super::super::elf::defined_offsets(file, &["pthread_mutex_lock"]);
        let offset = hooks
            .expect("an ELF file")
            .first()
            .expect("the mutex hook")
            .1;
        assert!(
            tables.function_at(offset + 4).is_some(),
            "no FDE covers the hook"
        );
        let named = symbols.module("/memfd:sysmeter-calls.so (deleted)", &[offset + 4]);
        let name = named[0].as_ref().map(|r| r.name.as_str());
        assert_eq!(name, Some("pthread_mutex_lock"));
    }
}
