//! Where an object keeps its code, its unwind tables (`.eh_frame`, its index,
//! `.debug_frame`) and its build id: what `observe::unwind` reads to unwind through a file
//! and to name its functions by their FDEs. Part of the one ELF reader (its section and
//! segment tables).

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use super::{Elf, le_u16, le_u32, le_u64};

const SHT_NOBITS: u32 = 8;
const SHT_NOTE: u32 = 7;
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

/// Reads `n` bytes at `at` of `file` into the same place of `b`.
fn fill(file: &mut File, b: &mut [u8], at: u64, n: u64) -> Option<()> {
    let start = usize::try_from(at).ok()?;
    let end = start.checked_add(usize::try_from(n).ok()?)?;
    file.seek(SeekFrom::Start(at)).ok()?;
    file.read_exact(b.get_mut(start..end)?).ok()
}

/// The unwind layout of the ELF file at `path`, reading only its headers, section names and
/// notes: they are placed at their offsets in a buffer of the file's size whose other bytes
/// stay zero (and, never touched, take no memory), so a compiler's 30 MB `cc1` costs a few
/// reads, not a copy of its code.
pub fn read_layout(path: &Path) -> Option<UnwindLayout> {
    let mut file = File::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    let mut b = vec![0u8; usize::try_from(len).ok()?];
    fill(&mut file, &mut b, 0, 64.min(len))?;
    let (phoff, shoff) = (le_u64(&b, 0x20)?, le_u64(&b, 0x28)?);
    let (phnum, shnum) = (u64::from(le_u16(&b, 0x38)?), u64::from(le_u16(&b, 0x3c)?));
    let shstrndx = u64::from(le_u16(&b, 0x3e)?);
    fill(&mut file, &mut b, phoff, 56 * phnum)?;
    fill(&mut file, &mut b, shoff, 64 * shnum)?;
    for i in 0..shnum {
        let at = usize::try_from(shoff + 64 * i).ok()?;
        let kind = le_u32(&b, at + 4)?;
        if i == shstrndx || kind == SHT_NOTE {
            let (offset, size) = (le_u64(&b, at + 24)?, le_u64(&b, at + 32)?);
            fill(&mut file, &mut b, offset, size)?;
        }
    }
    unwind_layout(&b)
}

/// The bytes of `span` in the file at `path` (as stored: compressed ones stay compressed).
pub fn read_span(path: &Path, span: Span) -> Option<Vec<u8>> {
    let mut file = File::open(path).ok()?;
    let mut b = vec![0u8; usize::try_from(span.size).ok()?];
    file.seek(SeekFrom::Start(span.offset)).ok()?;
    file.read_exact(&mut b).ok()?;
    Some(b)
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
    fn reading_only_the_headers_gives_the_same_layout() {
        let exe = std::fs::read_link("/proc/self/exe").expect("own executable");
        let whole = unwind_layout(&std::fs::read(&exe).expect("read")).expect("ELF");
        assert_eq!(read_layout(&exe), Some(whole.clone()));
        let eh = whole.eh_frame.expect(".eh_frame");
        let bytes = read_span(&exe, eh).expect("section read");
        assert_eq!(bytes.len() as u64, eh.size);
    }

    #[test]
    fn non_elf_bytes_have_no_layout() {
        assert!(unwind_layout(b"#!/bin/sh\n").is_none());
    }
}
