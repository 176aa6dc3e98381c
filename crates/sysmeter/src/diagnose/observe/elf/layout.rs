//! Where an object keeps its code, its unwind tables (`.eh_frame`, its index,
//! `.debug_frame`) and its build id: what `observe::unwind` reads to unwind through a file
//! and to name its functions by their FDEs. Part of the one ELF reader (its section and
//! segment tables).

use super::{Elf, le_u32};

const SHT_NOBITS: u32 = 8;
const SHF_COMPRESSED: u64 = 0x800;
const NT_GNU_BUILD_ID: u32 = 3;

/// One section of an object as the unwinder needs it: its address as stated in the file
/// (SVMA), its bytes' place in the file, and whether they are zlib-compressed
/// (`SHF_COMPRESSED`, usual for `.debug_frame` in separate debug files).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// Stated address (SVMA).
    pub addr: u64,
    /// File offset of the bytes.
    pub offset: u64,
    /// Size in the file.
    pub size: u64,
    /// The bytes start with an `Elf64_Chdr` and are compressed.
    pub compressed: bool,
}

/// Where an object keeps its code and unwind tables, and its build id: what
/// `observe::unwind` reads to unwind through it and to name its functions by their FDEs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UnwindLayout {
    /// `.text`.
    pub text: Option<Span>,
    /// `.eh_frame`.
    pub eh_frame: Option<Span>,
    /// `.eh_frame_hdr` (the sorted index of `.eh_frame`).
    pub eh_frame_hdr: Option<Span>,
    /// `.debug_frame` (rare in distribution binaries; common in separate debug files).
    pub debug_frame: Option<Span>,
    /// `.got` (DWARF pointer encodings may be relative to it).
    pub got: Option<Span>,
    /// `(vaddr, memsz, offset)` of each `PT_LOAD`: file offsets to stated addresses.
    pub loads: Vec<(u64, u64, u64)>,
    /// The GNU build id (`.note.gnu.build-id`), which names the separate debug file.
    pub build_id: Option<Vec<u8>>,
}

impl UnwindLayout {
    /// The stated address (SVMA) of file offset `offset`, through the `PT_LOAD` holding it.
    /// A segment is mapped from the (4 KiB, x86-64) page its offset falls in, so a mapping's offset (page
    /// aligned) may lie just before its segment's `p_offset`, in the page the previous
    /// segment ends in: the later segment is the one mapped there.
    pub fn svma_of_offset(&self, offset: u64) -> Option<u64> {
        self.loads
            .iter()
            .rev()
            .find(|&&(_, len, off)| offset >= off & !0xfff && offset < off + len)
            .map(|&(va, _, off)| offset.wrapping_sub(off).wrapping_add(va))
    }
}

impl Elf<'_> {
    /// A section with bytes in the file (`SHT_NOBITS` ones, which a debug file has for the
    /// code it describes, have none).
    fn span(&self, name: &str) -> Option<Span> {
        let s = self.named(name).filter(|s| s.kind != SHT_NOBITS)?;
        Some(Span {
            addr: s.addr,
            offset: s.offset,
            size: s.size,
            compressed: s.flags & SHF_COMPRESSED != 0,
        })
    }

    /// The descriptor of the `NT_GNU_BUILD_ID` note.
    fn build_id(&self) -> Option<Vec<u8>> {
        let s = self.named(".note.gnu.build-id")?;
        let at = s.offset as usize;
        let (namesz, descsz) = (
            le_u32(self.b, at)? as usize,
            le_u32(self.b, at + 4)? as usize,
        );
        if le_u32(self.b, at + 8)? != NT_GNU_BUILD_ID {
            return None;
        }
        let desc = at + 12 + namesz.div_ceil(4) * 4;
        Some(self.b.get(desc..desc + descsz)?.to_vec())
    }
}

/// The unwind layout of the ELF bytes `b` (the whole file, or at least its headers and
/// notes).
pub fn unwind_layout(b: &[u8]) -> Option<UnwindLayout> {
    let elf = Elf::parse(b)?;
    Some(UnwindLayout {
        text: elf.span(".text"),
        eh_frame: elf.span(".eh_frame"),
        eh_frame_hdr: elf.span(".eh_frame_hdr"),
        debug_frame: elf.span(".debug_frame"),
        got: elf.span(".got"),
        loads: elf.loads.clone(),
        build_id: elf.build_id(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_executable_has_an_unwind_table_and_a_build_id() {
        let exe = std::fs::read("/proc/self/exe").expect("own executable");
        let layout = unwind_layout(&exe).expect("ELF");
        let eh = layout.eh_frame.expect(".eh_frame");
        assert!(eh.size > 0 && !eh.compressed);
        assert!(layout.eh_frame_hdr.is_some() && layout.text.is_some());
        // Rust's linker asks for a build id on Linux; its length is 20 (SHA-1) when present.
        assert!(layout.build_id.as_ref().is_none_or(|id| id.len() >= 8));
        let text = layout.text.expect(".text");
        assert_eq!(layout.svma_of_offset(text.offset), Some(text.addr));
    }

    #[test]
    fn non_elf_bytes_have_no_layout() {
        assert!(unwind_layout(b"#!/bin/sh\n").is_none());
    }
}
