//! The x86-64 prologue check: whether a function saves the frame pointer on entry. The
//! profile uses it to say which hot leaves hid their caller from a frame-pointer walk when
//! no stack was copied (with a copy, `unwind` follows the CFI and loses no caller). The
//! stack scan that once recovered such callers from a few hundred stack bytes is gone:
//! `unwind` is the one way stacks are recovered. Pure.

/// Whether x86-64 code starts by saving the frame pointer: `push %rbp`, optionally after
/// `endbr64`.
pub fn pushes_frame_pointer(code: &[u8]) -> bool {
    const ENDBR64: [u8; 4] = [0xf3, 0x0f, 0x1e, 0xfa];
    const PUSH_RBP: u8 = 0x55;
    let body = code.strip_prefix(&ENDBR64[..]).unwrap_or(code);
    body.first() == Some(&PUSH_RBP)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prologues_with_and_without_frame_pointer() {
        assert!(pushes_frame_pointer(&[0x55, 0x48, 0x89, 0xe5]));
        assert!(pushes_frame_pointer(&[0xf3, 0x0f, 0x1e, 0xfa, 0x55]));
        assert!(!pushes_frame_pointer(&[0x48, 0x89, 0xf0, 0x48, 0x85]));
        assert!(!pushes_frame_pointer(&[]));
    }
}
