//! The typed record read from bodies laid out as perf_event_open(2) says.

use super::*;

fn words(b: &mut Vec<u8>, values: &[u64]) {
    values.iter().for_each(|v| b.extend(v.to_ne_bytes()));
}

fn who(b: &mut Vec<u8>, pid: u32, tid: u32, time: u64) {
    b.extend(pid.to_ne_bytes());
    b.extend(tid.to_ne_bytes());
    b.extend(time.to_ne_bytes());
}

const STACKED: Format = Format {
    identifier: false,
    ip: false,
    callchain: true,
    raw: true,
    regs: 3,
    stack: true,
};

fn parsed(b: &[u8], f: Format) -> Sample<'_> {
    match Record::parse(RECORD_SAMPLE, 0, b, f) {
        Some(Record::Sample(s)) => s,
        other => panic!("not a sample: {other:?}"),
    }
}

#[test]
fn a_stack_sampled_body_gives_every_field() {
    let mut b = Vec::new();
    who(&mut b, 7, 9, 1234);
    words(&mut b, &[2, 11, 22]); // nr, chain
    b.extend(4u32.to_ne_bytes());
    b.extend([1, 2, 3, 4]); // raw
    words(&mut b, &[2, 0x30, 0x20, 0x10]); // abi, bp, sp, ip
    words(&mut b, &[16, 5, 6, 8]); // size, 16 bytes, dyn_size 8
    let s = parsed(&b, STACKED);
    assert_eq!((s.pid, s.tid, s.time), (7, 9, 1234));
    assert_eq!(s.chain.to_vec(), vec![11, 22]);
    assert_eq!(s.raw, Some(&[1u8, 2, 3, 4][..]));
    let regs = s.regs.expect("registers");
    assert_eq!((regs.bp, regs.sp, regs.ip), (0x30, 0x20, 0x10));
    assert_eq!(s.stack, &5u64.to_ne_bytes()[..], "dyn_size cuts the copy");
    assert!(Record::parse(RECORD_SAMPLE, 0, &b[..30], STACKED) == Some(Record::Unparsed));
}

#[test]
fn an_empty_stack_has_no_dyn_size_and_a_kernel_thread_no_registers() {
    let mut b = Vec::new();
    who(&mut b, 0, 0, 5);
    words(&mut b, &[0]); // no chain
    b.extend(0u32.to_ne_bytes()); // empty raw
    words(&mut b, &[0, 0]); // abi 0: no registers; stack size 0, no dyn_size
    let s = parsed(&b, STACKED);
    assert!(s.chain.is_empty() && s.regs.is_none() && s.stack.is_empty());
}

#[test]
fn fields_the_body_ends_before_are_absent() {
    let f = Format::of(SampleFlag::TID | SampleFlag::TIME | SampleFlag::RAW, 0);
    let mut b = Vec::new();
    who(&mut b, 1, 2, 3);
    assert_eq!(
        parsed(&b, f).raw,
        None,
        "an entry of trace carries no raw record"
    );
    b.extend(2u32.to_ne_bytes());
    b.extend([9, 9]);
    assert_eq!(parsed(&b, f).raw, Some(&[9u8, 9][..]));
}

#[test]
fn the_identifier_and_ip_come_first() {
    let f = Format::of(SampleFlag::IDENTIFIER | SampleFlag::IP | SampleFlag::TID, 0);
    let mut b = Vec::new();
    words(&mut b, &[77, 0x400]);
    who(&mut b, 5, 6, 999);
    let s = parsed(&b, f);
    assert_eq!((s.id, s.ip, s.tid, s.time), (Some(77), Some(0x400), 6, 999));
}

fn trailer(b: &mut Vec<u8>, tid: u32, time: u64) {
    who(b, 1, tid, time);
}

#[test]
fn side_band_records_are_typed() {
    let mut m = Vec::new();
    m.extend(4u32.to_ne_bytes());
    m.extend(4u32.to_ne_bytes());
    words(&mut m, &[0x1000, 0x2000, 0x3000, 0, 0, 0, 0]); // addr, len, pgoff, ids, prot+flags
    m.extend(b"/bin/x\0\0");
    trailer(&mut m, 4, 50);
    let path = &b"/bin/x"[..];
    let want = Record::Mmap2 {
        pid: 4,
        time: 50,
        start: 0x1000,
        len: 0x2000,
        pgoff: 0x3000,
        path,
    };
    assert_eq!(
        Record::parse(RECORD_MMAP2, 0, &m, Format::default()),
        Some(want)
    );
    let mut c = Vec::new();
    c.extend(4u32.to_ne_bytes());
    c.extend(5u32.to_ne_bytes());
    c.extend(b"dd\0\0\0\0\0\0");
    trailer(&mut c, 5, 60);
    let comm = Record::parse(RECORD_COMM, MISC_COMM_EXEC, &c, Format::default());
    let (name, exec) = (&b"dd"[..], true);
    let want = Record::Comm {
        pid: 4,
        tid: 5,
        name,
        exec,
        time: 60,
    };
    assert_eq!(comm, Some(want));
}

#[test]
fn forks_exits_switches_and_losses_are_typed() {
    let mut f = Vec::new();
    [4u32, 3, 8, 3]
        .iter()
        .for_each(|v| f.extend(v.to_ne_bytes()));
    words(&mut f, &[70]);
    trailer(&mut f, 8, 70);
    let none = Format::default();
    let (pid, ppid, tid, time) = (4, 3, 8, 70);
    let fork = Record::Fork {
        pid,
        ppid,
        tid,
        time,
    };
    assert_eq!(Record::parse(RECORD_FORK, 0, &f, none), Some(fork));
    let exit = Record::Exit { pid, tid, time };
    assert_eq!(Record::parse(RECORD_EXIT, 0, &f, none), Some(exit));
    let mut s = Vec::new();
    trailer(&mut s, 8, 90);
    let (out, time) = (false, 90);
    let switch = Record::Switch { out, tid, time };
    assert_eq!(Record::parse(RECORD_SWITCH, 0, &s, none), Some(switch));
    let lost = [1u64, 42]
        .iter()
        .flat_map(|v| v.to_ne_bytes())
        .collect::<Vec<u8>>();
    assert_eq!(
        Record::parse(RECORD_LOST, 0, &lost, none),
        Some(Record::Lost(42))
    );
    assert_eq!(
        Record::parse(RECORD_LOST_SAMPLES, 0, &lost[8..], none),
        Some(Record::Lost(42))
    );
    assert_eq!(
        Record::parse(1, 0, &lost, none),
        None,
        "a MMAP record is not asked for"
    );
}

#[test]
fn trailer_time_reads_the_last_eight_bytes() {
    let mut bytes = vec![0u8; 16];
    bytes.extend_from_slice(&42u64.to_ne_bytes());
    assert_eq!(trailer_time(&bytes), Some(42));
    assert_eq!(trailer_time(&[1, 2]), None);
}

#[test]
fn a_switch_reads_tid_and_time_from_its_trailer() {
    let mut b = vec![0u8; 8];
    b.extend_from_slice(&7u32.to_ne_bytes());
    b.extend_from_slice(&9u32.to_ne_bytes());
    b.extend_from_slice(&42u64.to_ne_bytes());
    let (out, tid, time) = (false, 9, 42);
    let switch = Record::Switch { out, tid, time };
    assert_eq!(
        Record::parse(RECORD_SWITCH, 0, &b, Format::default()),
        Some(switch)
    );
    let short = Record::parse(RECORD_SWITCH, 0, &[1, 2, 3], Format::default());
    assert_eq!(short, Some(Record::Unparsed));
}
