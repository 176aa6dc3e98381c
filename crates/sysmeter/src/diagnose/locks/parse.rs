//! The raw record of one futex tracepoint sample, and what a futex operation means. The
//! samples themselves (`TID | TIME | CALLCHAIN | RAW | REGS_USER | STACK_USER`) are read by
//! `observe::records`; the raw record's first field (`common_type`) is the tracepoint id,
//! which tells entries from exits. Operation numbers are those of `linux/futex.h`. Pure: no
//! system calls.

use crate::diagnose::observe::records::{u16_at, u64_at};

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

/// The call a futex sample's raw record `raw` says; `None` when it is not one of ours.
pub fn call(raw: &[u8], layout: &Layout) -> Option<Call> {
    let id = u64::from(u16_at(raw, 0)?);
    if id == layout.enter {
        Some(Call::Enter {
            uaddr: u64_at(raw, layout.uaddr)?,
            op: u64_at(raw, layout.op)? as u32,
            uaddr2: u64_at(raw, layout.uaddr2)?,
        })
    } else if id == layout.exit {
        Some(Call::Exit {
            ret: u64_at(raw, layout.ret)? as i64,
        })
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::observe::records::Sample;
    use crate::diagnose::observe::rings::stack_sampled_format;

    /// A sample body read as the rings read it, with its call.
    fn sample<'a>(b: &'a [u8], layout: &Layout) -> Option<(Sample<'a>, Call)> {
        let s = Sample::parse(b, stack_sampled_format())?;
        Some((s, call(s.raw?, layout)?))
    }

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
        let (s, call) = sample(&b, &LAYOUT).unwrap();
        assert_eq!(
            (s.pid, s.tid, s.time, s.chain.to_vec()),
            (7, 9, 1234, vec![1, 2])
        );
        assert_eq!(
            call,
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
        let (_, call) = sample(&exit_body, &LAYOUT).unwrap();
        assert_eq!(call, Call::Exit { ret: -11 });
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
