//! The stack of a switch-out with the callers a frame-pointer walk loses put back: the words
//! between the stack pointer and the frame pointer at the kernel entry go through the one
//! stack scan of `observe::scan`, and the return addresses it finds are inserted between the
//! user leaf and the walked frames, innermost first.

use super::raw::UserStack;
use crate::diagnose::observe::records::PERF_CONTEXT_USER;
use crate::diagnose::observe::scan::StackScan;

/// `chain` with the return addresses found between `stack.sp` and `stack.bp` inserted
/// after the user leaf.
pub fn repair(
    scan: &mut StackScan<'_>,
    (pid, time): (u32, u64),
    chain: &[u64],
    stack: &UserStack,
) -> Vec<u64> {
    let Some(user) = chain.iter().position(|&e| e == PERF_CONTEXT_USER) else {
        return chain.to_vec();
    };
    if user + 1 >= chain.len() || stack.bp <= stack.sp {
        return chain.to_vec();
    }
    let below_bp = ((stack.bp - stack.sp) / 8) as usize;
    let words = stack.words.iter().take(below_bp).copied();
    let found = scan.callers(pid, time, words, chain.get(user + 2).copied());
    let mut out = Vec::with_capacity(chain.len() + found.len());
    out.extend_from_slice(&chain[..user + 2]);
    out.extend(found);
    out.extend_from_slice(&chain[user + 2..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::observe::maps::AddressSpaces;

    #[test]
    fn nothing_changes_without_a_user_part_or_a_frame() {
        let spaces = AddressSpaces::new(&[], &[], &[]);
        let mut scan = StackScan::new(&spaces);
        let chain = [1, 2, 3];
        let stack = UserStack {
            sp: 100,
            bp: 50,
            words: vec![5],
        };
        assert_eq!(repair(&mut scan, (1, 1), &chain, &stack), chain.to_vec());
        let chain = [PERF_CONTEXT_USER, 0x40_1000, 0x40_2000];
        let stack = UserStack {
            sp: 100,
            bp: 116,
            words: vec![0x40_3000, 0x40_4000, 0x40_5000],
        };
        // No mapping: no word is a return address.
        assert_eq!(repair(&mut scan, (1, 1), &chain, &stack), chain.to_vec());
    }
}
