//! The moving parts of `mem.bandwidth`: a [`Lane`] (one thread's buffer and the cursor that
//! walks it chunk by chunk) and a [`Team`] (one pinned worker per other CPU plus the measuring
//! thread, started together on every sample).
//!
//! Timing model of a team sample: the measuring thread publishes the job (an atomic
//! generation bump the workers spin on, so they start within ~100 ns), runs its own share, and
//! waits until every worker has finished; the harness times exactly that, so the interval is
//! the wall time of the slowest thread and aggregate bandwidth = total bytes / that time.

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use sysmeter_sys::memory::{Advice, Region};
use sysmeter_sys::{membw, sched};

use super::Kernel;

/// Bytes one harness iteration processes in a buffer larger than this: the cursor walks the
/// buffer in chunks, so a sample can be ~1 ms while a DRAM-sized buffer (256 MiB) is still
/// what the cache sees — a chunk comes back only after the whole buffer went by.
pub const CHUNK: usize = 1 << 20;
const HUGE: usize = 2 << 20;
/// How long an idle worker spins before it sleeps (between metrics it may wait longer).
const SPIN: Duration = Duration::from_millis(5);

/// One thread's buffer: `size` bytes (copy uses the first half as source, the second half as
/// destination), pre-faulted, walked in chunks.
pub struct Lane {
    region: Region,
    chunk: usize,
    cursor: usize,
}

impl Lane {
    /// Map and pre-fault `size` bytes (a multiple of 4 KiB; of [`CHUNK`] when larger). Big
    /// buffers ask for transparent huge pages so DRAM figures measure memory, not page walks.
    pub fn new(size: usize) -> std::io::Result<Lane> {
        let mut region = if size >= HUGE {
            let mut r = Region::anonymous_aligned(size, HUGE)?;
            // Only a hint: where THP is off the buffer simply uses 4 KiB pages.
            let _ = r.advise(Advice::HugePage);
            r
        } else {
            Region::anonymous(size)?
        };
        // First touch here, so no page fault lands inside a timed interval.
        membw::write(region.as_mut_slice(), 0x5a);
        Ok(Lane {
            region,
            chunk: size.min(CHUNK),
            cursor: 0,
        })
    }

    /// Bytes counted per iteration: the chunk, or for copy the bytes copied (half of it).
    pub fn bytes_per_iter(&self, kernel: Kernel) -> u64 {
        match kernel {
            Kernel::Copy => (self.chunk / 2) as u64,
            _ => self.chunk as u64,
        }
    }

    /// Run `iters` chunks of `kernel`; returns the read sum (0 for stores) to keep it live.
    pub fn run(&mut self, kernel: Kernel, iters: u64) -> u64 {
        let mut sink = 0u64;
        let len = self.region.len();
        let (span, step) = match kernel {
            Kernel::Copy => (len / 2, self.chunk / 2),
            _ => (len, self.chunk),
        };
        for _ in 0..iters {
            self.cursor = if self.cursor + step > span {
                0
            } else {
                self.cursor
            };
            let at = self.cursor;
            let buf = self.region.as_mut_slice();
            match kernel {
                Kernel::Read => sink = sink.wrapping_add(membw::read(&buf[at..at + step])),
                Kernel::Write => membw::write(&mut buf[at..at + step], 0xa5),
                // Unsupported architectures never get here (run() skips nt-write there).
                Kernel::NtWrite => drop(membw::nt_write(&mut buf[at..at + step], 0x3c)),
                Kernel::Copy => {
                    let (src, dst) = buf.split_at_mut(span);
                    membw::copy(&mut dst[at..at + step], &src[at..at + step]);
                }
            }
            self.cursor = at + step;
        }
        black_box(sink)
    }
}

/// What the measuring thread tells the workers.
#[derive(Default)]
struct Shared {
    generation: AtomicU64,
    kernel: AtomicU8,
    iters: AtomicU64,
    done: AtomicUsize,
    stop: AtomicBool,
    sink: AtomicU64,
    errors: Mutex<Vec<String>>,
}

/// One worker per CPU besides the measuring one, plus the measuring thread's own lane.
pub struct Team {
    shared: Arc<Shared>,
    workers: Vec<JoinHandle<()>>,
    own: Lane,
}

impl Team {
    /// Start a worker pinned to each CPU of `cpus` other than `own_cpu`, each with its own
    /// lane of `size` bytes mapped and faulted on its own CPU; returns once all are ready.
    pub fn start(size: usize, cpus: &[usize], own_cpu: Option<usize>) -> Result<Team, String> {
        // Our own lane first: failing after the workers started would leave them waiting.
        let own = Lane::new(size).map_err(|e| format!("map {size} bytes: {e}"))?;
        let shared = Arc::new(Shared::default());
        let mut workers = Vec::new();
        for &cpu in cpus.iter().filter(|&&c| Some(c) != own_cpu) {
            let sh = Arc::clone(&shared);
            let spawned = std::thread::Builder::new()
                .name(format!("membw-{cpu}"))
                .spawn(move || worker(&sh, cpu, size));
            match spawned {
                Ok(h) => workers.push(h),
                Err(e) => shared.note_error(format!("spawn a worker for CPU {cpu}: {e}")),
            }
        }
        let team = Team {
            shared,
            workers,
            own,
        };
        while team.shared.done.load(Ordering::Acquire) < team.workers.len() {
            std::thread::sleep(Duration::from_millis(1));
        }
        let errors = match team.shared.errors.lock() {
            Ok(e) => e.join("; "),
            Err(_) => "a worker panicked".to_string(),
        };
        if errors.is_empty() {
            Ok(team)
        } else {
            Err(errors)
        }
    }

    /// Threads taking part, the measuring one included.
    pub fn threads(&self) -> usize {
        self.workers.len() + 1
    }

    /// Bytes counted per iteration over all threads.
    pub fn bytes_per_iter(&self, kernel: Kernel) -> u64 {
        self.own.bytes_per_iter(kernel) * self.threads() as u64
    }

    /// Every thread runs `iters` chunks of `kernel`; returns when the slowest is done.
    pub fn run(&mut self, kernel: Kernel, iters: u64) -> u64 {
        let sh = &self.shared;
        sh.done.store(0, Ordering::Relaxed);
        sh.kernel.store(kernel as u8, Ordering::Relaxed);
        sh.iters.store(iters, Ordering::Relaxed);
        sh.generation.fetch_add(1, Ordering::Release);
        for w in &self.workers {
            w.thread().unpark();
        }
        let mine = self.own.run(kernel, iters);
        while sh.done.load(Ordering::Acquire) < self.workers.len() {
            std::hint::spin_loop();
        }
        mine
    }
}

impl Drop for Team {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        self.shared.generation.fetch_add(1, Ordering::Release);
        for w in self.workers.drain(..) {
            w.thread().unpark();
            let _ = w.join();
        }
    }
}

impl Shared {
    fn note_error(&self, e: String) {
        if let Ok(mut v) = self.errors.lock() {
            v.push(e);
        }
    }

    /// Wait for the next generation: spin (a sample starts within ~100 ns), then sleep.
    fn wait_past(&self, seen: u64) -> u64 {
        let start = Instant::now();
        loop {
            let g = self.generation.load(Ordering::Acquire);
            if g != seen {
                return g;
            }
            if start.elapsed() < SPIN {
                std::hint::spin_loop();
            } else {
                std::thread::park_timeout(Duration::from_millis(1));
            }
        }
    }
}

fn worker(sh: &Shared, cpu: usize, size: usize) {
    if let Err(e) = sched::pin_current_thread(cpu) {
        sh.note_error(format!("pin a worker to CPU {cpu}: {e}"));
    }
    let lane = Lane::new(size);
    if let Err(e) = &lane {
        sh.note_error(format!("map {size} bytes on CPU {cpu}: {e}"));
    }
    let mut seen = sh.generation.load(Ordering::Acquire);
    sh.done.fetch_add(1, Ordering::Release);
    let Ok(mut lane) = lane else { return };
    loop {
        seen = sh.wait_past(seen);
        if sh.stop.load(Ordering::Acquire) {
            return;
        }
        let kernel = Kernel::from_u8(sh.kernel.load(Ordering::Relaxed));
        let sum = lane.run(kernel, sh.iters.load(Ordering::Relaxed));
        sh.sink.fetch_add(sum, Ordering::Relaxed);
        sh.done.fetch_add(1, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lane_walks_its_buffer_in_chunks_and_counts_copy_once() {
        let mut lane = Lane::new(4 * CHUNK).expect("map");
        assert_eq!(lane.bytes_per_iter(Kernel::Read), CHUNK as u64);
        assert_eq!(lane.bytes_per_iter(Kernel::Copy), (CHUNK / 2) as u64);
        // Pre-faulted with 0x5a: every word of a chunk is 0x5a5a…, so the sum is known.
        let word = u64::from_ne_bytes([0x5a; 8]);
        let expect = word.wrapping_mul((CHUNK / 8) as u64 * 5);
        assert_eq!(lane.run(Kernel::Read, 5), expect);
        lane.run(Kernel::Copy, 9);
        let mut fresh = Lane::new(4 * CHUNK).expect("map");
        fresh.run(Kernel::NtWrite, 3);
        let bytes = fresh.region.as_slice();
        assert!(bytes[..3 * CHUNK].iter().all(|&b| b == 0x3c));
        assert!(bytes[3 * CHUNK..].iter().all(|&b| b == 0x5a));
    }

    #[test]
    fn team_runs_every_thread_and_stops_on_drop() {
        let cpus = sched::allowed_cpus().expect("affinity");
        let own = cpus.last().copied();
        let mut team = Team::start(64 * 1024, &cpus, own).expect("team");
        assert_eq!(team.threads(), cpus.len());
        assert_eq!(
            team.bytes_per_iter(Kernel::Write),
            65536 * cpus.len() as u64
        );
        for _ in 0..50 {
            team.run(Kernel::Write, 3);
        }
        assert_eq!(team.shared.done.load(Ordering::Acquire), cpus.len() - 1);
    }
}
