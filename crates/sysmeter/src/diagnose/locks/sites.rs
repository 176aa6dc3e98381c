//! Names for the stacks of waits and wakes: every user address of a recovered stack
//! (`unwind`) is placed in its module (`observe::maps`) and named by the floor's
//! `symbolize`; the *call site* is the first frame, leaf first, that is not in the C library,
//! the dynamic loader, sysmeter's preload library or Rust's `std`/`core` — the code that took
//! (or released) the lock — and gets `file:line` from DWARF where the binary has it (else
//! `function (module)`, or `module+0xSTART` split by the unwind table's function entries).
//! A stack with no such frame says so (`[library frames only, …]`) rather than naming the
//! C library's innermost inlined helper. The kind of wait (mutex, rwlock,
//! condition variable, join, …) is read from the library frames on the stack.

use std::collections::{HashMap, HashSet};

use blazesym::symbolize::{CodeInfo, Sym, Symbolizer};

use super::unwind::user_stack;
use crate::diagnose::observe::maps::{AddressSpaces, Location};
use crate::diagnose::observe::preloaded;
use crate::diagnose::observe::symbolize::{Symbols, line_symbolizer, read_lines, short_module};

/// A named stack.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Named {
    /// The call site: `function (file:line)` or `function`.
    pub site: String,
    /// What the thread waited in (`mutex`, `rwlock`, `condvar`, `join`, …).
    pub kind: &'static str,
    /// Function names, leaf first.
    pub stack: Vec<String>,
}

/// Module name prefixes of code that implements locks rather than takes them: the C library,
/// the dynamic loader, the C++ and unwinding runtimes, and the vDSO.
const LIBRARY_MODULES: [&str; 7] = [
    "libc.so",
    "libc-",
    "libpthread",
    "ld-linux",
    "libstdc++",
    "libgcc_s",
    "[vdso]",
];
/// Function name prefixes of the same compiled into the program itself, where the module
/// cannot tell: Rust's standard library and parking_lot, and a static program's C library
/// (whose internal functions are `__`-prefixed).
const LIBRARY_NAMES: [&str; 8] = [
    "std::",
    "core::",
    "alloc::",
    "<std::",
    "<core::",
    "<alloc::",
    "parking_lot",
    "__",
];

/// Whether a frame (function `name` in module `module`, its short name) is library code:
/// by its object first — the C library, the loader, sysmeter's own preload library, whose
/// hooks sit between a program's `pthread_mutex_lock` call and the C library's — then by
/// name, and a frame nothing named (`[unknown …]`) is never a call site.
fn is_library(name: &str, module: &str) -> bool {
    LIBRARY_MODULES.iter().any(|m| module.starts_with(m))
        || preloaded::is_library(module)
        || LIBRARY_NAMES.iter().any(|n| name.starts_with(n))
        || name.starts_with('[')
}

/// The site of a stack with no frame outside the libraries (a walk cut short inside them,
/// or a thread the C library runs for itself): its outermost frame and module, marked so it
/// is never read as the program's code.
fn library_only(named: &[(String, &str, Option<Location>)]) -> String {
    match named.last() {
        Some((name, module, _)) if !module.is_empty() => {
            format!("[library frames only, outermost {name} in {module}]")
        }
        _ => "[unknown]".to_string(),
    }
}

/// Words in function names that say what kind of wait a stack is, most specific first.
const KINDS: [(&str, &str); 13] = [
    ("cond", "condvar"),
    ("rwlock", "rwlock"),
    ("join", "join"),
    ("barrier", "barrier"),
    ("sem_", "semaphore"),
    ("semaphore", "semaphore"),
    ("mutex", "mutex"),
    ("lll_lock", "mutex"),
    ("lock_contended", "mutex"),
    ("once", "once"),
    ("park", "park"),
    ("spin", "spinlock"),
    ("sleep", "sleep"),
];

/// The kind of wait of a stack (names leaf first): the first frame naming one decides.
pub fn kind(names: &[String]) -> &'static str {
    for name in names {
        let lower = name.to_ascii_lowercase();
        if let Some((_, k)) = KINDS.iter().find(|(word, _)| lower.contains(word)) {
            return k;
        }
    }
    "futex"
}

/// Whether a kind is a lock (contention) rather than waiting for an event.
pub fn is_lock(kind: &str) -> bool {
    matches!(kind, "mutex" | "rwlock" | "spinlock" | "futex")
}

/// Names stacks in batches.
pub struct Namer<'a> {
    spaces: &'a AddressSpaces,
}

/// A stack's key (process, chain) and the places of its frames, leaf first.
type Placed = ((u32, u32), Vec<Option<Location>>);

/// A stack to name: process, a time, the interned chain.
pub type Key = (u32, u64, u32);

impl<'a> Namer<'a> {
    /// A namer over these address spaces.
    pub fn new(spaces: &'a AddressSpaces) -> Namer<'a> {
        Namer { spaces }
    }

    /// Names every key; chains are looked up in `chains`.
    pub fn name(&mut self, keys: &[Key], chains: &[Vec<u64>]) -> HashMap<(u32, u32), Named> {
        let mut places: Vec<Placed> = Vec::new();
        for &(pid, time, chain) in keys {
            let Some(c) = chains.get(chain as usize) else {
                continue;
            };
            let stack = user_stack(c);
            let locs = stack
                .iter()
                .enumerate()
                .map(|(i, &a)| {
                    self.spaces
                        .lookup(pid, time, if i == 0 { a } else { a - 1 })
                })
                .collect();
            places.push(((pid, chain), locs));
        }
        let names = self.functions(places.iter().flat_map(|(_, l)| l.iter().flatten()));
        let mut sites: Vec<Option<Location>> = Vec::new();
        let mut out = HashMap::new();
        for (key, locs) in &places {
            let named: Vec<(String, &str, Option<Location>)> =
                locs.iter().map(|l| self.frame(*l, &names)).collect();
            let site = named.iter().find(|(n, m, _)| !is_library(n, m));
            sites.push(site.and_then(|s| s.2));
            let stack: Vec<String> = named.iter().map(|(n, _, _)| n.clone()).collect();
            let named_stack = Named {
                site: site.map_or_else(|| library_only(&named), |s| s.0.clone()),
                kind: kind(&stack),
                stack,
            };
            out.insert(*key, (named_stack, site.and_then(|s| s.2)));
        }
        let lines = self.lines(sites.iter().flatten());
        out.into_iter()
            .map(|(k, (mut named, loc))| {
                if let Some((name, line)) = loc.and_then(|l| lines.get(&l)) {
                    named.site = format!("{name} ({line})");
                }
                (k, named)
            })
            .collect()
    }

    fn frame<'n>(
        &self,
        loc: Option<Location>,
        names: &'n HashMap<Location, String>,
    ) -> (String, &'a str, Option<Location>) {
        let Some(loc) = loc else {
            return ("[unknown]".into(), "", None);
        };
        let module = short_module(&self.spaces.modules()[loc.module as usize]);
        let name = names
            .get(&loc)
            .cloned()
            .unwrap_or_else(|| format!("[unknown in {module}]"));
        (name, module, Some(loc))
    }

    fn by_module<'l>(locs: impl Iterator<Item = &'l Location>) -> HashMap<u32, Vec<u64>> {
        let mut per: HashMap<u32, HashSet<u64>> = HashMap::new();
        for l in locs {
            per.entry(l.module).or_default().insert(l.offset);
        }
        per.into_iter()
            .map(|(m, s)| (m, s.into_iter().collect()))
            .collect()
    }

    fn functions<'l>(&self, locs: impl Iterator<Item = &'l Location>) -> HashMap<Location, String> {
        let symbols = Symbols::new();
        let mut out = HashMap::new();
        for (module, offsets) in Self::by_module(locs) {
            let path = &self.spaces.modules()[module as usize];
            for (offset, r) in offsets.iter().zip(symbols.module(path, &offsets)) {
                if let Some(r) = r {
                    out.insert(
                        Location {
                            module,
                            offset: *offset,
                        },
                        r.name,
                    );
                }
            }
        }
        out
    }

    /// The innermost non-library function at each location (inlined functions counted) and
    /// its `file:line`, from DWARF where present.
    fn lines<'l>(
        &self,
        locs: impl Iterator<Item = &'l Location>,
    ) -> HashMap<Location, (String, String)> {
        let symbolizer = line_symbolizer();
        let mut out = HashMap::new();
        for (module, offsets) in Self::by_module(locs) {
            let path = &self.spaces.modules()[module as usize];
            for (offset, site) in offsets.iter().zip(lines_in(&symbolizer, path, &offsets)) {
                if let Some(site) = site {
                    let at = Location {
                        module,
                        offset: *offset,
                    };
                    out.insert(at, site);
                }
            }
        }
        out
    }
}

/// The innermost non-library function and its `file:line` at each file offset of the
/// object at `path` (`None` where there is no symbol or no line).
pub(super) fn lines_in(
    symbolizer: &Symbolizer,
    path: &str,
    offsets: &[u64],
) -> Vec<Option<(String, String)>> {
    read_lines(symbolizer, path, offsets, innermost_site)
}

/// `file:line` of a code location.
fn file_line(code: &CodeInfo<'_>) -> Option<String> {
    let file = std::path::Path::new(&code.file);
    let file = file.file_name().map_or(file.as_os_str(), |f| f);
    Some(format!("{}:{}", file.to_string_lossy(), code.line?))
}

/// With inlining, a symbol's code location is the line in the outer function that called
/// the first inlined one, each inlined function's the line in it that called the next:
/// the last of them that is not library code is where the user's code took the lock.
fn innermost_site(sym: &Sym<'_>) -> Option<(String, String)> {
    let outer = (
        sym.name.to_string(),
        sym.code_info.as_deref().and_then(file_line),
    );
    let inner = sym.inlined.iter().map(|f| {
        let line = f.code_info.as_ref().and_then(file_line);
        (f.name.to_string(), line)
    });
    let chain: Vec<(String, Option<String>)> = std::iter::once(outer).chain(inner).collect();
    let pick = chain
        .iter()
        .rev()
        .find(|(name, _)| !is_library(name, ""))
        .unwrap_or(&chain[0]);
    Some((pick.0.clone(), pick.1.clone()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_innermost_telling_frame_gives_the_kind() {
        assert_eq!(
            kind(&names(&[
                "__GI___lll_lock_wait",
                "pthread_mutex_lock",
                "worker"
            ])),
            "mutex"
        );
        assert_eq!(
            kind(&names(&[
                "__futex_abstimed_wait_common",
                "___pthread_cond_wait"
            ])),
            "condvar"
        );
        assert_eq!(
            kind(&names(&[
                "__futex_abstimed_wait_common",
                "__pthread_clockjoin_ex"
            ])),
            "join"
        );
        assert_eq!(
            kind(&names(&[
                "std::sys::sync::mutex::futex::Mutex::lock_contended"
            ])),
            "mutex"
        );
        assert_eq!(kind(&names(&["syscall", "main"])), "futex");
        assert!(is_lock("mutex") && !is_lock("condvar") && !is_lock("join"));
    }

    #[test]
    fn library_frames_are_not_call_sites() {
        assert!(is_library("pthread_mutex_lock", "libc.so.6"));
        assert!(is_library(
            "std::sys::sync::mutex::futex::Mutex::lock_contended",
            "app"
        ));
        assert!(is_library("[unknown]", ""));
        assert!(!is_library("worker", "fx"));
        // By object: a hook of the preload library, whatever its name.
        assert!(is_library("pthread_mutex_lock", "memfd:sysmeter-calls.so"));
        assert!(is_library("futex_wait", "libc.so.6"));
        assert!(!is_library("liblzma.so.5.4.1+0xc310", "liblzma.so.5.4.1"));
    }

    #[test]
    fn a_stack_of_library_frames_only_is_marked_not_named_by_its_leaf() {
        let stack = vec![
            ("futex_wait".to_string(), "libc.so.6", None),
            ("pthread_mutex_lock".to_string(), "libc.so.6", None),
        ];
        let site = library_only(&stack);
        assert_eq!(
            site,
            "[library frames only, outermost pthread_mutex_lock in libc.so.6]"
        );
        assert!(is_library(&site, ""));
        assert_eq!(library_only(&[]), "[unknown]");
    }
}
