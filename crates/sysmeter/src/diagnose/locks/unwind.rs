//! The user stack of a futex call: the drain (`events`) already replaced the user part of
//! every entry's chain by the stack `observe::unwind` recovered from its registers and stack
//! copy (glibc keeps no frame pointers, so the kernel's walk alone would go from the libc
//! leaf to the caller's caller). What is left here is taking the user frames out of it.

use crate::diagnose::observe::records::frames;

/// The user stack of `chain` (as `events` interned it), leaf first: the sampled
/// instruction, then return addresses.
pub fn user_stack(chain: &[u64]) -> Vec<u64> {
    frames(chain)
        .into_iter()
        .filter(|(_, kernel)| !kernel)
        .map(|(a, _)| a)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::observe::records::{PERF_CONTEXT_KERNEL, PERF_CONTEXT_USER};

    #[test]
    fn only_user_frames_remain() {
        let chain = [
            PERF_CONTEXT_KERNEL,
            0xffff_0001,
            PERF_CONTEXT_USER,
            0x10,
            0x20,
        ];
        assert_eq!(user_stack(&chain), vec![0x10, 0x20]);
        assert!(user_stack(&[]).is_empty());
    }
}
