//! Ground-truth tests of the wrappers: each call must do exactly what its name says.

use std::os::fd::AsRawFd;
use std::sync::atomic::AtomicU32;

use crate::clock::{self, ClockId};
use crate::process::{EchoChild, ExecTarget};
use crate::{futex, kernels, sched, syscall};

#[test]
fn clocks_agree_between_vdso_and_syscall() {
    for c in [ClockId::Monotonic, ClockId::Realtime, ClockId::Boottime] {
        let a = clock::clock_gettime_ns(c);
        let b = clock::clock_gettime_syscall_ns(c);
        let c2 = clock::clock_gettime_ns(c);
        assert!(a <= b && b <= c2, "{a} {b} {c2}");
    }
    assert!(
        clock::clock_getres_ns(ClockId::MonotonicCoarse)
            >= clock::clock_getres_ns(ClockId::Monotonic)
    );
    let tv = clock::gettimeofday_us();
    let t = clock::time_s();
    assert!((tv / 1_000_000 - t).abs() <= 1);
}

#[test]
fn counter_moves_forward() {
    if clock::counter_name().is_none() {
        crate::skip::skip("counter", "no free-running counter on this architecture");
        return;
    }
    let a = clock::counter();
    std::thread::sleep(std::time::Duration::from_millis(1));
    let b = clock::counter();
    assert!(b > a);
    if clock::has_ordered_counter() {
        assert!(clock::counter_ordered().is_some_and(|c| c >= b));
    }
}

#[test]
fn syscalls_do_what_they_say() {
    assert_eq!(
        syscall::null_syscall(),
        i64::from(std::os::unix::process::parent_id())
    );
    assert_eq!(syscall::efault_call(), libc::EFAULT);
    assert_eq!(syscall::open_close(c"/nonexistent/sysmeter"), libc::ENOENT);
    assert_eq!(syscall::open_close(c"/dev/null"), 0);
    assert_eq!(syscall::stat(c"/dev/null"), 0);
    let zero = std::fs::File::open("/dev/zero").expect("/dev/zero");
    let mut buf = [7u8; 3];
    assert_eq!(syscall::read(zero.as_raw_fd(), &mut buf), 3);
    assert_eq!(buf, [0, 0, 0]);
    assert_eq!(syscall::fstat(zero.as_raw_fd()), 0);
    assert_eq!(syscall::fstat(-1), libc::EBADF);
    assert_eq!(syscall::write(-1, b"x"), -(libc::EBADF as isize));
    assert_eq!(syscall::strlen(c"hello"), 5);
    let mut dst = [0u8; 4];
    syscall::memcpy(&mut dst, b"abcd");
    assert_eq!(&dst, b"abcd");
    syscall::malloc_free(64);
}

#[test]
fn processes_run_and_report_status() {
    assert_eq!(crate::process::fork_exit_wait().expect("fork"), 0);
    if std::path::Path::new("/bin/true").exists() {
        let t = ExecTarget::new(&[c"/bin/true"]);
        assert_eq!(crate::process::spawn_wait(&t).expect("spawn"), 0);
        assert_eq!(crate::process::fork_exec_wait(&t).expect("fork+exec"), 0);
    } else {
        crate::skip::skip("bintrue", "/bin/true is missing");
    }
    let missing = ExecTarget::new(&[c"/nonexistent/program"]);
    assert_eq!(
        crate::process::fork_exec_wait(&missing).expect("fork"),
        127 << 8
    );
}

#[test]
fn echo_child_echoes_and_is_reaped_on_drop() {
    let (req_r, req_w) = std::io::pipe().expect("pipe");
    let (rep_r, rep_w) = std::io::pipe().expect("pipe");
    let close = [req_w.as_raw_fd(), rep_r.as_raw_fd()];
    let child =
        EchoChild::spawn(req_r.as_raw_fd(), rep_w.as_raw_fd(), 3, None, &close).expect("fork");
    assert_eq!(syscall::write(req_w.as_raw_fd(), b"abc"), 3);
    let mut buf = [0u8; 3];
    let mut got = 0;
    while got < 3 {
        let n = syscall::read(rep_r.as_raw_fd(), &mut buf[got..]);
        assert!(n > 0);
        got += n as usize;
    }
    assert_eq!(&buf, b"abc");
    let pid = child.pid();
    drop(child);
    // A reaped child has no /proc entry left.
    assert!(
        !std::path::Path::new(&format!("/proc/{pid}")).exists(),
        "child {pid} not reaped"
    );
}

#[test]
fn pinning_moves_the_thread() {
    let cpus = sched::allowed_cpus().expect("affinity");
    assert!(!cpus.is_empty());
    let target = *cpus.last().expect("a cpu");
    std::thread::spawn(move || {
        sched::pin_current_thread(target).expect("pin");
        sched::yield_now();
        assert_eq!(sched::current_cpu(), Some(target));
    })
    .join()
    .expect("thread");
    assert!(sched::pin_current_thread(1 << 20).is_err());
}

#[test]
fn kernels_compute_what_they_claim() {
    let data = [0u8, 1, 0, 5, 9, 0, 1];
    assert_eq!(kernels::branchy_count(&data), 4);
    assert_eq!(kernels::call3(1, 2, 4), 7);
    assert_eq!(kernels::call7(1, 2, 4, 8, 16, 32, 64), 127);
    // Adding 1 a hundred times per iteration, carried from one iteration to the next (one
    // chain, not restarted per block).
    let start = 0x12_3456_789b_u64;
    let once = kernels::run_chain(kernels::Chain::IntAdd, 1);
    assert_eq!(once, (start + 100) ^ 1.0f64.to_bits());
    assert_eq!(
        kernels::run_chain(kernels::Chain::IntAdd, 3),
        (start + 300) ^ 1.0f64.to_bits()
    );
    // Squaring is carried too: two iterations are 200 squarings of the start.
    let squared = (0..200).fold(start, |x, _| x.wrapping_mul(x));
    assert_eq!(
        kernels::run_chain(kernels::Chain::IntMul, 2),
        squared ^ 1.0f64.to_bits()
    );
    // Dividing by 1 keeps the value; sqrt(1) stays 1.
    assert_eq!(
        kernels::run_chain(kernels::Chain::IntDiv, 1),
        start ^ 1.0f64.to_bits()
    );
    assert_eq!(
        kernels::run_chain(kernels::Chain::FloatSqrt, 1),
        start ^ 1.0f64.to_bits()
    );
    kernels::tight_loop(1000);
    kernels::tight_loop(0);
}

#[test]
fn futex_wait_returns_when_the_value_differs() {
    let w = AtomicU32::new(1);
    futex::wait(&w, 0); // value is 1, not 0: returns at once (EAGAIN)
    futex::wake(&w, 1); // no waiters: a no-op
}
