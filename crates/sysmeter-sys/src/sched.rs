//! CPU affinity and scheduling: pin the calling thread to one CPU, list the CPUs this
//! process may use, and yield.

use std::io;

/// Pin the calling thread (not the whole process) to `cpu`.
pub fn pin_current_thread(cpu: usize) -> io::Result<()> {
    if cpu >= libc::CPU_SETSIZE as usize {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "CPU number too large",
        ));
    }
    set_current_thread_cpus(&[cpu])
}

/// Restore the calling thread's affinity to all of `cpus`.
pub fn set_current_thread_cpus(cpus: &[usize]) -> io::Result<()> {
    // SAFETY: cpu_set_t is plain data; zeroed is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &cpu in cpus.iter().filter(|&&c| c < libc::CPU_SETSIZE as usize) {
        // SAFETY: `cpu` < CPU_SETSIZE was filtered above.
        unsafe { libc::CPU_SET(cpu, &mut set) };
    }
    // SAFETY: pid 0 = calling thread; `set` is a valid cpu_set_t of the size passed.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc == 0 {
        Ok(())
    } else {
        Err(crate::last_error())
    }
}

/// The CPUs the calling thread may run on, ascending.
pub fn allowed_cpus() -> io::Result<Vec<usize>> {
    // SAFETY: cpu_set_t is plain data; zeroed is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: pid 0 = calling thread; `set` is valid and writable for its full size.
    let rc =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        return Err(crate::last_error());
    }
    let cpus = (0..libc::CPU_SETSIZE as usize)
        // SAFETY: `c` < CPU_SETSIZE, and `set` is initialised.
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect();
    Ok(cpus)
}

/// The CPU the calling thread is running on right now.
pub fn current_cpu() -> Option<usize> {
    // SAFETY: sched_getcpu has no arguments and no memory effects.
    let c = unsafe { libc::sched_getcpu() };
    usize::try_from(c).ok()
}

/// `sched_yield()`: give the CPU to another runnable thread of the same priority, if any.
#[inline]
pub fn yield_now() {
    // SAFETY: sched_yield has no arguments and cannot fail on Linux.
    unsafe { libc::sched_yield() };
}
