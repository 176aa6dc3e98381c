//! Clocks: the CPU's free-running counter (rdtsc/rdtscp on x86_64, cntvct_el0 on aarch64),
//! `clock_gettime` through the C library (and so the vDSO where the kernel offers it),
//! `clock_gettime` forced through the real system call, `gettimeofday` and `time`.
//!
//! These are both the harness's time sources and the subjects of `cpu.timer`.

/// A POSIX clock id that `cpu.timer` measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockId {
    /// CLOCK_MONOTONIC.
    Monotonic,
    /// CLOCK_MONOTONIC_RAW.
    MonotonicRaw,
    /// CLOCK_MONOTONIC_COARSE.
    MonotonicCoarse,
    /// CLOCK_REALTIME.
    Realtime,
    /// CLOCK_REALTIME_COARSE.
    RealtimeCoarse,
    /// CLOCK_BOOTTIME.
    Boottime,
    /// CLOCK_PROCESS_CPUTIME_ID.
    ProcessCputime,
    /// CLOCK_THREAD_CPUTIME_ID.
    ThreadCputime,
}

impl ClockId {
    /// Every clock, in report order.
    pub const ALL: [ClockId; 8] = [
        ClockId::Monotonic,
        ClockId::MonotonicRaw,
        ClockId::MonotonicCoarse,
        ClockId::Realtime,
        ClockId::RealtimeCoarse,
        ClockId::Boottime,
        ClockId::ProcessCputime,
        ClockId::ThreadCputime,
    ];

    /// The C name of the clock.
    pub fn name(self) -> &'static str {
        match self {
            ClockId::Monotonic => "CLOCK_MONOTONIC",
            ClockId::MonotonicRaw => "CLOCK_MONOTONIC_RAW",
            ClockId::MonotonicCoarse => "CLOCK_MONOTONIC_COARSE",
            ClockId::Realtime => "CLOCK_REALTIME",
            ClockId::RealtimeCoarse => "CLOCK_REALTIME_COARSE",
            ClockId::Boottime => "CLOCK_BOOTTIME",
            ClockId::ProcessCputime => "CLOCK_PROCESS_CPUTIME_ID",
            ClockId::ThreadCputime => "CLOCK_THREAD_CPUTIME_ID",
        }
    }

    fn raw(self) -> libc::clockid_t {
        match self {
            ClockId::Monotonic => libc::CLOCK_MONOTONIC,
            ClockId::MonotonicRaw => libc::CLOCK_MONOTONIC_RAW,
            ClockId::MonotonicCoarse => libc::CLOCK_MONOTONIC_COARSE,
            ClockId::Realtime => libc::CLOCK_REALTIME,
            ClockId::RealtimeCoarse => libc::CLOCK_REALTIME_COARSE,
            ClockId::Boottime => libc::CLOCK_BOOTTIME,
            ClockId::ProcessCputime => libc::CLOCK_PROCESS_CPUTIME_ID,
            ClockId::ThreadCputime => libc::CLOCK_THREAD_CPUTIME_ID,
        }
    }
}

/// The time `fill` writes into a zeroed timespec, in ns.
#[inline(always)]
fn ns_of(fill: impl FnOnce(&mut libc::timespec)) -> i64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    fill(&mut ts);
    ts.tv_sec
        .saturating_mul(1_000_000_000)
        .saturating_add(ts.tv_nsec)
}

/// `clock_gettime(clock)` through the C library (the vDSO answers it when it can), in ns.
#[inline]
pub fn clock_gettime_ns(clock: ClockId) -> i64 {
    ns_of(|ts| {
        // SAFETY: `ts` is a valid, writable timespec; the clock id is valid.
        unsafe { libc::clock_gettime(clock.raw(), ts) };
    })
}

/// `clock_gettime(clock)` through the real `syscall` instruction, bypassing the vDSO, in ns.
#[inline]
pub fn clock_gettime_syscall_ns(clock: ClockId) -> i64 {
    ns_of(|ts| {
        // SAFETY: SYS_clock_gettime takes (clockid_t, struct timespec *); `ts` is valid and
        // writable.
        unsafe {
            libc::syscall(
                libc::SYS_clock_gettime,
                clock.raw(),
                ts as *mut libc::timespec,
            )
        };
    })
}

/// `clock_getres(clock)` in ns (what the kernel claims the resolution is).
pub fn clock_getres_ns(clock: ClockId) -> i64 {
    ns_of(|ts| {
        // SAFETY: `ts` is a valid, writable timespec.
        unsafe { libc::clock_getres(clock.raw(), ts) };
    })
}

/// `gettimeofday()` in µs since the epoch.
#[inline]
pub fn gettimeofday_us() -> i64 {
    let mut tv = libc::timeval {
        tv_sec: 0,
        tv_usec: 0,
    };
    // SAFETY: `tv` is valid and writable; a null timezone pointer is allowed.
    unsafe { libc::gettimeofday(&mut tv, std::ptr::null_mut()) };
    tv.tv_sec
        .saturating_mul(1_000_000)
        .saturating_add(tv.tv_usec)
}

/// `time(NULL)` in seconds since the epoch.
#[inline]
pub fn time_s() -> i64 {
    // SAFETY: `time` accepts a null pointer and then only returns the value.
    unsafe { libc::time(std::ptr::null_mut()) }
}

/// Name of the free-running counter [`counter`] reads on this architecture.
pub fn counter_name() -> Option<&'static str> {
    if cfg!(target_arch = "x86_64") {
        Some("rdtsc")
    } else if cfg!(target_arch = "aarch64") {
        Some("cntvct_el0")
    } else {
        None
    }
}

/// Read the free-running counter (rdtsc / cntvct_el0); 0 where there is none.
#[inline]
pub fn counter() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: rdtsc has no memory effects and exists on every x86_64 CPU.
        unsafe { core::arch::x86_64::_rdtsc() }
    }
    #[cfg(target_arch = "aarch64")]
    {
        let v: u64;
        // SAFETY: reading cntvct_el0 is permitted at EL0 on Linux and has no side effects.
        unsafe { core::arch::asm!("mrs {v}, cntvct_el0", v = out(reg) v, options(nomem, nostack)) };
        v
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        0
    }
}

/// Read the counter with the ordering variant: rdtscp on x86_64 (waits for earlier
/// instructions), `isb; mrs cntvct_el0` on aarch64. `None` where the CPU lacks it.
#[inline]
pub fn counter_ordered() -> Option<u64> {
    #[cfg(target_arch = "x86_64")]
    {
        let mut aux = 0u32;
        // SAFETY: callers only reach this when cpuinfo lists `rdtscp` (checked by
        // `has_rdtscp`); it writes `aux`, a valid local.
        Some(unsafe { core::arch::x86_64::__rdtscp(&mut aux) })
    }
    #[cfg(target_arch = "aarch64")]
    {
        let v: u64;
        // SAFETY: isb and reading cntvct_el0 are permitted at EL0 and have no side effects.
        unsafe { core::arch::asm!("isb", "mrs {v}, cntvct_el0", v = out(reg) v, options(nostack)) };
        Some(v)
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        None
    }
}

/// Whether [`counter_ordered`] may be called (rdtscp present on x86_64).
pub fn has_ordered_counter() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::fs::read_to_string("/proc/cpuinfo")
            .map(|s| s.split_whitespace().any(|w| w == "rdtscp"))
            .unwrap_or(false)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        cfg!(target_arch = "aarch64")
    }
}
