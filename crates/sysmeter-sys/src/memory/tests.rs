//! Ground truth for the mapping wrappers: first touches fault once per page, DONTNEED drops
//! pages, and a file evicted with madvise + posix_fadvise is no longer resident.

use std::io::Write;

use super::*;

/// A file in the temp directory, removed on drop.
struct TempFile {
    path: std::path::PathBuf,
    file: File,
}

impl TempFile {
    fn new(len: usize) -> TempFile {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("sysmeter-sys-{}-{n}", std::process::id()));
        let mut file = File::options()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .expect("create temp file");
        let data: Vec<u8> = (0..len).map(|i| (i * 7 + 1) as u8).collect();
        file.write_all(&data).expect("write");
        file.sync_all().expect("fsync");
        TempFile { path, file }
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[test]
fn anonymous_region_is_zeroed_writable_and_aligned() {
    let mut r = Region::anonymous(3 * page_size()).expect("mmap");
    assert_eq!(r.len(), 3 * page_size());
    assert!(r.as_slice().iter().all(|&b| b == 0));
    r.as_mut_slice()[5] = 9;
    assert_eq!(r.as_slice()[5], 9);
    assert_eq!(r.as_slice().as_ptr() as usize % page_size(), 0);
    let a = Region::anonymous_aligned(4 << 20, 2 << 20).expect("aligned mmap");
    assert_eq!(a.as_slice().as_ptr() as usize % (2 << 20), 0);
    assert_eq!(a.len(), 4 << 20);
    assert!(Region::anonymous_aligned(4096, 3000).is_err());
}

#[test]
fn first_touch_faults_once_per_page_and_dontneed_drops_pages() {
    let pages = 256;
    let mut r = Region::anonymous(pages * page_size()).expect("mmap");
    r.advise(Advice::NoHugePage).expect("madvise");
    assert_eq!(r.resident_pages().expect("mincore"), 0);
    let before = thread_faults().expect("getrusage");
    assert_eq!(r.touch(page_size()), pages);
    let faults = thread_faults().expect("getrusage").since(before);
    // The touch loop itself allocates nothing, so only its own faults are counted.
    assert!(
        (pages as u64..=pages as u64 + 4).contains(&faults.minor),
        "{faults:?}"
    );
    assert_eq!(r.resident_pages().expect("mincore"), pages);
    // A second touch of resident pages does not fault.
    let before = thread_faults().expect("getrusage");
    r.touch(page_size());
    assert!(thread_faults().expect("getrusage").since(before).minor <= 4);
    r.advise(Advice::DontNeed).expect("madvise");
    assert_eq!(r.resident_pages().expect("mincore"), 0);
    assert!(
        r.as_slice().iter().all(|&b| b == 0),
        "DONTNEED reads back zeros"
    );
}

#[test]
fn file_mapping_reads_and_evicts() {
    let pages = 64;
    let tf = TempFile::new(pages * page_size());
    let m = FileMap::map(&tf.file, pages * page_size(), false).expect("mmap file");
    assert_eq!(m.pages(), pages);
    let expected: u64 = (0..pages)
        .map(|i| ((i * page_size() * 7 + 1) as u8) as u64)
        .sum();
    assert_eq!(m.touch(0, pages), expected);
    assert_eq!(
        m.touch(pages - 1, 10),
        ((pages - 1) * page_size() * 7 + 1) as u8 as u64
    );
    assert_eq!(m.resident_pages().expect("mincore"), pages);
    let left = m.evict(&tf.file).expect("evict");
    if left > 0 {
        crate::skip::skip(
            "disk",
            &format!("{left} of {pages} pages stayed cached (tmpfs temp dir?)"),
        );
        return;
    }
    m.advise(Advice::Random).expect("madvise");
    let before = thread_faults().expect("getrusage");
    assert_eq!(
        m.touch(0, pages),
        expected,
        "refaulted pages read the file again"
    );
    let f = thread_faults().expect("getrusage").since(before);
    assert!(
        f.major >= 1,
        "evicted pages must come back through major faults: {f:?}"
    );
    assert!(f.major + f.minor >= 1);
}

#[test]
fn fault_counters_are_monotonic() {
    let a = process_faults().expect("getrusage");
    let _v: Vec<u8> = vec![1; 1 << 20];
    let b = process_faults().expect("getrusage");
    assert!(b.minor >= a.minor && b.major >= a.major);
    assert_eq!(b.since(b), FaultCounts::default());
    assert!(thp_size().is_none_or(|s| s >= page_size()));
}
