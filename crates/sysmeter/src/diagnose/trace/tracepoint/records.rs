//! The samples in the rings: a sample (thread, time and, for exits and path events, the raw
//! tracepoint record) read as an entry, an exit with its call number and return value, or a
//! path string. Pure.

use super::{Ids, PathEvent};
use crate::diagnose::observe::records::{Sample, u32_at, u64_at};

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Kind {
    Enter,
    /// Call number and return value.
    Exit(u64, i64),
    /// A path argument seen by a [`super::PathProbes`] probe before the call.
    Path(Vec<u8>),
}

/// One record.
#[derive(Debug, Clone)]
pub(super) struct Event {
    pub time: i64,
    pub tid: i32,
    pub kind: Kind,
}

/// The bytes of a `__data_loc char[]` field at `at` of raw record `raw` (offset and length
/// from the record's start in one u32), without the terminating NULs.
fn data_loc(raw: &[u8], at: usize) -> Option<Vec<u8>> {
    let loc = u32_at(raw, at)? as usize;
    let (start, len) = (loc & 0xffff, loc >> 16);
    let bytes = raw.get(start..start + len)?;
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    Some(bytes[..end].to_vec())
}

/// What one sample says: without a raw record an entry; with one an exit unless its type is
/// one of the path events.
pub(super) fn event(s: &Sample<'_>, (ids, paths): (Ids, &[PathEvent])) -> Option<Event> {
    let kind = match s.raw {
        Some(raw) => {
            let ty = u64::from(u16::from_ne_bytes(raw.get(..2)?.try_into().ok()?));
            match paths.iter().find(|p| p.id == ty) {
                Some(p) => Kind::Path(data_loc(raw, p.path_offset)?),
                None => Kind::Exit(
                    u64_at(raw, ids.exit_id_offset)?,
                    u64_at(raw, ids.exit_ret_offset)? as i64,
                ),
            }
        }
        None => Kind::Enter,
    };
    Some(Event {
        time: s.time as i64,
        tid: s.tid as i32,
        kind,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sample body read as the rings read it, then as an event.
    fn parse_sample(b: &[u8], ids: (Ids, &[PathEvent])) -> Option<Event> {
        event(&Sample::parse(b, super::super::format())?, ids)
    }

    #[test]
    fn samples_parse_with_offsets_from_the_format() {
        let ids = Ids {
            enter: 1,
            exit: 2,
            exit_id_offset: 8,
            exit_ret_offset: 16,
        };
        let mut b = Vec::new();
        b.extend(7u32.to_ne_bytes()); // pid
        b.extend(9u32.to_ne_bytes()); // tid
        b.extend(1234u64.to_ne_bytes()); // time
        b.extend(28u32.to_ne_bytes()); // raw size
        b.extend([0u8; 8]); // common fields
        b.extend(3u64.to_ne_bytes()); // id
        b.extend((-9i64).to_ne_bytes()); // ret
        b.extend([0u8; 4]); // padding: the size counts it, so the body ends 8-aligned
        let e = parse_sample(&b, (ids, &[])).unwrap();
        assert_eq!((e.tid, e.time, e.kind), (9, 1234, Kind::Exit(3, -9)));
        let e = parse_sample(&b[..16], (ids, &[])).unwrap();
        assert_eq!(e.kind, Kind::Enter);
        assert!(parse_sample(&b[..20], (ids, &[])).is_none());
    }

    #[test]
    fn path_samples_carry_the_string() {
        let ids = Ids {
            enter: 1,
            exit: 2,
            exit_id_offset: 8,
            exit_ret_offset: 16,
        };
        let path = PathEvent {
            id: 77,
            path_offset: 16,
        };
        let mut raw = Vec::new();
        raw.extend(77u16.to_ne_bytes()); // common_type
        raw.extend([0u8; 14]); // flags, pid, __probe_ip
        raw.extend(((5u32 << 16) | 20).to_ne_bytes()); // __data_loc: 5 bytes at 20
        raw.extend(b"/a/b\0");
        let mut b = Vec::new();
        b.extend(7u32.to_ne_bytes());
        b.extend(9u32.to_ne_bytes());
        b.extend(55u64.to_ne_bytes());
        b.extend((raw.len() as u32).to_ne_bytes());
        b.extend(&raw);
        let e = parse_sample(&b, (ids, &[path])).unwrap();
        assert_eq!((e.tid, e.kind), (9, Kind::Path(b"/a/b".to_vec())));
        // Not a path event: read as an exit.
        assert!(matches!(
            parse_sample(&b, (ids, &[])).unwrap().kind,
            Kind::Exit(..)
        ));
    }
}
