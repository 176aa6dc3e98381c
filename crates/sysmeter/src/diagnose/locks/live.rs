//! A `locks` recording read while it runs: the waits paired from the calls read so far, at
//! any drain, without stopping the session (`observe::pump::Snapshot`), for a view that
//! follows the contention live. Pairing works on a copy: the recording goes on untouched.

use super::events::Recorded;
use super::waits::{Paired, pair};
use crate::diagnose::observe::pump::Snapshot;

/// What a reader sees of a running `locks` session.
#[derive(Debug, Clone, Default)]
pub struct LocksView {
    /// The waits completed so far, with their wakers.
    pub paired: Paired,
    /// Futex entries and exits read so far.
    pub events: usize,
    /// Records lost to full rings so far.
    pub lost: u64,
}

impl Snapshot for Recorded {
    type View = LocksView;

    fn snapshot(&self) -> LocksView {
        let mut events = self.events.clone();
        LocksView {
            paired: pair(&mut events),
            events: events.len(),
            lost: self.lost,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::observe::pump::{Handler, Settle};
    use crate::diagnose::observe::records::{Record, Sample};
    use crate::diagnose::observe::rings::stack_sampled_format;

    use crate::diagnose::locks::parse::Layout;

    const LAYOUT: Layout = Layout {
        enter: 522,
        exit: 521,
        uaddr: 16,
        op: 24,
        uaddr2: 32,
        ret: 16,
    };

    /// A futex sample of thread `tid` at `time`: an entry of `op` on word 0x1000, or an exit.
    fn body(tid: u32, time: u64, op: Option<u64>) -> Vec<u8> {
        let mut raw = vec![0u8; 40];
        let id: u16 = if op.is_some() { 522 } else { 521 };
        raw[..2].copy_from_slice(&id.to_ne_bytes());
        let fields = match op {
            Some(op) => [(16, 0x1000), (24, op)],
            None => [(16, 0), (24, 0)],
        };
        for (at, v) in fields {
            raw[at..at + 8].copy_from_slice(&u64::to_ne_bytes(v));
        }
        let mut b = Vec::new();
        b.extend(7u32.to_ne_bytes());
        b.extend(tid.to_ne_bytes());
        b.extend(time.to_ne_bytes());
        b.extend(0u64.to_ne_bytes()); // no call chain
        b.extend((raw.len() as u32).to_ne_bytes());
        b.extend(&raw);
        b.extend([0u64, 0].iter().flat_map(|v| v.to_ne_bytes())); // no registers, no stack
        b
    }

    /// Thread `tid` waits on the word from `at` for 100 ns; thread 2 wakes it meanwhile.
    fn wait(h: &mut Recorded, tid: u32, at: u64) {
        let bodies = [
            body(tid, at, Some(0)),
            body(2, at + 10, Some(1)),
            body(2, at + 20, None),
            body(tid, at + 100, None),
        ];
        for b in &bodies {
            h.record(Record::Sample(
                Sample::parse(b, stack_sampled_format()).unwrap(),
            ));
        }
        h.settle(Settle {
            started: 0,
            last: false,
        });
    }

    #[test]
    fn a_snapshot_mid_stream_leaves_the_recording_running() {
        let mut h = Recorded::default().reading(LAYOUT);
        wait(&mut h, 9, 1000);
        let first = h.snapshot();
        assert_eq!((first.paired.waits.len(), first.events), (1, 4));
        assert_eq!(first.paired.waits[0].ns(), 100);
        assert_eq!(first.paired.waits[0].waker.map(|w| w.0), Some(2));
        h.record(Record::Lost(5));
        wait(&mut h, 9, 2000);
        let second = h.snapshot();
        assert_eq!((second.paired.waits.len(), second.lost), (2, 5));
        assert_eq!(
            first.paired.waits.len(),
            1,
            "the first view stays as it was"
        );
        assert_eq!(
            h.events.len(),
            8,
            "snapshots copy: the recording keeps every event"
        );
    }
}
