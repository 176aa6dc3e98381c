//! A trace read while it runs: the calls tallied after the last drain, without stopping the
//! session (`observe::pump::Snapshot`), for a view that follows a trace live.

use super::super::summary::{CallKey, Collector};
use super::Calls;
use crate::diagnose::observe::pump::Snapshot;

/// The tally of one call so far.
#[derive(Debug, Clone, PartialEq)]
pub struct CallRow {
    /// Architecture and call number.
    pub key: CallKey,
    /// Completed calls.
    pub count: u64,
    /// Failed calls.
    pub errors: u64,
    /// Time in the call after overhead subtraction, ns.
    pub total_ns: f64,
}

/// What a reader sees of a running trace.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TraceView {
    /// The calls, most frequent first (then by key).
    pub calls: Vec<CallRow>,
    /// Completed calls in all.
    pub total: u64,
    /// Records lost to full rings so far.
    pub lost: u64,
}

impl Snapshot for Collector {
    type View = TraceView;

    fn snapshot(&self) -> TraceView {
        let mut calls: Vec<CallRow> = self
            .calls()
            .iter()
            .map(|(&key, s)| CallRow {
                key,
                count: s.count,
                errors: s.error_count(),
                total_ns: s.total_ns,
            })
            .collect();
        calls.sort_by(|a, b| b.count.cmp(&a.count).then(a.key.cmp(&b.key)));
        TraceView {
            total: self.total_calls(),
            calls,
            lost: 0,
        }
    }
}

impl Snapshot for Calls {
    type View = TraceView;

    fn snapshot(&self) -> TraceView {
        TraceView {
            lost: self.lost,
            ..self.collector.snapshot()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Ids, format};
    use super::*;
    use crate::diagnose::observe::pump::{Handler, Settle};
    use crate::diagnose::observe::records::{Record, Sample};

    const IDS: Ids = Ids {
        enter: 1,
        exit: 2,
        exit_id_offset: 8,
        exit_ret_offset: 16,
    };

    /// An entry (no raw record) or, with `exit = (nr, ret)`, an exit sample of thread 9.
    fn body(time: u64, exit: Option<(u64, i64)>) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend(7u32.to_ne_bytes());
        b.extend(9u32.to_ne_bytes());
        b.extend(time.to_ne_bytes());
        if let Some((nr, ret)) = exit {
            b.extend(24u32.to_ne_bytes());
            b.extend([0u8; 8]);
            b.extend(nr.to_ne_bytes());
            b.extend(ret.to_ne_bytes());
        }
        b
    }

    fn call(h: &mut Calls, enter: u64, nr: u64, ret: i64) {
        for b in [body(enter, None), body(enter + 50, Some((nr, ret)))] {
            h.record(Record::Sample(Sample::parse(&b, format()).unwrap()));
        }
    }

    fn drain(h: &mut Calls, last: bool) {
        h.settle(Settle { started: 0, last });
    }

    #[test]
    fn a_snapshot_mid_stream_leaves_the_trace_running() {
        let mut h = Calls::new(IDS, Vec::new(), Collector::new(None, 0.0));
        call(&mut h, 100, 0, 5);
        h.record(Record::Lost(3));
        drain(&mut h, false);
        let first = h.snapshot();
        assert_eq!((first.total, first.lost), (1, 3));
        assert_eq!((first.calls[0].count, first.calls[0].total_ns), (1, 50.0));
        call(&mut h, 200, 0, 5);
        call(&mut h, 300, 3, -9);
        drain(&mut h, true);
        let second = h.snapshot();
        assert_eq!(second.total, 3, "the session went on after the snapshot");
        assert_eq!((second.calls[0].count, second.calls[1].errors), (2, 1));
        assert_eq!(
            first.total, 1,
            "a snapshot is a value: later drains leave it as it was"
        );
        assert_eq!(h.collector.total_calls(), 3);
    }
}
