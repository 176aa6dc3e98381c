//! The unwind tables of one file, read once per path: the bytes of `.eh_frame` and its index
//! (or, for a file without them, `.debug_frame` — taken from the separate debug file
//! `/usr/lib/debug/.build-id/xx/yyyy.debug` when that is where it is), the stated addresses
//! framehop resolves DWARF pointer encodings against, and the function ranges of the table
//! (one FDE per function), which name code that has no symbols.
//!
//! Only the headers and the unwind sections of a file are read, and the function list is
//! made when a name is first asked for. framehop gets the sections as `Arc<[u8]>`, so the
//! modules built for every process that maps the file share one copy. Reads files; depends
//! on `observe::elf`.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use framehop::{ExplicitModuleSectionInfo, Module};
use gimli::{BaseAddresses, CieOrFde, DebugFrame, EhFrame, LittleEndian, UnwindSection};

use super::super::elf::{Span, UnwindLayout, read_layout, read_span};
use super::super::maps::Mapped;

/// Section bytes shared by every framehop module of a file.
pub type Bytes = Arc<[u8]>;

/// Where separate debug files are looked for, by build id.
const DEBUG_DIR: &str = "/usr/lib/debug/.build-id";

/// What one file gives the unwinder.
#[derive(Debug, Clone)]
pub struct FileTables {
    layout: UnwindLayout,
    eh_frame: Option<Bytes>,
    eh_frame_hdr: Option<Bytes>,
    debug_frame: Option<Bytes>,
    /// `(start, end)` stated addresses of every FDE, by start, once listed.
    functions: OnceLock<Vec<(u64, u64)>>,
}

/// The bytes of `span` of the file at `path`, decompressed when the section is compressed.
fn section(path: &Path, span: Option<Span>) -> Option<Bytes> {
    let span = span?;
    let bytes = read_span(path, span)?;
    if !span.compressed {
        return Some(Arc::from(bytes));
    }
    // Elf64_Chdr: ch_type (1 = zlib), reserved, ch_size, ch_addralign; then the stream.
    let (kind, size) = (bytes.get(..4)?, bytes.get(8..16)?);
    if u32::from_le_bytes(kind.try_into().ok()?) != 1 {
        return None;
    }
    let size = u64::from_le_bytes(size.try_into().ok()?);
    let mut out = Vec::with_capacity(usize::try_from(size).ok()?);
    flate2::read::ZlibDecoder::new(bytes.get(24..)?)
        .read_to_end(&mut out)
        .ok()?;
    Some(Arc::from(out))
}

/// The separate debug file of a build id under `dir` (`dir/xx/yyyy.debug`), when there.
pub fn debug_file(dir: &Path, build_id: &[u8]) -> Option<PathBuf> {
    let (first, rest) = build_id.split_first()?;
    let hex: String = rest.iter().map(|b| format!("{b:02x}")).collect();
    let path = dir.join(format!("{first:02x}/{hex}.debug"));
    path.is_file().then_some(path)
}

impl FileTables {
    /// Reads the tables of `path`; `None` for what is not a readable ELF file. Only the
    /// headers and the unwind sections are read; the function list is made on first use.
    pub fn read(path: &str) -> Option<FileTables> {
        FileTables::read_in(Path::new(path), Path::new(DEBUG_DIR))
    }

    /// [`FileTables::read`] with separate debug files looked for under `debug_dir`.
    pub fn read_in(path: &Path, debug_dir: &Path) -> Option<FileTables> {
        let layout = read_layout(path)?;
        let debug_frame = section(path, layout.debug_frame).or_else(|| {
            let debug = debug_file(debug_dir, layout.build_id.as_deref()?)?;
            section(&debug, read_layout(&debug)?.debug_frame)
        });
        let mut tables = FileTables {
            eh_frame: section(path, layout.eh_frame),
            eh_frame_hdr: section(path, layout.eh_frame_hdr),
            debug_frame: None,
            functions: OnceLock::new(),
            layout,
        };
        if let Some(debug) = debug_frame {
            tables.consider(debug);
        }
        Some(tables)
    }

    /// framehop unwinds a file with one table: `.debug_frame` replaces `.eh_frame` when it
    /// describes more functions. A program built with `-fno-asynchronous-unwind-tables` has
    /// its own code's CFI in `.debug_frame` only (with `-g`), beside an `.eh_frame` of the C
    /// runtime's start files; a stripped file may have it only in its separate debug file.
    fn consider(&mut self, debug: Bytes) {
        let from_debug = fde_ranges(DebugFrame::new(&debug, LittleEndian), &bases(&self.layout));
        if from_debug.len() > self.functions().len() {
            self.eh_frame = None;
            self.eh_frame_hdr = None;
            self.debug_frame = Some(debug);
            self.functions = OnceLock::from(from_debug);
        }
    }

    /// `(start, end)` of every FDE, by start (listed on first use: naming needs it, the
    /// walks do not).
    fn functions(&self) -> &[(u64, u64)] {
        self.functions.get_or_init(|| {
            let bases = bases(&self.layout);
            match (&self.eh_frame, &self.debug_frame) {
                (Some(eh), _) => fde_ranges(EhFrame::new(eh, LittleEndian), &bases),
                (None, Some(debug)) => fde_ranges(DebugFrame::new(debug, LittleEndian), &bases),
                (None, None) => Vec::new(),
            }
        })
    }

    /// Whether the file has a table to unwind with.
    pub fn has_cfi(&self) -> bool {
        !self.functions().is_empty()
    }

    /// The stated address of the first byte of the function (FDE) holding file offset
    /// `offset`, and that address; `None` where no FDE covers it.
    pub fn function_at(&self, offset: u64) -> Option<(u64, u64)> {
        let svma = self.layout.svma_of_offset(offset)?;
        let functions = self.functions();
        let i = functions.partition_point(|&(start, _)| start <= svma);
        let &(start, end) = functions.get(i.checked_sub(1)?)?;
        (svma < end).then_some((start, svma))
    }

    /// A framehop module for the file mapped at `m` (its executable mapping); `None` when
    /// the mapping's offset is in no `PT_LOAD` (not this file's code).
    pub fn module(&self, name: &str, m: &Mapped) -> Option<Module<Bytes>> {
        // Actual minus stated address, through the segment the mapping starts in.
        let svma = self.layout.svma_of_offset(m.pgoff)?;
        let base_avma = m.start.wrapping_sub(svma);
        let range = |s: Option<Span>| s.map(|s| s.addr..s.addr + s.size);
        let info = ExplicitModuleSectionInfo {
            base_svma: 0,
            text_svma: range(self.layout.text),
            eh_frame_svma: range(self.layout.eh_frame),
            eh_frame: self.eh_frame.clone(),
            eh_frame_hdr_svma: range(self.layout.eh_frame_hdr),
            eh_frame_hdr: self.eh_frame_hdr.clone(),
            debug_frame: self.debug_frame.clone(),
            got_svma: range(self.layout.got),
            ..ExplicitModuleSectionInfo::default()
        };
        Some(Module::new(
            name.to_string(),
            m.start..m.end,
            base_avma,
            info,
        ))
    }
}

/// The base addresses DWARF pointer encodings of the file are relative to.
fn bases(layout: &UnwindLayout) -> BaseAddresses {
    let at = |s: Option<Span>| s.map_or(0, |s| s.addr);
    BaseAddresses::default()
        .set_eh_frame(at(layout.eh_frame))
        .set_eh_frame_hdr(at(layout.eh_frame_hdr))
        .set_text(at(layout.text))
        .set_got(at(layout.got))
}

/// `(start, end)` of every FDE of an unwind section, sorted; empty FDEs left out.
fn fde_ranges<'a, S>(section: S, bases: &BaseAddresses) -> Vec<(u64, u64)>
where
    S: UnwindSection<gimli::EndianSlice<'a, LittleEndian>>,
{
    let mut out = Vec::new();
    let mut entries = section.entries(bases);
    // A malformed entry ends the listing: what was read so far still names functions.
    while let Ok(Some(entry)) = entries.next() {
        let CieOrFde::Fde(partial) = entry else {
            continue;
        };
        if let Ok(fde) = partial.parse(S::cie_from_offset) {
            let (start, len) = (fde.initial_address(), fde.len());
            if len > 0 {
                out.push((start, start.saturating_add(len)));
            }
        }
    }
    out.sort_unstable();
    out
}
