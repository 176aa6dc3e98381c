//! Callers that frame-pointer walks lose, found again from the top of the user stack.
//!
//! A thread blocks inside a system call, nearly always in a libc wrapper (`nanosleep`,
//! `read`, `write`, `futex` via `pthread_mutex_lock`) that sets up no frame pointer. The
//! kernel's walk starts at the frame pointer still holding the *caller's* frame, so it goes
//! from the wrapper straight to its caller's caller: the function that called `nanosleep`
//! is missing (DEPENDENCIES.md §5b). The return addresses of the frameless functions are
//! the words between the stack pointer and that frame pointer: the ones that point into an
//! executable mapping just after a call instruction are put back between the leaf and the
//! walked frames, innermost first, up to the first one into a function that keeps a frame
//! pointer (the owner of the frame the walk starts from: stale words beyond it are old
//! calls). This is the cheap fix (no DWARF unwinding); a code pointer kept in a local right
//! after a call can still be mistaken for a return address, which the call-instruction check
//! makes rare.

use std::collections::HashMap;

use super::super::aggregate::pushes_frame_pointer;
use super::raw::UserStack;
use crate::diagnose::observe::maps::{AddressSpaces, Location};
use crate::diagnose::observe::records::PERF_CONTEXT_USER;
use crate::diagnose::observe::symbolize::{Symbols, read_bytes};

/// Whether the bytes just before a return address end with a call instruction: `e8 rel32`,
/// or `ff /2` with a register, register-indirect, disp8 or disp32/RIP-relative operand.
pub fn ends_with_call(before: &[u8]) -> bool {
    let n = before.len();
    let at = |back: usize| n.checked_sub(back).and_then(|i| before.get(i)).copied();
    let modrm_call =
        |back: usize| at(back) == Some(0xff) && at(back - 1).is_some_and(|m| (m >> 3) & 7 == 2);
    at(5) == Some(0xe8) || modrm_call(2) || modrm_call(3) || modrm_call(6)
}

/// What a candidate word is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Word {
    /// Not a return address.
    Data,
    /// A return address into a function without a frame pointer.
    Frameless,
    /// A return address into a function that keeps a frame pointer: the owner of the frame
    /// the kernel's walk starts from, so the scan stops there.
    Framed,
}

/// Looks at code bytes of the modules, with a cache.
pub struct CallCheck<'a> {
    spaces: &'a AddressSpaces,
    symbols: Symbols,
    cache: HashMap<Location, Word>,
}

impl<'a> CallCheck<'a> {
    /// Checks against the modules of `spaces`.
    pub fn new(spaces: &'a AddressSpaces) -> CallCheck<'a> {
        CallCheck {
            spaces,
            symbols: Symbols::new(),
            cache: HashMap::new(),
        }
    }

    /// What `addr` in `pid` at `time` is.
    fn word(&mut self, pid: u32, time: u64, addr: u64) -> Word {
        let Some(loc) = self.spaces.lookup(pid, time, addr) else {
            return Word::Data;
        };
        if let Some(&w) = self.cache.get(&loc) {
            return w;
        }
        let path = &self.spaces.modules()[loc.module as usize];
        let after_call = loc.offset >= 6
            && read_bytes(path, loc.offset - 6, 6).is_some_and(|b| ends_with_call(&b));
        let w = if !after_call {
            Word::Data
        } else {
            // The function holding the call (one byte back: the call may end it).
            let start = self
                .symbols
                .module(path, &[loc.offset - 1])
                .pop()
                .flatten()
                .and_then(|r| (loc.offset - 1).checked_sub(r.offset_in_function));
            match start.and_then(|s| read_bytes(path, s, 5)) {
                Some(code) if pushes_frame_pointer(&code) => Word::Framed,
                _ => Word::Frameless,
            }
        };
        self.cache.insert(loc, w);
        w
    }

    /// `chain` with the return addresses found between `stack.sp` and `stack.bp` inserted
    /// after the user leaf.
    pub fn repair(&mut self, pid: u32, time: u64, chain: &[u64], stack: &UserStack) -> Vec<u64> {
        let Some(user) = chain.iter().position(|&e| e == PERF_CONTEXT_USER) else {
            return chain.to_vec();
        };
        if user + 1 >= chain.len() || stack.bp <= stack.sp {
            return chain.to_vec();
        }
        let below_bp = ((stack.bp - stack.sp) / 8) as usize;
        let mut found = Vec::new();
        for &w in stack.words.iter().take(below_bp).filter(|&&w| w > 0xfff) {
            match self.word(pid, time, w) {
                Word::Data => {}
                Word::Frameless => found.push(w),
                Word::Framed => {
                    found.push(w);
                    break;
                }
            }
        }
        let mut out = Vec::with_capacity(chain.len() + found.len());
        out.extend_from_slice(&chain[..user + 2]);
        out.extend(found);
        out.extend_from_slice(&chain[user + 2..]);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn call_instructions_before_a_return_address() {
        assert!(ends_with_call(&[0x90, 0xe8, 1, 2, 3, 4]), "call rel32");
        assert!(ends_with_call(&[0, 0, 0, 0, 0xff, 0xd0]), "call *%rax");
        assert!(
            ends_with_call(&[0, 0, 0, 0xff, 0x50, 0x08]),
            "call *8(%rax)"
        );
        assert!(ends_with_call(&[0xff, 0x15, 1, 2, 3, 4]), "call *rel(%rip)");
        assert!(!ends_with_call(&[0, 0, 0, 0, 0xff, 0xe0]), "jmp *%rax");
        assert!(!ends_with_call(&[0x48, 0x89, 0xe5, 0x90, 0x90, 0x90]));
        assert!(!ends_with_call(&[]));
    }

    #[test]
    fn nothing_changes_without_a_user_part_or_a_frame() {
        let spaces = AddressSpaces::new(&[], &[], &[]);
        let mut check = CallCheck::new(&spaces);
        let chain = [1, 2, 3];
        let stack = UserStack {
            sp: 100,
            bp: 50,
            words: vec![5],
        };
        assert_eq!(check.repair(1, 1, &chain, &stack), chain.to_vec());
        let chain = [PERF_CONTEXT_USER, 0x40_1000, 0x40_2000];
        let stack = UserStack {
            sp: 100,
            bp: 116,
            words: vec![0x40_3000, 0x40_4000, 0x40_5000],
        };
        // No mapping: no word is a return address.
        assert_eq!(check.repair(1, 1, &chain, &stack), chain.to_vec());
    }
}
