//! The side-band data kept from the records: chains interned, frames split, times read.
use super::*;

#[test]
fn frames_drop_markers_and_tag_kernel_entries() {
    let chain = [
        PERF_CONTEXT_KERNEL,
        0xffff_8001,
        0xffff_8002,
        PERF_CONTEXT_USER,
        0x40_1000,
        0x40_2000,
    ];
    assert_eq!(
        frames(&chain),
        vec![
            (0xffff_8001, true),
            (0xffff_8002, true),
            (0x40_1000, false),
            (0x40_2000, false)
        ]
    );
    assert_eq!(frames(&[0x1234]), vec![(0x1234, false)]);
}

#[test]
fn chains_are_interned() {
    let mut raw = RawData::default();
    raw.push_sample(1, 1, 10, &[1, 2, 3]);
    raw.push_sample(1, 2, 11, &[1, 2, 3]);
    raw.push_sample(1, 2, 12, &[4]);
    assert_eq!(raw.chains.len(), 2);
    assert_eq!(raw.samples[1].chain, 0);
    assert_eq!(raw.samples[2].chain, 1);
}
