//! From futex entries and exits to waits and their wakers. Events are merged by time (a
//! thread may enter on one CPU's ring and leave on another's) and paired per thread: a
//! waiting operation's entry and exit make one [`Wait`] of `exit − entry`; a waking
//! operation is kept with its call chain. A wait that returned 0 was woken: its waker is the
//! last other thread that called a waking operation on the same word (in the same process)
//! between the wait's entry and exit — the thread that released the lock, at the place it
//! released it. A wait with no such call was woken by the kernel (a thread's exit clears its
//! tid word for `pthread_join`), by a timeout or by a signal. Pure.

use std::collections::HashMap;

use super::events::Event;
use super::parse::Call as CallData;
use super::parse::{OpKind, op_kind, touches_uaddr2};

/// One blocking futex call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wait {
    /// Process id.
    pub pid: u32,
    /// Thread id.
    pub tid: u32,
    /// The futex word.
    pub uaddr: u64,
    /// The operation.
    pub op: u32,
    /// Entry time, ns.
    pub enter: u64,
    /// Exit time, ns.
    pub exit: u64,
    /// Return value.
    pub ret: i64,
    /// Chain of the entry.
    pub chain: u32,
    /// The waker: thread and the chain of its waking call.
    pub waker: Option<(u32, u32)>,
}

impl Wait {
    /// Time blocked, ns.
    pub fn ns(&self) -> u64 {
        self.exit.saturating_sub(self.enter)
    }
}

#[derive(Debug, Clone, Copy)]
struct Wake {
    tid: u32,
    time: u64,
    chain: u32,
}

/// What pairing found.
#[derive(Debug, Clone, Default)]
pub struct Paired {
    /// Every completed wait, in exit order.
    pub waits: Vec<Wait>,
    /// Waking calls seen.
    pub wakes: u64,
    /// Futex calls of any kind seen (entries).
    pub calls: u64,
}

/// Pairs `events` (sorted here) into waits with their wakers.
pub fn pair(events: &mut [Event]) -> Paired {
    events.sort_by_key(|e| e.time);
    let mut open: HashMap<u32, Event> = HashMap::new();
    let mut wakes: HashMap<(u32, u64), Vec<Wake>> = HashMap::new();
    let mut out = Paired::default();
    for e in events.iter() {
        match e.call {
            CallData::Enter { uaddr, op, uaddr2 } => {
                out.calls += 1;
                if op_kind(op) == OpKind::Wake {
                    out.wakes += 1;
                    let w = Wake {
                        tid: e.tid,
                        time: e.time,
                        chain: e.chain,
                    };
                    wakes.entry((e.pid, uaddr)).or_default().push(w);
                    if touches_uaddr2(op) {
                        wakes.entry((e.pid, uaddr2)).or_default().push(w);
                    }
                }
                open.insert(e.tid, *e);
            }
            CallData::Exit { ret } => {
                let Some(entry) = open.remove(&e.tid) else {
                    continue;
                };
                if let CallData::Enter { uaddr, op, .. } = entry.call
                    && op_kind(op) == OpKind::Wait
                {
                    out.waits.push(Wait {
                        pid: entry.pid,
                        tid: entry.tid,
                        uaddr,
                        op,
                        enter: entry.time,
                        exit: e.time,
                        ret,
                        chain: entry.chain,
                        waker: None,
                    });
                }
            }
        }
    }
    attribute(&mut out.waits, &wakes);
    out
}

/// Gives each wait that was woken (returned 0) the last other thread that called a waking
/// operation on its word while it waited.
fn attribute(waits: &mut [Wait], wakes: &HashMap<(u32, u64), Vec<Wake>>) {
    for w in waits.iter_mut() {
        if w.ret != 0 {
            continue;
        }
        let Some(list) = wakes.get(&(w.pid, w.uaddr)) else {
            continue;
        };
        let upto = list.partition_point(|k| k.time <= w.exit);
        w.waker = list[..upto]
            .iter()
            .rev()
            .take_while(|k| k.time >= w.enter)
            .find(|k| k.tid != w.tid)
            .map(|k| (k.tid, k.chain));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enter(tid: u32, time: u64, uaddr: u64, op: u32, chain: u32) -> Event {
        Event {
            pid: 1,
            tid,
            time,
            call: CallData::Enter {
                uaddr,
                op,
                uaddr2: 0,
            },
            chain,
        }
    }

    fn exit(tid: u32, time: u64, ret: i64) -> Event {
        Event {
            pid: 1,
            tid,
            time,
            call: CallData::Exit { ret },
            chain: u32::MAX,
        }
    }

    #[test]
    fn waits_pair_across_rings_and_find_their_waker() {
        // Out of time order, as two rings deliver them.
        let mut events = vec![
            exit(2, 50, 0),
            enter(2, 10, 0x100, 128, 7),
            enter(3, 40, 0x100, 129, 8),
            exit(3, 41, 1),
            enter(4, 45, 0x100, 129, 9),
            exit(4, 46, 0),
            // A wait that found the word changed (EAGAIN): no waker.
            enter(5, 60, 0x100, 128, 7),
            exit(5, 61, -11),
            // A wake before the wait began does not count.
            enter(6, 70, 0x200, 0, 3),
            exit(6, 90, 0),
        ];
        let p = pair(&mut events);
        assert_eq!((p.calls, p.wakes, p.waits.len()), (5, 2, 3));
        let w = p.waits[0];
        assert_eq!((w.tid, w.ns(), w.chain, w.waker), (2, 40, 7, Some((4, 9))));
        assert_eq!(p.waits[1].waker, None);
        assert_eq!(p.waits[2].waker, None);
    }

    #[test]
    fn a_thread_does_not_wake_itself_and_wakes_are_kept_per_word() {
        let mut events = vec![
            enter(2, 10, 0x100, 0, 1),
            enter(3, 20, 0x300, 1, 2),
            exit(3, 21, 0),
            exit(2, 30, 0),
        ];
        let p = pair(&mut events);
        assert_eq!(p.waits[0].waker, None);
    }
}
