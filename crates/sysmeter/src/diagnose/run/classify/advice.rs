//! The words of a verdict: the time-split sentence, what the command waited on, the next
//! commands and the usual remedies for each class. Pure string building.

use super::{CONTENTION_SHARE, DeviceLoad, Evidence, Wait};
use crate::model::units;

fn secs(s: f64) -> String {
    units::duration_ns(s * 1e9)
}

/// "real 2.00 s, user 1.98 s, system 10.0 ms: 0.99 CPUs busy of 2 usable".
pub(super) fn time_split(e: &Evidence, demand: f64) -> String {
    let cpu = e.user_s + e.system_s;
    let busy = cpu / e.real_s.max(1e-9);
    let mut text = format!(
        "real {}, user {}, system {}: on average {} CPUs busy",
        secs(e.real_s),
        secs(e.user_s),
        secs(e.system_s),
        units::sig3(busy),
    );
    if e.cpus > 0 {
        text.push_str(&format!(" of {} usable", e.cpus));
    }
    if let Some(q) = e.runqueue_s.filter(|&q| q > 0.0) {
        text.push_str(&format!(
            "; it also waited {} for a CPU (demand {} CPUs)",
            secs(q),
            units::sig3(demand)
        ));
        let share = q / e.real_s.max(1e-9);
        if share >= CONTENTION_SHARE {
            text.push_str(&format!(
                ". Other load kept it off a CPU for {:.0}% of the run: its real time would be \
                 shorter on an idle machine",
                share * 100.0
            ));
        }
    }
    text.push('.');
    text
}

pub(super) fn cpu_parts(target: &str) -> (String, String, String) {
    (
        "CPU-bound".into(),
        format!("`sysmeter profile {target}` to see which functions take the time"),
        "a better algorithm or data structure, less work per item, caching of computed \
         results, a faster CPU or memory system, or more threads if the work can be split"
            .into(),
    )
}

pub(super) fn kernel_parts(target: &str) -> (String, String, String) {
    (
        "kernel-bound".into(),
        format!("`sysmeter trace {target}` to see which system calls take the time"),
        "fewer system calls (bigger buffers, batching, user-level caching of results such as \
         stat or time), cheaper ones, or a faster CPU"
            .into(),
    )
}

/// What, concretely, the command waited on.
pub(super) fn wait_reason(e: &Evidence, w: Wait) -> String {
    let real = e.real_s.max(1e-9);
    match w {
        Wait::Paging => format!(
            "It waited on paging: {} major faults ({}/s), {} pages/s swapped.",
            e.major_faults,
            units::sig3(e.major_faults as f64 / real),
            units::sig3(e.swap_pages_per_s)
        ),
        Wait::Disk => {
            let mut t = "It waited on the disk".to_string();
            if let Some(s) = e.disk_wait_share {
                t.push_str(&format!(
                    ": in disk wait (state D) in {:.0}% of the samples",
                    s * 100.0
                ));
            }
            if let Some(b) = e.storage_bytes {
                t.push_str(&format!("; {} to or from storage", units::bytes(b as f64)));
            }
            if let Some(d) = &e.disk {
                t.push_str(&format!("; {} {}", d.name, device_load(d)));
            }
            t.push('.');
            t
        }
        Wait::Network => {
            let mut t = format!("It waited with {} socket(s) open", e.sockets);
            if let Some(n) = &e.net {
                t.push_str(&format!(
                    "; busiest interface {} {}",
                    n.name,
                    device_load(n)
                ));
            }
            t.push('.');
            t
        }
        Wait::Other => {
            let mut t = format!(
                "It slept on something else (a timer, a pipe, a lock or another process): {} \
                 voluntary context switches ({}/s)",
                e.voluntary_switches,
                units::sig3(e.voluntary_switches as f64 / real)
            );
            if let Some(idle) = e.idle_pct {
                t.push_str(&format!(", while the CPUs were {idle:.0}% idle"));
            }
            t.push('.');
            t
        }
    }
}

fn device_load(d: &DeviceLoad) -> String {
    match d.busy_pct {
        Some(b) => format!("busy {b:.0}%, {}", units::rate(d.bytes_per_s)),
        None => format!("moved {}", units::rate(d.bytes_per_s)),
    }
}

/// (what, next, remedies) of a wait cause; next starts with the off-CPU profile (or the
/// lock report, when futex waits dominate).
pub(super) fn wait_parts(e: &Evidence, w: Wait, target: &str) -> (String, String, String) {
    let (what, next, remedies) = cause_parts(e, w, target);
    let first = match super::futex_dominated(e) {
        true => format!(
            "`sysmeter locks {target}` (futex waits dominate: which locks, who holds them),              `sysmeter profile --off-cpu {target}`"
        ),
        false => format!("`sysmeter profile --off-cpu {target}` (where it waits and who wakes it)"),
    };
    (what, format!("{first}; {next}"), remedies)
}

fn cause_parts(e: &Evidence, w: Wait, target: &str) -> (String, String, String) {
    match w {
        Wait::Paging => (
            "paging".into(),
            "`vmstat 1` while it runs, and `sysmeter bench mem.pagefault` for the cost of one \
             fault"
                .into(),
            "more memory, a smaller working set, better locality, or less competing memory use"
                .into(),
        ),
        Wait::Disk => {
            let dev = e.disk.as_ref().map_or("DEVICE", |d| d.name.as_str());
            (
                format!("disk {dev}"),
                format!("`iostat -x {dev} 1` while it runs, `sysmeter trace -e file {target}`"),
                "caching (page cache, application cache), fewer and larger I/Os, better disk \
                 data structures, or a faster device"
                    .into(),
            )
        }
        Wait::Network => {
            let dev = e.net.as_ref().map_or("the network", |n| n.name.as_str());
            (
                format!("network {dev}"),
                format!("`sysmeter trace -e network {target}` and the interface {dev} (`ss -tin`)"),
                "caching of remote results, fewer round trips (batching, pipelining), a more \
                 efficient protocol, or a faster link"
                    .into(),
            )
        }
        Wait::Other => (
            "waiting".into(),
            format!(
                "`sysmeter trace {target}` to see which calls block (read, poll, futex, \
                 wait4, nanosleep)"
            ),
            "overlap the waiting with useful work, remove sleeps and polling, or speed up the \
             process or service it waits for"
                .into(),
        ),
    }
}

/// Next step when other load kept the command from a CPU.
pub(super) fn contention_next() -> String {
    "`top` or `sysmeter host` (load warnings) to see what else runs".into()
}

/// Remedies for CPU contention.
pub(super) fn contention_fix() -> String {
    "run it when or where the CPUs are free, give it more CPUs (affinity, cgroup quota) or a \
     higher priority"
        .into()
}
