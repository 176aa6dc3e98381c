//! The user stack of a futex call, with the frames a frame-pointer walk loses. glibc is built
//! without frame pointers, so at a futex system call the kernel's walk goes from the libc
//! leaf (`__lll_lock_wait`) to the caller's *caller*: the function that took the lock is
//! missing. The candidate words copied with each entry (`events`) go through the one stack
//! scan of `observe::scan`; the return addresses it finds fill the gap between the leaf and
//! the walk's first return address.

use super::events::SCAN_MARK;
use crate::diagnose::observe::records::frames;
use crate::diagnose::observe::scan::StackScan;

/// The user stack of `chain` (as `events` interned it) in process `pid` at `time`, leaf
/// first: the sampled instruction, then return addresses.
pub fn user_stack(scan: &mut StackScan<'_>, (pid, time): (u32, u64), chain: &[u64]) -> Vec<u64> {
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
    let found = scan.callers(pid, time, scanned.iter().copied(), rest.first().copied());
    let mut stack = vec![leaf];
    stack.extend(found);
    stack.extend(rest);
    stack.dedup();
    stack
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::observe::maps::AddressSpaces;
    use crate::diagnose::observe::records::PERF_CONTEXT_USER;

    #[test]
    fn without_mappings_only_the_walked_frames_remain() {
        let spaces = AddressSpaces::default();
        let mut scan = StackScan::new(&spaces);
        let chain = [PERF_CONTEXT_USER, 0x10, 0x20, SCAN_MARK, 0x30, 0x20];
        assert_eq!(user_stack(&mut scan, (1, 5), &chain), vec![0x10, 0x20]);
        assert!(user_stack(&mut scan, (1, 5), &[SCAN_MARK]).is_empty());
    }
}
