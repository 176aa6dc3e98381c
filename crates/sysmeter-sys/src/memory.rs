//! Memory mappings for `mem.pagefault` and `mem.bandwidth`: an anonymous mapping
//! ([`Region`]) and a read-only file mapping ([`FileMap`]), both unmapped on drop; `madvise`
//! (huge pages on/off, drop pages, access pattern hints), `posix_fadvise(DONTNEED)` to evict a
//! file from the page cache, `mincore` to count resident pages (the proof that an eviction
//! happened), page-by-page touching (the first touch of each page is the page fault being
//! measured), and this thread's or process's minor/major fault counters from `getrusage`
//! (the proof that each touch faulted exactly once).

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

/// The base page size (`sysconf(_SC_PAGESIZE)`), 4 KiB on x86_64.
pub fn page_size() -> usize {
    // SAFETY: sysconf has no memory effects.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(p).ok().filter(|&p| p > 0).unwrap_or(4096)
}

/// Size of a transparent huge page (PMD size) from sysfs, when THP exists.
pub fn thp_size() -> Option<usize> {
    std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// An `madvise` hint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Advice {
    /// MADV_NORMAL: default readahead.
    Normal,
    /// MADV_RANDOM: no readahead on faults, so each fault reads one page.
    Random,
    /// MADV_SEQUENTIAL: aggressive readahead.
    Sequential,
    /// MADV_HUGEPAGE: back the range with transparent huge pages where possible.
    HugePage,
    /// MADV_NOHUGEPAGE: never use transparent huge pages for the range.
    NoHugePage,
    /// MADV_DONTNEED: drop the range's pages from this mapping (anonymous memory reads
    /// back as zeros; a file mapping faults its pages in again).
    DontNeed,
}

impl Advice {
    fn raw(self) -> libc::c_int {
        match self {
            Advice::Normal => libc::MADV_NORMAL,
            Advice::Random => libc::MADV_RANDOM,
            Advice::Sequential => libc::MADV_SEQUENTIAL,
            Advice::HugePage => libc::MADV_HUGEPAGE,
            Advice::NoHugePage => libc::MADV_NOHUGEPAGE,
            Advice::DontNeed => libc::MADV_DONTNEED,
        }
    }
}

/// One mapping, unmapped on drop.
#[derive(Debug)]
struct Mapping {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: a Mapping owns its pages exclusively, like a Vec owns its buffer; nothing in it is
// tied to the thread that created it.
unsafe impl Send for Mapping {}
// SAFETY: shared access only reads (slices, mincore); mutation needs `&mut` of the owner.
unsafe impl Sync for Mapping {}

impl Mapping {
    fn new(len: usize, prot: i32, flags: i32, fd: i32) -> io::Result<Mapping> {
        if len == 0 {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "empty mapping"));
        }
        // SAFETY: a fresh mapping at an address of the kernel's choosing; no existing memory
        // is affected. The result is checked against MAP_FAILED.
        let p = unsafe { libc::mmap(std::ptr::null_mut(), len, prot, flags, fd, 0) };
        if p == libc::MAP_FAILED {
            return Err(crate::last_error());
        }
        Ok(Mapping { ptr: p.cast(), len })
    }

    fn advise(&self, advice: Advice) -> io::Result<()> {
        // SAFETY: the range is exactly this mapping; callers that drop pages (DONTNEED) hold
        // `&mut` of the owner or expose no references into the pages.
        let rc = unsafe { libc::madvise(self.ptr.cast(), self.len, advice.raw()) };
        if rc == 0 {
            Ok(())
        } else {
            Err(crate::last_error())
        }
    }

    fn resident_pages(&self) -> io::Result<usize> {
        let page = page_size();
        let mut vec = vec![0u8; self.len.div_ceil(page)];
        // SAFETY: the range is this mapping (page-aligned start); `vec` has one byte per page.
        let rc = unsafe { libc::mincore(self.ptr.cast(), self.len, vec.as_mut_ptr()) };
        if rc != 0 {
            return Err(crate::last_error());
        }
        Ok(vec.iter().filter(|&&b| b & 1 != 0).count())
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: ptr/len describe a mapping this value owns; no references outlive it
        // (slices borrow the owner).
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

/// Private anonymous read/write memory from `mmap`, unmapped on drop. Pages are not
/// allocated until first touched: the first touch of each page is a minor fault.
#[derive(Debug)]
pub struct Region {
    map: Mapping,
}

impl Region {
    /// Map `len` bytes (page-aligned start).
    pub fn anonymous(len: usize) -> io::Result<Region> {
        let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS;
        let map = Mapping::new(len, libc::PROT_READ | libc::PROT_WRITE, flags, -1)?;
        Ok(Region { map })
    }

    /// Map `len` bytes starting at a multiple of `align` (a power of two ≥ the page size),
    /// e.g. 2 MiB so that every huge page of the range can be a transparent huge page.
    pub fn anonymous_aligned(len: usize, align: usize) -> io::Result<Region> {
        if !align.is_power_of_two() || align < page_size() {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "bad alignment"));
        }
        let over = Region::anonymous(len + align)?;
        let start = over.map.ptr as usize;
        let head = start.next_multiple_of(align) - start;
        let tail = align - head;
        let ptr = over.map.ptr.wrapping_add(head);
        // Ownership moves to the trimmed mapping; the slack is unmapped below.
        std::mem::forget(over);
        for (p, n) in [(start as *mut u8, head), (ptr.wrapping_add(len), tail)] {
            if n > 0 {
                // SAFETY: [p, p+n) is slack of the mapping made above, outside [ptr, ptr+len).
                unsafe { libc::munmap(p.cast(), n) };
            }
        }
        Ok(Region {
            map: Mapping { ptr, len },
        })
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.map.len
    }

    /// Always false (empty mappings are refused); present for API symmetry with slices.
    pub fn is_empty(&self) -> bool {
        self.map.len == 0
    }

    /// The bytes (faulting in, as zeros, pages never touched).
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr..ptr+len is a live readable mapping owned by self.
        unsafe { std::slice::from_raw_parts(self.map.ptr, self.map.len) }
    }

    /// The bytes, writable.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: ptr..ptr+len is a live writable mapping, borrowed exclusively through self.
        unsafe { std::slice::from_raw_parts_mut(self.map.ptr, self.map.len) }
    }

    /// `madvise` the whole region. Takes `&mut` because DONTNEED zeroes the contents.
    pub fn advise(&mut self, advice: Advice) -> io::Result<()> {
        self.map.advise(advice)
    }

    /// Write one byte every `stride` bytes (use the page size to touch each page once);
    /// returns the number of bytes written. Volatile, so every touch happens.
    pub fn touch(&mut self, stride: usize) -> usize {
        let stride = stride.max(1);
        let mut n = 0;
        for off in (0..self.map.len).step_by(stride) {
            // SAFETY: off < len, inside the writable mapping borrowed exclusively.
            unsafe { std::ptr::write_volatile(self.map.ptr.add(off), 1) };
            n += 1;
        }
        n
    }

    /// Pages of the region resident in memory (`mincore`).
    pub fn resident_pages(&self) -> io::Result<usize> {
        self.map.resident_pages()
    }
}

/// A read-only mapping of a file, unmapped on drop. It hands out no references into the
/// pages, only [`FileMap::touch`], so pages may be dropped and refaulted at any time.
#[derive(Debug)]
pub struct FileMap {
    map: Mapping,
}

impl FileMap {
    /// Map the first `len` bytes of `file` for reading, `MAP_SHARED` or `MAP_PRIVATE`.
    /// `len` must not exceed the file's size: touching a page past the end raises SIGBUS.
    pub fn map(file: &File, len: usize, shared: bool) -> io::Result<FileMap> {
        let flags = if shared {
            libc::MAP_SHARED
        } else {
            libc::MAP_PRIVATE
        };
        let map = Mapping::new(len, libc::PROT_READ, flags, file.as_raw_fd())?;
        Ok(FileMap { map })
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.map.len
    }

    /// Always false (empty mappings are refused).
    pub fn is_empty(&self) -> bool {
        self.map.len == 0
    }

    /// Pages in the mapping.
    pub fn pages(&self) -> usize {
        self.map.len.div_ceil(page_size())
    }

    /// `madvise` the whole mapping (DONTNEED unmaps the pages from this process only; the
    /// page cache keeps them).
    pub fn advise(&self, advice: Advice) -> io::Result<()> {
        self.map.advise(advice)
    }

    /// Read one byte of each of `count` pages starting at page `first` (clamped to the
    /// mapping); returns their sum so the reads are observable. Volatile, so every read
    /// happens.
    pub fn touch(&self, first: usize, count: usize) -> u64 {
        let page = page_size();
        let end = first.saturating_add(count).min(self.pages());
        let mut sum = 0u64;
        for i in first.min(end)..end {
            // SAFETY: i < pages, so i*page < len: inside the readable mapping.
            sum += unsafe { std::ptr::read_volatile(self.map.ptr.add(i * page)) } as u64;
        }
        sum
    }

    /// Pages of the file range that are in the page cache (`mincore` on a file mapping
    /// reports page-cache residency, mapped into this process or not).
    pub fn resident_pages(&self) -> io::Result<usize> {
        self.map.resident_pages()
    }

    /// Evict the mapped range from this process and from the page cache: `madvise(DONTNEED)`
    /// first (the page cache will not drop pages that are still mapped), then
    /// `posix_fadvise(DONTNEED)` on `file`. Returns the pages still resident afterwards
    /// (`mincore`): 0 means the eviction worked. Dirty pages, tmpfs and pages mapped by
    /// other processes stay resident.
    pub fn evict(&self, file: &File) -> io::Result<usize> {
        self.advise(Advice::DontNeed)?;
        fadvise_dontneed(file, 0, self.map.len as u64)?;
        self.resident_pages()
    }
}

/// `posix_fadvise(POSIX_FADV_DONTNEED)`: ask the kernel to drop the clean, unmapped pages of
/// `file` in `[offset, offset+len)` from the page cache.
pub fn fadvise_dontneed(file: &File, offset: u64, len: u64) -> io::Result<()> {
    let (off, len) = (offset as libc::off_t, len as libc::off_t);
    // SAFETY: plain system call on an open descriptor; no memory is passed.
    let rc = unsafe { libc::posix_fadvise(file.as_raw_fd(), off, len, libc::POSIX_FADV_DONTNEED) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(rc))
    }
}

/// Page-fault counters from `getrusage`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FaultCounts {
    /// Faults served without I/O (`ru_minflt`).
    pub minor: u64,
    /// Faults that had to read from storage (`ru_majflt`).
    pub major: u64,
}

impl FaultCounts {
    /// Faults between `earlier` and `self`.
    pub fn since(self, earlier: FaultCounts) -> FaultCounts {
        FaultCounts {
            minor: self.minor.saturating_sub(earlier.minor),
            major: self.major.saturating_sub(earlier.major),
        }
    }
}

fn rusage(who: libc::c_int) -> io::Result<FaultCounts> {
    // SAFETY: rusage is plain data; zeroed is a valid value.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is valid and writable.
    if unsafe { libc::getrusage(who, &mut ru) } != 0 {
        return Err(crate::last_error());
    }
    Ok(FaultCounts {
        minor: ru.ru_minflt as u64,
        major: ru.ru_majflt as u64,
    })
}

/// Faults of the calling thread so far (`RUSAGE_THREAD`): unaffected by other threads.
pub fn thread_faults() -> io::Result<FaultCounts> {
    rusage(libc::RUSAGE_THREAD)
}

/// Faults of the whole process so far (`RUSAGE_SELF`).
pub fn process_faults() -> io::Result<FaultCounts> {
    rusage(libc::RUSAGE_SELF)
}

#[cfg(test)]
mod tests;
