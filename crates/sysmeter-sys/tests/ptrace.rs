//! The ptrace and seccomp mechanism on real children: a traced `true` shows its execve and
//! balanced entries/exits; a calibration child with a seccomp filter stops exactly once per
//! selected call. One test function, because `wait_any` waits for *any* child and parallel
//! tests in the same process would steal each other's children.

use std::ffi::CString;

use sysmeter_sys::ptrace::{
    self, CalibrationMode, Options, Resume, SpawnSpec, Stop, SyscallStop, spawn_calibration,
    spawn_traced,
};
use sysmeter_sys::seccomp::{SeccompFilter, native_audit_arch};

fn traced_true() {
    let program = CString::new("/bin/true").expect("ptrace test step");
    let argv = [CString::new("true").expect("ptrace test step")];
    let options = Options {
        exit_kill: true,
        ..Options::default()
    };
    let spec = SpawnSpec {
        program: &program,
        argv: &argv,
        cpu: None,
        seccomp: None,
        options,
    };
    let mut child = spawn_traced(&spec).expect("spawn");
    ptrace::resume(child.pid(), Resume::Syscall, 0).expect("ptrace test step");
    let (mut entries, mut exits, mut execs, mut exit_code) = (0, 0, 0, None);
    loop {
        let (stop, _) = ptrace::wait_any().expect("ptrace test step");
        match stop {
            Stop::Syscall { tid, info } => {
                match info {
                    SyscallStop::Entry { nr, .. } => {
                        entries += 1;
                        if nr == libc::SYS_execve as u64 {
                            execs += 1;
                        }
                    }
                    SyscallStop::Exit { .. } => exits += 1,
                    SyscallStop::Unknown => panic!("unknown syscall stop"),
                }
                ptrace::resume(tid, Resume::Syscall, 0).expect("ptrace test step");
            }
            Stop::Exited { tid, code } if tid == child.pid() => {
                exit_code = Some(code);
                child.reaped();
                break;
            }
            Stop::NoTasks => break,
            other => {
                if let Some(tid) = other.tid() {
                    let _ = ptrace::resume(tid, Resume::Syscall, 0);
                }
            }
        }
    }
    assert_eq!(exit_code, Some(0));
    assert_eq!(execs, 1, "one execve");
    // exit_group has an entry and no exit; the first stop may be the exit of kill().
    assert!(entries >= 10, "{entries} entries");
    assert!(
        (entries as i64 - exits as i64).abs() <= 2,
        "{entries} vs {exits}"
    );
}

fn seccomp_calibration() {
    let nr = libc::SYS_getppid as u32;
    let filter = SeccompFilter::trace_only(native_audit_arch(), &[nr]).expect("ptrace test step");
    let options = Options {
        seccomp: true,
        exit_kill: true,
        ..Options::default()
    };
    let mode = CalibrationMode::Ptrace {
        options,
        seccomp: Some(&filter),
    };
    let mut child = spawn_calibration(4, 25, mode, None).expect("spawn calibration");
    ptrace::resume(child.pid(), Resume::Continue, 0).expect("ptrace test step");
    child.go().expect("ptrace test step");
    let (mut seccomp_stops, mut exits, mut pending) = (0, 0, false);
    loop {
        let (stop, _) = ptrace::wait_any().expect("ptrace test step");
        match stop {
            Stop::Seccomp { tid, nr: got, .. } => {
                assert_eq!(got, u64::from(nr));
                seccomp_stops += 1;
                pending = true;
                ptrace::resume(tid, Resume::Syscall, 0).expect("ptrace test step");
            }
            Stop::Syscall { tid, info } => {
                if pending && matches!(info, SyscallStop::Exit { .. }) {
                    exits += 1;
                    pending = false;
                }
                ptrace::resume(tid, Resume::Continue, 0).expect("ptrace test step");
            }
            Stop::Exited { code, .. } => {
                assert_eq!(code, 0);
                child.reaped();
                break;
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(seccomp_stops, 100);
    assert_eq!(exits, 100);
    let times = child.chunk_times_ns().expect("ptrace test step");
    assert_eq!(times.len(), 4);
    assert!(times.iter().all(|&t| t > 0));
}

#[test]
fn ptrace_and_seccomp_mechanism() {
    traced_true();
    seccomp_calibration();
}
