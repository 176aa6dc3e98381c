//! Unit tests of the unwinder: the frame-pointer walk it falls back on over a made-up stack,
//! why walks stop, how a kernel chain gets its user part, and the FDE ranges of this test
//! binary's own unwind table. Whole stacks of real programs are the integration tests'.

use super::*;
use crate::diagnose::observe::maps::parse_proc_maps;
use crate::diagnose::observe::records::PERF_CONTEXT_KERNEL;

fn words(list: &[u64]) -> Vec<u8> {
    list.iter().flat_map(|w| w.to_le_bytes()).collect()
}

#[test]
fn registers_come_in_bp_sp_ip_order() {
    let r = Regs::from_sample(&[1, 2, 3]).unwrap();
    assert_eq!((r.bp, r.sp, r.ip), (1, 2, 3));
    assert!(Regs::from_sample(&[1, 2]).is_none());
}

#[test]
fn words_are_read_only_inside_the_copy() {
    let stack = words(&[7, 8]);
    assert_eq!(read_word(&stack, 0x1000, 0x1008), Ok(8));
    assert!(read_word(&stack, 0x1000, 0x0ff8).is_err(), "below sp");
    assert!(read_word(&stack, 0x1000, 0x1010).is_err(), "past the copy");
}

/// A stack of two frame-pointer frames at 0x1000: bp → [saved bp, return address].
fn fp_stack(outer_bp: u64) -> Vec<u8> {
    // 0x1000: scratch, 0x1008: scratch, 0x1010: frame 1, 0x1020: frame 2.
    words(&[0, 0, 0x1020, 0x40_2000, outer_bp, 0x40_3000])
}

#[test]
fn without_tables_frame_pointers_are_followed_to_a_zero_frame_pointer() {
    let spaces = AddressSpaces::default();
    let stack = fp_stack(0);
    let copy = leaf_copy(&stack);
    let got = Unwinder::default().unwind(&spaces, &copy);
    assert_eq!(got.frames, vec![0x40_1000, 0x40_2000, 0x40_3000]);
    assert_eq!(got.stop, Stop::End);
}

/// A copy of `stack` taken in process 1 at the leaf 0x40_1000 (sp 0x1000, bp 0x1010).
fn leaf_copy(stack: &[u8]) -> StackCopy<'_> {
    StackCopy {
        pid: 1,
        time: 0,
        regs: Regs {
            ip: 0x40_1000,
            sp: 0x1000,
            bp: 0x1010,
        },
        stack,
    }
}

#[test]
fn a_frame_beyond_the_copy_says_the_copy_ended() {
    // The outer frame's saved bp points above the 48 copied bytes, still on the stack.
    let stack = fp_stack(0x2000);
    let copy = leaf_copy(&stack);
    let mut live = Live::new(&[], 48);
    let got = live.unwind(&copy);
    assert_eq!(got.stop, Stop::CopyEnded, "{got:?}");
    assert_eq!(live.stops.copy_ended, 1);
    assert_eq!(live.stops.total(), 1);
}

#[test]
fn a_chain_keeps_its_kernel_part_and_gets_the_unwound_user_part() {
    let stack = fp_stack(0);
    let copy = leaf_copy(&stack);
    let mut live = Live::new(&[], 48);
    let kernel = [
        PERF_CONTEXT_KERNEL,
        0xffff_1000,
        PERF_CONTEXT_USER,
        0x40_1000,
    ];
    assert_eq!(
        live.chain(&kernel, &copy),
        vec![
            PERF_CONTEXT_KERNEL,
            0xffff_1000,
            PERF_CONTEXT_USER,
            0x40_1000,
            0x40_2000,
            0x40_3000
        ]
    );
    assert_eq!(live.stops.end, 1);
}

#[test]
fn own_functions_are_found_by_their_fde() {
    let exe = std::fs::read_link("/proc/self/exe").expect("exe");
    let exe = exe.to_string_lossy().to_string();
    let maps = parse_proc_maps(
        1,
        &std::fs::read_to_string("/proc/self/maps").expect("maps"),
    );
    let here = own_functions_are_found_by_their_fde as *const () as u64;
    let m = maps
        .iter()
        .find(|m| m.path == exe && m.start <= here && here < m.start + m.len)
        .expect("our text mapping");
    let tables = FileTables::read(&exe).expect("own tables");
    assert!(tables.has_cfi());
    let offset = here - m.start + m.pgoff;
    let (start, at) = tables
        .function_at(offset + 4)
        .expect("an FDE covers this test");
    assert_eq!(at - start, 4, "the function starts where its symbol does");
    let mapped = Mapped {
        start: m.start,
        end: m.start + m.len,
        pgoff: m.pgoff,
        module: 0,
    };
    let module = tables.module(&exe, &mapped).expect("module");
    // Actual address = stated address + (base_avma − base_svma), base_svma being 0.
    assert_eq!(start.wrapping_add(module.base_avma()), here);
}
