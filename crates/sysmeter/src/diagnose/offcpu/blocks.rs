//! Blocked intervals from switch records (pure): a switch-out of a thread and its next
//! switch-in make one interval; the last waking of that thread inside the interval is its
//! waker. A switch-out without a later switch-in (the thread exited, or was still off the
//! CPU when recording stopped) makes no interval and is counted; so is a switch-in without
//! a switch-out (a thread already blocked when `-p` attached). Also the span of each
//! thread (first to last record, or its start and exit records) for the wall-time
//! accounting of `--both`.

use std::collections::HashMap;

use super::raw::OffRaw;

/// One blocked interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Block {
    /// Index of the switch-out in [`OffRaw::outs`].
    pub out: usize,
    /// Time off the CPU, ns.
    pub ns: u64,
    /// Index of the waking in [`OffRaw::wakings`], if one was seen.
    pub waker: Option<usize>,
}

/// The intervals and what could not be paired.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Blocks {
    /// Complete intervals, in no particular order.
    pub list: Vec<Block>,
    /// Switch-outs never followed by a switch-in.
    pub unfinished: u64,
    /// Switch-ins without a switch-out before them.
    pub unmatched_ins: u64,
}

#[derive(Clone, Copy)]
enum Ev {
    Out(usize),
    In,
}

/// Pairs the switch records of every thread of `raw`.
pub fn pair(raw: &OffRaw) -> Blocks {
    let mut per_tid: HashMap<u32, Vec<(u64, Ev)>> = HashMap::new();
    for (i, o) in raw.outs.iter().enumerate() {
        per_tid.entry(o.tid).or_default().push((o.time, Ev::Out(i)));
    }
    for &(tid, time) in &raw.ins {
        per_tid.entry(tid).or_default().push((time, Ev::In));
    }
    let mut wakings: HashMap<u32, Vec<(u64, usize)>> = HashMap::new();
    for (i, w) in raw.wakings.iter().enumerate() {
        wakings.entry(w.arg as u32).or_default().push((w.time, i));
    }
    for list in wakings.values_mut() {
        list.sort_unstable();
    }
    let mut blocks = Blocks::default();
    for (tid, mut events) in per_tid {
        // A switch-out sample precedes its switch-out record and the switch-in follows.
        events.sort_by_key(|&(t, e)| (t, matches!(e, Ev::In)));
        let mut open: Option<(u64, usize)> = None;
        for (time, ev) in events {
            match (ev, open) {
                (Ev::Out(i), previous) => {
                    blocks.unfinished += u64::from(previous.is_some());
                    open = Some((time, i));
                }
                (Ev::In, Some((start, out))) => {
                    let waker = last_waking(wakings.get(&tid), start, time);
                    let ns = time.saturating_sub(start);
                    blocks.list.push(Block { out, ns, waker });
                    open = None;
                }
                (Ev::In, None) => blocks.unmatched_ins += 1,
            }
        }
        blocks.unfinished += u64::from(open.is_some());
    }
    blocks
}

fn last_waking(list: Option<&Vec<(u64, usize)>>, from: u64, to: u64) -> Option<usize> {
    let list = list?;
    let end = list.partition_point(|&(t, _)| t <= to);
    list[..end]
        .last()
        .filter(|&&(t, _)| t >= from)
        .map(|&(_, i)| i)
}

/// First and last time each thread was seen: its start (FORK or exec) or first record,
/// and its exit or last record.
pub fn spans(raw: &OffRaw, extra: &[(u32, u64)]) -> HashMap<u32, (u64, u64)> {
    let mut spans: HashMap<u32, (u64, u64)> = HashMap::new();
    let mut see = |tid: u32, t: u64| {
        let e = spans.entry(tid).or_insert((t, t));
        e.0 = e.0.min(t);
        e.1 = e.1.max(t);
    };
    let times = raw.outs.iter().map(|o| (o.tid, o.time));
    let execs = raw.side.execs.iter().map(|e| (e.pid, e.time));
    for (tid, t) in times
        .chain(raw.ins.iter().copied())
        .chain(raw.starts.iter().copied())
        .chain(raw.exits.iter().copied())
        .chain(execs)
        .chain(extra.iter().copied())
    {
        if t > 0 {
            see(tid, t);
        }
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::super::raw::Switch;
    use super::*;

    fn switch(tid: u32, time: u64, arg: i64) -> Switch {
        Switch {
            pid: 1,
            tid,
            time,
            chain: Vec::new(),
            arg,
            stack: None,
        }
    }

    #[test]
    fn outs_and_ins_pair_per_thread_with_the_last_waker() {
        let mut raw = OffRaw::default();
        raw.outs = vec![
            switch(7, 100, 1),
            switch(7, 500, 1),
            switch(8, 120, 1),
            switch(7, 900, 1),
        ];
        raw.ins = vec![(7, 300), (8, 50), (7, 650), (8, 400)];
        raw.wakings = vec![switch(9, 250, 7), switch(9, 280, 7), switch(9, 600, 8)];
        let b = pair(&raw);
        let mut list = b.list.clone();
        list.sort_by_key(|b| b.out);
        assert_eq!(list.len(), 3);
        assert_eq!(
            list[0],
            Block {
                out: 0,
                ns: 200,
                waker: Some(1)
            }
        );
        assert_eq!(
            list[1],
            Block {
                out: 1,
                ns: 150,
                waker: None
            }
        );
        assert_eq!(
            list[2],
            Block {
                out: 2,
                ns: 280,
                waker: None
            },
            "waking after the switch-in"
        );
        assert_eq!(b.unfinished, 1);
        assert_eq!(b.unmatched_ins, 1);
        let s = spans(&raw, &[(8, 10)]);
        assert_eq!(s[&7], (100, 900));
        assert_eq!(s[&8], (10, 400));
    }
}
