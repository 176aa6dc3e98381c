//! The user stack of a futex call, with the frames a frame-pointer walk loses. glibc is built
//! without frame pointers, so at a futex system call the kernel's walk goes from the libc
//! leaf (`__lll_lock_wait`) to the caller's *caller*: the function that took the lock is
//! missing (DEPENDENCIES.md §5b). The stack copied with each entry holds the lost return
//! addresses; a word counts as one when it points into an executable mapping just after a
//! call instruction (`call rel32`, `call *disp32(%rip)`, `call *%reg`, `call *disp8(%reg)`,
//! `call *disp32(%reg)`) — the "stack scanning" of crash reporters. The words found before
//! the walk's first return address fill the gap between the leaf and it. A stale return
//! address left in an unused stack slot can pass the test; that is this method's limit
//! (stated in docs/offcpu.md).

use std::collections::HashMap;

use super::events::SCAN_MARK;
use crate::diagnose::observe::maps::{AddressSpaces, Location};
use crate::diagnose::observe::records::frames;
use crate::diagnose::observe::symbolize::read_bytes;

/// Whether the code bytes just before a return address end with a call instruction.
pub fn ends_with_call(code: &[u8]) -> bool {
    let n = code.len();
    let at = |back: usize| n.checked_sub(back).and_then(|i| code.get(i).copied());
    // call rel32: e8 xx xx xx xx
    if at(5) == Some(0xe8) {
        return true;
    }
    // call *disp32(%rip) / *disp32(%reg): ff 15|9x xx xx xx xx
    if at(6) == Some(0xff) && at(5).is_some_and(|m| m == 0x15 || (0x90..=0x97).contains(&m)) {
        return true;
    }
    // call *disp8(%reg): ff 5x xx
    if at(3) == Some(0xff) && at(2).is_some_and(|m| (0x50..=0x57).contains(&m)) {
        return true;
    }
    // call *%reg: ff d0..d7 (with an optional REX prefix before it)
    at(2) == Some(0xff) && at(1).is_some_and(|m| (0xd0..=0xd7).contains(&m))
}

/// Recovers user stacks, remembering which addresses passed the call test.
pub struct Unwinder<'a> {
    spaces: &'a AddressSpaces,
    calls: HashMap<Location, bool>,
}

impl<'a> Unwinder<'a> {
    /// An unwinder over these address spaces.
    pub fn new(spaces: &'a AddressSpaces) -> Unwinder<'a> {
        Unwinder {
            spaces,
            calls: HashMap::new(),
        }
    }

    fn is_return_address(&mut self, loc: Location) -> bool {
        if let Some(&known) = self.calls.get(&loc) {
            return known;
        }
        let path = &self.spaces.modules()[loc.module as usize];
        let ok = loc.offset >= 6
            && read_bytes(path, loc.offset - 6, 6).is_some_and(|code| ends_with_call(&code));
        self.calls.insert(loc, ok);
        ok
    }

    /// The user stack of `chain` (as `events` interned it) in process `pid` at `time`,
    /// leaf first: the sampled instruction, then return addresses.
    pub fn user_stack(&mut self, pid: u32, time: u64, chain: &[u64]) -> Vec<u64> {
        let split = chain.iter().position(|&w| w == SCAN_MARK);
        let (walked, scanned) = match split {
            Some(i) => (&chain[..i], &chain[i + 1..]),
            None => (chain, &[][..]),
        };
        let walked: Vec<u64> = frames(walked)
            .into_iter()
            .filter(|(_, kernel)| !kernel)
            .map(|(a, _)| a)
            .collect();
        let Some((&leaf, rest)) = walked.split_first() else {
            return Vec::new();
        };
        let spaces = self.spaces;
        let found: Vec<u64> = scanned
            .iter()
            .copied()
            .filter(|&w| {
                spaces
                    .lookup(pid, time, w)
                    .is_some_and(|loc| self.is_return_address(loc))
            })
            .collect();
        let gap = match rest.first() {
            Some(first) => found.iter().position(|w| w == first).unwrap_or(found.len()),
            None => found.len(),
        };
        let mut stack = vec![leaf];
        stack.extend(&found[..gap]);
        stack.extend(rest);
        stack.dedup();
        stack
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::observe::records::PERF_CONTEXT_USER;

    #[test]
    fn call_instructions_are_recognised_before_a_return_address() {
        assert!(ends_with_call(&[0x90, 0xe8, 1, 2, 3, 4]));
        assert!(ends_with_call(&[0xff, 0x15, 1, 2, 3, 4]));
        assert!(ends_with_call(&[0, 0, 0, 0xff, 0x55, 8]));
        assert!(ends_with_call(&[0, 0, 0, 0, 0xff, 0xd0]));
        assert!(!ends_with_call(&[0x48, 0x89, 0xe5, 0x5d, 0xc3, 0x90]));
        assert!(!ends_with_call(&[]));
    }

    #[test]
    fn without_mappings_only_the_walked_frames_remain() {
        let spaces = AddressSpaces::default();
        let mut u = Unwinder::new(&spaces);
        let chain = [PERF_CONTEXT_USER, 0x10, 0x20, SCAN_MARK, 0x30, 0x20];
        assert_eq!(u.user_stack(1, 5, &chain), vec![0x10, 0x20]);
        assert!(u.user_stack(1, 5, &[SCAN_MARK]).is_empty());
    }
}
