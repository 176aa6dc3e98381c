//! The bytes of one futex tracepoint sample, and what a futex operation means. Samples carry
//! `TID | TIME | CALLCHAIN | RAW | REGS_USER | STACK_USER` (perf_event_open(2) gives their
//! order; the registers are `observe::unwind`'s three); the raw
//! record's first field (`common_type`) is the tracepoint id, which tells entries from exits.
//! Operation numbers are those of `linux/futex.h`. Pure: no system calls.

use crate::diagnose::observe::records::{ChainSample, chain_sample, u16_at, u64_at};
use crate::diagnose::observe::unwind::Regs;

/// Field offsets of the two futex tracepoints, read from their `format` files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Tracepoint id of `syscalls:sys_enter_futex`.
    pub enter: u64,
    /// Tracepoint id of `syscalls:sys_exit_futex`.
    pub exit: u64,
    /// Offset of `uaddr` in an entry record.
    pub uaddr: usize,
    /// Offset of `op`.
    pub op: usize,
    /// Offset of `uaddr2`.
    pub uaddr2: usize,
    /// Offset of `ret` in an exit record.
    pub ret: usize,
}

/// What a sample says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    /// A futex call began: its word, operation and second word.
    Enter {
        /// The futex word.
        uaddr: u64,
        /// The operation, flags included.
        op: u32,
        /// The second word (requeue and wake-op operations).
        uaddr2: u64,
    },
    /// A futex call returned this value.
    Exit {
        /// Return value (negative errno on failure).
        ret: i64,
    },
}

/// One parsed sample.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sample<'a> {
    /// Process id.
    pub pid: u32,
    /// Thread id.
    pub tid: u32,
    /// Kernel time, ns.
    pub time: u64,
    /// The call chain (context markers included), leaf first.
    pub chain: Vec<u64>,
    /// The call.
    pub call: Call,
    /// The user registers (`None` for a kernel thread, or when not recorded).
    pub regs: Option<Regs>,
    /// The user stack from the stack pointer up (empty for exits).
    pub stack: &'a [u8],
}

/// The user registers at `at` (`abi`, then the values when `abi` is not 0) and where the
/// stack copy starts.
fn regs_at(b: &[u8], at: usize) -> Option<(Option<Regs>, usize)> {
    if u64_at(b, at)? == 0 {
        return Some((None, at + 8));
    }
    let values = [u64_at(b, at + 8)?, u64_at(b, at + 16)?, u64_at(b, at + 24)?];
    Some((Regs::from_sample(&values), at + 32))
}

/// `FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME`: bits that do not change the operation.
const FLAGS: u32 = 128 | 256;

/// What an operation does to the calling thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpKind {
    /// It may block until woken: WAIT, WAIT_BITSET, LOCK_PI, LOCK_PI2, WAIT_REQUEUE_PI.
    Wait,
    /// It wakes waiters: WAKE, WAKE_BITSET, WAKE_OP, REQUEUE, CMP_REQUEUE, UNLOCK_PI,
    /// CMP_REQUEUE_PI.
    Wake,
    /// Anything else (TRYLOCK_PI, FD).
    Other,
}

/// The kind of operation `op`.
pub fn op_kind(op: u32) -> OpKind {
    match op & !FLAGS {
        0 | 6 | 9 | 11 | 13 => OpKind::Wait,
        1 | 3 | 4 | 5 | 7 | 10 | 12 => OpKind::Wake,
        _ => OpKind::Other,
    }
}

/// Whether `op` is a priority-inheritance lock (the kernel knows the owner).
pub fn is_pi(op: u32) -> bool {
    matches!(op & !FLAGS, 6 | 7 | 8 | 11 | 12 | 13)
}

/// Whether a waking `op` also wakes (or moves waiters to) its second word.
pub fn touches_uaddr2(op: u32) -> bool {
    matches!(op & !FLAGS, 3 | 4 | 5 | 12)
}

/// Parses a sample body (after the record header); `None` when it is not one of ours.
pub fn sample<'a>(b: &'a [u8], layout: &Layout) -> Option<Sample<'a>> {
    let ChainSample {
        pid,
        tid,
        time,
        chain,
        raw,
        rest: at,
    } = chain_sample(b)?;
    let id = u64::from(u16_at(raw, 0)?);
    let call = if id == layout.enter {
        Call::Enter {
            uaddr: u64_at(raw, layout.uaddr)?,
            op: u64_at(raw, layout.op)? as u32,
            uaddr2: u64_at(raw, layout.uaddr2)?,
        }
    } else if id == layout.exit {
        Call::Exit {
            ret: u64_at(raw, layout.ret)? as i64,
        }
    } else {
        return None;
    };
    let (regs, at) = regs_at(b, at)?;
    let size = usize::try_from(u64_at(b, at).unwrap_or(0)).ok()?;
    let stack = match (&call, size) {
        (Call::Enter { .. }, n) if n > 0 => {
            let dumped = b.get(at + 8..at + 8 + n)?;
            // The dump has `size` bytes; `dyn_size` after it says how many hold the stack.
            let dynamic = u64_at(b, at + 8 + n).map_or(n, |d| (d as usize).min(n));
            &dumped[..dynamic]
        }
        _ => &[][..],
    };
    Some(Sample {
        pid,
        tid,
        time,
        chain,
        call,
        regs,
        stack,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const LAYOUT: Layout = Layout {
        enter: 522,
        exit: 521,
        uaddr: 16,
        op: 24,
        uaddr2: 48,
        ret: 16,
    };

    fn body(chain: &[u64], raw: &[u8], stack: &[u8]) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend(7u32.to_ne_bytes());
        b.extend(9u32.to_ne_bytes());
        b.extend(1234u64.to_ne_bytes());
        b.extend((chain.len() as u64).to_ne_bytes());
        chain.iter().for_each(|c| b.extend(c.to_ne_bytes()));
        b.extend((raw.len() as u32).to_ne_bytes());
        b.extend(raw);
        // REGS_USER: abi 2 (64-bit), then bp, sp, ip.
        [2u64, 0x30, 0x20, 0x10]
            .iter()
            .for_each(|v| b.extend(v.to_ne_bytes()));
        b.extend((stack.len() as u64).to_ne_bytes());
        b.extend(stack);
        if !stack.is_empty() {
            b.extend((stack.len() as u64).to_ne_bytes());
        }
        b
    }

    fn raw(id: u16, fields: &[(usize, u64)]) -> Vec<u8> {
        let mut r = vec![0u8; 60];
        r[..2].copy_from_slice(&id.to_ne_bytes());
        for &(at, v) in fields {
            r[at..at + 8].copy_from_slice(&v.to_ne_bytes());
        }
        r
    }

    #[test]
    fn entries_and_exits_parse_with_the_format_offsets() {
        let enter = raw(522, &[(16, 0x1000), (24, 128), (48, 0x2000)]);
        let stack: Vec<u8> = [5u64, 6].iter().flat_map(|w| w.to_ne_bytes()).collect();
        let b = body(&[1, 2], &enter, &stack);
        let s = sample(&b, &LAYOUT).unwrap();
        assert_eq!(
            (s.pid, s.tid, s.time, s.chain.clone()),
            (7, 9, 1234, vec![1, 2])
        );
        assert_eq!(
            s.call,
            Call::Enter {
                uaddr: 0x1000,
                op: 128,
                uaddr2: 0x2000
            }
        );
        assert_eq!(s.stack, &stack[..]);
        let regs = s.regs.expect("registers");
        assert_eq!((regs.ip, regs.sp, regs.bp), (0x10, 0x20, 0x30));
        let exit = raw(521, &[(16, (-11i64) as u64)]);
        let exit_body = body(&[], &exit, &[]);
        let s = sample(&exit_body, &LAYOUT).unwrap();
        assert_eq!(s.call, Call::Exit { ret: -11 });
        assert!(sample(&body(&[], &raw(3, &[]), &[]), &LAYOUT).is_none());
        assert!(sample(&b[..20], &LAYOUT).is_none());
    }

    #[test]
    fn operations_are_classified_without_their_flags() {
        assert_eq!(op_kind(0), OpKind::Wait);
        assert_eq!(op_kind(128), OpKind::Wait);
        assert_eq!(op_kind(9 | 128 | 256), OpKind::Wait);
        assert_eq!(op_kind(129), OpKind::Wake);
        assert_eq!(op_kind(8), OpKind::Other);
        assert!(is_pi(6 | 128) && !is_pi(0));
        assert!(touches_uaddr2(5) && !touches_uaddr2(1));
    }
}
