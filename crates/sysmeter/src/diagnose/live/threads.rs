//! Each thread's time as the kernel counts it, read once a second for the live view:
//! `/proc/PID/task/TID/schedstat` (time on a CPU and time runnable waiting for one, ns) and
//! its name (`comm`); the difference between two reads is the thread's second. Cheap (two
//! small reads per thread) and exact, where samples would only estimate it. Depends on
//! nothing but /proc.

use std::collections::HashMap;

use super::window::ThreadTick;

/// The counters of every thread at the last read.
#[derive(Debug, Default)]
pub struct ThreadClock {
    last: HashMap<i32, (u64, u64)>,
}

impl ThreadClock {
    /// Each thread's time since the last read (a thread new since then: since it began),
    /// and the names of all of them.
    pub fn tick(&mut self, pid: i32) -> (Vec<ThreadTick>, Vec<(i32, String)>) {
        let mut ticks = Vec::new();
        let mut names = Vec::new();
        let mut now = HashMap::new();
        for tid in tids(pid) {
            let Some((run, wait)) = schedstat(pid, tid) else {
                continue;
            };
            let (run0, wait0) = self.last.get(&tid).copied().unwrap_or((0, 0));
            ticks.push(ThreadTick {
                tid,
                cpu_ns: run.saturating_sub(run0),
                runq_ns: wait.saturating_sub(wait0),
            });
            now.insert(tid, (run, wait));
            if let Ok(name) = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/comm")) {
                names.push((tid, name.trim_end().to_string()));
            }
        }
        self.last = now;
        (ticks, names)
    }
}

/// Thread ids of `pid` now (none once it is gone).
fn tids(pid: i32) -> Vec<i32> {
    let mut tids: Vec<i32> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|dir| {
            dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    tids.sort_unstable();
    tids
}

/// Time on a CPU and time waiting on a run queue of thread `tid`, ns.
fn schedstat(pid: i32, tid: i32) -> Option<(u64, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/schedstat")).ok()?;
    parse_schedstat(&text)
}

/// `run_ns wait_ns slices` → (run, wait).
fn parse_schedstat(text: &str) -> Option<(u64, u64)> {
    let mut fields = text.split_whitespace().map(|f| f.parse::<u64>().ok());
    Some((fields.next()??, fields.next()??))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedstat_gives_run_and_wait() {
        assert_eq!(parse_schedstat("123 45 6\n"), Some((123, 45)));
        assert_eq!(parse_schedstat("x"), None);
    }

    #[test]
    fn a_busy_thread_of_this_process_shows_cpu_time_between_two_reads() {
        let mut clock = ThreadClock::default();
        let pid = std::process::id() as i32;
        clock.tick(pid);
        let start = std::time::Instant::now();
        let mut x = 0u64;
        while start.elapsed() < std::time::Duration::from_millis(50) {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        let (ticks, names) = clock.tick(pid);
        assert!(ticks.iter().any(|t| t.cpu_ns > 0), "{ticks:?}");
        assert_eq!(ticks.len(), names.len());
    }
}
