//! The one ELF reader of the diagnoses: the little of ELF that uprobes need, read by hand
//! from a 64-bit little-endian file (the x86-64 layout): the program's PLT stubs by imported name (each stub's `jmp *SLOT(%rip)`
//! decoded, the slot named by its relocation), the functions an object defines in `.dynsym` (IFUNC resolvers flagged),
//! the libraries it needs (`DT_NEEDED`, `DT_RUNPATH`), and every address turned into a file
//! offset through the `PT_LOAD` segment that holds it — the form uprobes are defined in.
//! For the unwinder, where an object keeps its code, its unwind tables (`.eh_frame`, its
//! index, `.debug_frame`) and its build id ([`unwind_layout`]).
//!
//! `calls` probes PLT stubs and defined functions; the path probes of `trace` and `run`
//! find the C library's path functions with [`defined_offsets`]. These read `.dynsym` only,
//! so stripped files work; `.symtab` is read by [`static_offsets`] alone (`alloc`). Hand-written because no ELF crate in the build
//! names PLT stubs by their relocation (blazesym, used for symbolisation, looks up names
//! but not stubs, IFUNC types or `DT_NEEDED`). Pure apart from reading the file and
//! `/proc/self/maps` ([`own_libc`]); depends on nothing else in sysmeter.

mod layout;
mod symtab;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

pub use layout::{Span, UnwindLayout, read_layout, read_span, unwind_layout};
pub use symtab::{defined_offsets, static_offsets};

/// Why a file could not be read as an ELF object.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ElfError {
    /// Reading the file failed.
    #[error("cannot read {0}: {1}")]
    Read(String, String),
    /// Not a 64-bit little-endian ELF file with section headers.
    #[error("{0} is not a 64-bit little-endian ELF program or library (a script?)")]
    NotElf(String),
}

/// A function an object defines, as a file offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Defined {
    /// Its name in `.dynsym`.
    pub name: String,
    /// File offset of its first instruction.
    pub offset: u64,
    /// An IFUNC: the address is the resolver, which runs once, not the function.
    pub ifunc: bool,
}

/// What `calls` knows of one object file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Image {
    /// Imported functions and the file offset of their PLT stub.
    pub plt: Vec<(String, u64)>,
    /// Functions defined (exported) by the object.
    pub defined: Vec<Defined>,
    /// `DT_NEEDED` names.
    pub needed: Vec<String>,
    /// `DT_RUNPATH`/`DT_RPATH` directories.
    pub runpath: Vec<String>,
    /// Names `.dynsym` references without defining them (what the program imports,
    /// through a PLT stub or not).
    pub undefined: Vec<String>,
}

struct Section {
    name: u32,
    kind: u32,
    flags: u64,
    addr: u64,
    offset: u64,
    size: u64,
    link: u32,
    entsize: u64,
}

fn le_u16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn le_u32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn le_u64(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

fn c_str(b: &[u8], at: usize) -> Option<String> {
    let tail = b.get(at..)?;
    let end = tail.iter().position(|&c| c == 0)?;
    Some(String::from_utf8_lossy(&tail[..end]).into_owned())
}

const SHT_DYNSYM: u32 = 11;
const SHT_DYNAMIC: u32 = 6;
const PT_LOAD: u32 = 1;
const STT_FUNC: u8 = 2;
const STT_GNU_IFUNC: u8 = 10;
const R_X86_64_JUMP_SLOT: u64 = 7;
const R_X86_64_IRELATIVE: u64 = 37;
const R_X86_64_GLOB_DAT: u64 = 6;
const DT_NEEDED: u64 = 1;
const DT_RPATH: u64 = 15;
const DT_RUNPATH: u64 = 29;

struct Elf<'a> {
    b: &'a [u8],
    sections: Vec<Section>,
    /// `(vaddr, memsz, offset)` of each PT_LOAD.
    loads: Vec<(u64, u64, u64)>,
    shstr: u64,
}

impl<'a> Elf<'a> {
    fn parse(b: &'a [u8]) -> Option<Elf<'a>> {
        if b.get(..4)? != b"\x7fELF" || *b.get(4)? != 2 || *b.get(5)? != 1 {
            return None;
        }
        let (phoff, shoff) = (le_u64(b, 0x20)? as usize, le_u64(b, 0x28)? as usize);
        let (phnum, shnum) = (le_u16(b, 0x38)? as usize, le_u16(b, 0x3c)? as usize);
        let shstrndx = le_u16(b, 0x3e)? as usize;
        let sections = (0..shnum)
            .map(|i| {
                let s = shoff + i * 64;
                Some(Section {
                    name: le_u32(b, s)?,
                    kind: le_u32(b, s + 4)?,
                    flags: le_u64(b, s + 8)?,
                    addr: le_u64(b, s + 16)?,
                    offset: le_u64(b, s + 24)?,
                    size: le_u64(b, s + 32)?,
                    link: le_u32(b, s + 40)?,
                    entsize: le_u64(b, s + 56)?,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        let loads = (0..phnum)
            .filter_map(|i| {
                let p = phoff + i * 56;
                (le_u32(b, p)? == PT_LOAD)
                    .then(|| Some((le_u64(b, p + 16)?, le_u64(b, p + 40)?, le_u64(b, p + 8)?)))?
            })
            .collect();
        let shstr = sections.get(shstrndx)?.offset;
        Some(Elf {
            b,
            sections,
            loads,
            shstr,
        })
    }

    fn named(&self, name: &str) -> Option<&Section> {
        self.sections.iter().find(|s| {
            c_str(self.b, (self.shstr + u64::from(s.name)) as usize).as_deref() == Some(name)
        })
    }

    fn file_offset(&self, addr: u64) -> Option<u64> {
        self.loads
            .iter()
            .find(|&&(va, len, _)| addr >= va && addr < va + len)
            .map(|&(va, _, off)| addr - va + off)
    }

    /// `(name, value, type, section index)` of every `.dynsym` entry.
    fn dynsyms(&self) -> Vec<(String, u64, u8, u16)> {
        self.symbols(SHT_DYNSYM)
    }

    /// `(name, value, type, section index)` of every entry of the first symbol table of
    /// section type `kind` (`.dynsym` or `.symtab`).
    fn symbols(&self, kind: u32) -> Vec<(String, u64, u8, u16)> {
        let Some(sym) = self.sections.iter().find(|s| s.kind == kind) else {
            return Vec::new();
        };
        let Some(strtab) = self.sections.get(sym.link as usize) else {
            return Vec::new();
        };
        (0..sym.size / 24)
            .filter_map(|i| {
                let at = (sym.offset + i * 24) as usize;
                let name = c_str(
                    self.b,
                    (strtab.offset + u64::from(le_u32(self.b, at)?)) as usize,
                )?;
                let info = *self.b.get(at + 4)?;
                Some((
                    name,
                    le_u64(self.b, at + 8)?,
                    info & 0xf,
                    le_u16(self.b, at + 6)?,
                ))
            })
            .collect()
    }

    /// GOT slot address → imported name, from `.rela.plt` (JUMP_SLOT; IRELATIVE named by
    /// the IFUNC whose resolver is the addend) and `.rela.dyn` (GLOB_DAT, for `.plt.got`).
    fn slots(&self, syms: &[(String, u64, u8, u16)]) -> HashMap<u64, String> {
        let mut slots = HashMap::new();
        for rela in [".rela.plt", ".rela.dyn"]
            .iter()
            .filter_map(|n| self.named(n))
        {
            for i in 0..rela.size / 24 {
                let at = (rela.offset + i * 24) as usize;
                let (Some(slot), Some(info)) = (le_u64(self.b, at), le_u64(self.b, at + 8)) else {
                    break;
                };
                let name = match info & 0xffff_ffff {
                    R_X86_64_JUMP_SLOT | R_X86_64_GLOB_DAT => {
                        syms.get((info >> 32) as usize).map(|s| s.0.clone())
                    }
                    R_X86_64_IRELATIVE => le_u64(self.b, at + 16).and_then(|resolver| {
                        let f = syms
                            .iter()
                            .find(|s| s.1 == resolver && s.2 == STT_GNU_IFUNC);
                        f.map(|s| s.0.clone())
                    }),
                    _ => None,
                };
                if let Some(name) = name.filter(|n| !n.is_empty()) {
                    slots.insert(slot, name);
                }
            }
        }
        slots
    }

    /// Every PLT stub (`.plt` after its header, `.plt.sec`, `.plt.got`) whose
    /// `jmp *SLOT(%rip)` reads a slot of a named import, as (name, file offset).
    fn plt(&self, syms: &[(String, u64, u8, u16)]) -> Vec<(String, u64)> {
        let slots = self.slots(syms);
        let mut out = Vec::new();
        for (name, skip) in [(".plt", 1), (".plt.sec", 0), (".plt.got", 0)] {
            let Some(sec) = self.named(name) else {
                continue;
            };
            let size = if sec.entsize >= 8 { sec.entsize } else { 16 };
            for i in skip..sec.size / size {
                let (addr, off) = (sec.addr + i * size, (sec.offset + i * size) as usize);
                let Some(code) = self.b.get(off..off + size as usize) else {
                    break;
                };
                let Some(pos) = code.windows(2).position(|w| w == [0xff, 0x25]) else {
                    continue;
                };
                let Some(disp) = code.get(pos + 2..pos + 6) else {
                    continue;
                };
                let disp = i32::from_le_bytes([disp[0], disp[1], disp[2], disp[3]]);
                let slot = (addr + pos as u64 + 6).wrapping_add_signed(i64::from(disp));
                if let (Some(name), Some(file)) = (slots.get(&slot), self.file_offset(addr)) {
                    out.push((name.clone(), file));
                }
            }
        }
        out
    }

    fn dynamic(&self) -> (Vec<String>, Vec<String>) {
        let (mut needed, mut runpath) = (Vec::new(), Vec::new());
        let Some(dynamic) = self.sections.iter().find(|s| s.kind == SHT_DYNAMIC) else {
            return (needed, runpath);
        };
        let Some(strtab) = self.sections.get(dynamic.link as usize) else {
            return (needed, runpath);
        };
        for i in 0..dynamic.size / 16 {
            let at = (dynamic.offset + i * 16) as usize;
            let (Some(tag), Some(val)) = (le_u64(self.b, at), le_u64(self.b, at + 8)) else {
                break;
            };
            let text = || c_str(self.b, (strtab.offset + val) as usize);
            match tag {
                DT_NEEDED => needed.extend(text()),
                DT_RUNPATH | DT_RPATH => {
                    runpath.extend(text().iter().flat_map(|t| t.split(':')).map(String::from))
                }
                _ => {}
            }
        }
        (needed, runpath)
    }
}

/// Reads the PLT, the defined functions and the needs of the ELF bytes `b`.
pub fn parse(b: &[u8]) -> Option<Image> {
    Elf::parse(b).map(|elf| image(&elf))
}

fn image(elf: &Elf) -> Image {
    let syms = elf.dynsyms();
    let defined = syms
        .iter()
        .filter(|(_, value, kind, shndx)| {
            *value != 0 && *shndx != 0 && (*kind == STT_FUNC || *kind == STT_GNU_IFUNC)
        })
        .filter_map(|(name, value, kind, _)| {
            Some(Defined {
                name: name.clone(),
                offset: elf.file_offset(*value)?,
                ifunc: *kind == STT_GNU_IFUNC,
            })
        })
        .collect();
    let (needed, runpath) = elf.dynamic();
    let undefined = syms
        .iter()
        .filter(|(name, _, _, shndx)| *shndx == 0 && !name.is_empty())
        .map(|(name, ..)| name.clone())
        .collect();
    Image {
        plt: elf.plt(&syms),
        defined,
        needed,
        runpath,
        undefined,
    }
}

/// `f` of the ELF file at `path`: the one reading of a file by path, with its errors.
fn with_file<T>(path: &Path, f: impl FnOnce(&Elf) -> T) -> Result<T, ElfError> {
    let shown = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| ElfError::Read(shown.clone(), e.to_string()))?;
    let elf = Elf::parse(&bytes).ok_or(ElfError::NotElf(shown))?;
    Ok(f(&elf))
}

/// Reads the ELF file at `path`.
pub fn read(path: &Path) -> Result<Image, ElfError> {
    with_file(path, image)
}

/// The file offsets of the virtual addresses `vaddrs` (as the ELF file `path` states them,
/// before any load bias); `None` for an address outside every `PT_LOAD` segment.
pub fn file_offsets(path: &Path, vaddrs: &[u64]) -> Result<Vec<Option<u64>>, ElfError> {
    with_file(path, |elf| {
        vaddrs.iter().map(|&a| elf.file_offset(a)).collect()
    })
}

/// The C library this process loaded (the one a program started from here loads too,
/// unless it brings its own).
pub fn own_libc() -> Option<PathBuf> {
    mapped_libc(&std::fs::read_to_string("/proc/self/maps").ok()?)
}

/// The C library named in the text of a `/proc/PID/maps` file, if the process maps one.
pub fn mapped_libc(maps: &str) -> Option<PathBuf> {
    maps.lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|p| is_libc(Path::new(p)))
        .map(PathBuf::from)
}

/// Whether `path` names the C library (`libc.so.6`, `libc.so`), by its file name.
pub fn is_libc(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|f| f.to_string_lossy().starts_with("libc.so"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn system_libc_defines_malloc_and_strlen_is_an_ifunc() {
        let Some(libc) = ["/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib64/libc.so.6"]
            .iter()
            .map(Path::new)
            .find(|p| p.exists())
        else {
            return;
        };
        let img = read(libc).unwrap();
        let find = |n: &str| img.defined.iter().find(|d| d.name == n).cloned();
        let malloc = find("malloc").unwrap();
        assert!(!malloc.ifunc && malloc.offset > 0);
        assert!(find("strlen").unwrap().ifunc);
        // libc's own calls to strlen go through a PLT stub of its own.
        assert!(img.plt.iter().any(|(n, off)| n == "strlen" && *off > 0));
    }

    #[test]
    fn non_elf_bytes_are_refused() {
        assert!(parse(b"#!/bin/sh\necho hi\n").is_none());
        assert!(parse(b"\x7fELF").is_none());
    }
}
