//! Callers that frame-pointer walks lose, found again in a copy of the user stack: the one
//! stack scan of `locks` and `profile --off-cpu`.
//!
//! A thread that enters the kernel nearly always does so in a C library function (`futex`
//! through `pthread_mutex_lock`, `nanosleep`, `read`) built without frame pointers. The
//! kernel's walk starts at the frame pointer still holding the *caller's* frame, so it goes
//! from the leaf straight to its caller's caller: the function that took the lock or called
//! `nanosleep` is missing. Their return addresses are still on the stack, between the stack
//! pointer and that frame. A word counts as a return address when it points into an
//! executable mapping just after a call instruction (`call rel32`, or `ff /2` with a
//! register, register-indirect, disp8 or disp32/RIP-relative operand: [`ends_with_call`]) —
//! the "stack scanning" of crash reporters. The scan keeps such words innermost first and
//! stops at the first one into a function that keeps a frame pointer (it owns the frame the
//! walk starts from: words beyond it are older calls) or at the walk's own first return
//! address. A code pointer kept in a local right after a call can still pass the test; that
//! is this method's limit (docs/offcpu.md, docs/locks.md).
//!
//! Reads code bytes of the mapped files; depends on [`super::maps`] and
//! [`super::symbolize`].

use std::collections::HashMap;

use super::maps::{AddressSpaces, Location};
use super::symbolize::{Symbols, read_bytes};

/// Whether the bytes just before a return address end with a call instruction: `e8 rel32`,
/// or `ff /2` with a register, register-indirect, disp8 or disp32/RIP-relative operand.
pub fn ends_with_call(before: &[u8]) -> bool {
    let n = before.len();
    let at = |back: usize| n.checked_sub(back).and_then(|i| before.get(i)).copied();
    let modrm_call =
        |back: usize| at(back) == Some(0xff) && at(back - 1).is_some_and(|m| (m >> 3) & 7 == 2);
    at(5) == Some(0xe8) || modrm_call(2) || modrm_call(3) || modrm_call(6)
}

/// Whether x86-64 code starts by saving the frame pointer: `push %rbp`, optionally after
/// `endbr64`.
pub fn pushes_frame_pointer(code: &[u8]) -> bool {
    const ENDBR64: [u8; 4] = [0xf3, 0x0f, 0x1e, 0xfa];
    const PUSH_RBP: u8 = 0x55;
    let body = code.strip_prefix(&ENDBR64[..]).unwrap_or(code);
    body.first() == Some(&PUSH_RBP)
}

/// What a stack word is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Word {
    /// Not a return address.
    Data,
    /// A return address into a function without a frame pointer.
    Frameless,
    /// A return address into a function that keeps a frame pointer.
    Framed,
}

/// Scans stacks against the modules of some address spaces, remembering what each code
/// location turned out to be.
pub struct StackScan<'a> {
    spaces: &'a AddressSpaces,
    symbols: Symbols,
    cache: HashMap<Location, Word>,
}

impl<'a> StackScan<'a> {
    /// A scanner over these address spaces.
    pub fn new(spaces: &'a AddressSpaces) -> StackScan<'a> {
        StackScan {
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

    /// The return addresses among `words` (stack words from the stack pointer up, of
    /// process `pid` at `time`), innermost first: up to and including the first into a
    /// function with a frame pointer, and before `walked` (the walk's first return
    /// address, when it has one) if that comes first.
    pub fn callers(
        &mut self,
        pid: u32,
        time: u64,
        words: impl IntoIterator<Item = u64>,
        walked: Option<u64>,
    ) -> Vec<u64> {
        let mut found = Vec::new();
        for w in words.into_iter().filter(|&w| w > 0xfff) {
            if Some(w) == walked {
                break;
            }
            match self.word(pid, time, w) {
                Word::Data => {}
                Word::Frameless => found.push(w),
                Word::Framed => {
                    found.push(w);
                    break;
                }
            }
        }
        found
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
        assert!(ends_with_call(&[0, 0, 0, 0xff, 0x55, 8]), "call *8(%rbp)");
        assert!(ends_with_call(&[0xff, 0x15, 1, 2, 3, 4]), "call *rel(%rip)");
        assert!(
            ends_with_call(&[0xff, 0x90, 1, 2, 3, 4]),
            "call *disp32(%rax)"
        );
        assert!(!ends_with_call(&[0, 0, 0, 0, 0xff, 0xe0]), "jmp *%rax");
        assert!(!ends_with_call(&[0x48, 0x89, 0xe5, 0x90, 0x90, 0x90]));
        assert!(!ends_with_call(&[]));
    }

    #[test]
    fn prologues_with_and_without_frame_pointer() {
        assert!(pushes_frame_pointer(&[0x55, 0x48, 0x89, 0xe5]));
        assert!(pushes_frame_pointer(&[0xf3, 0x0f, 0x1e, 0xfa, 0x55]));
        assert!(!pushes_frame_pointer(&[0x48, 0x89, 0xf0, 0x48, 0x85]));
        assert!(!pushes_frame_pointer(&[]));
    }

    #[test]
    fn without_mappings_no_word_is_a_caller() {
        let spaces = AddressSpaces::default();
        let mut scan = StackScan::new(&spaces);
        assert!(scan.callers(1, 5, [0x40_3000, 0x40_4000], None).is_empty());
        assert!(scan.callers(1, 5, [], Some(1)).is_empty());
    }
}
