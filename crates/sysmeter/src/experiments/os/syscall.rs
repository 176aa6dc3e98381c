//! `os.syscall`: the cost of entering the kernel: a null system call, small reads and writes,
//! stat/fstat, open+close, and the error paths (ENOENT, EFAULT).

use std::ffi::CStr;
use std::fs::File;
use std::hint::black_box;
use std::os::fd::AsRawFd;

use sysmeter_sys::syscall as sys;

use crate::experiments::cpu::call::CALL0;
use crate::experiments::estimate;
use crate::harness::{Ctx, Experiment, ExperimentError, Measured, Spec};
use crate::model::{Estimate, HostInfo};

/// The experiment.
pub struct OsSyscall;

/// Name of the null system call metric.
pub const NULL: &str = "null (getppid)";
const MISSING: &CStr = c"/nonexistent-sysmeter-path/for/ENOENT";

impl Experiment for OsSyscall {
    fn page(&self) -> &'static str {
        include_str!("syscall.md")
    }

    fn estimate(&self, host: &HostInfo, tsc_ghz: Option<f64>) -> Vec<Estimate> {
        let mitigated = host
            .vulnerabilities
            .iter()
            .filter(|(_, s)| s.starts_with("Mitigation"))
            .count();
        estimate::cycles(
            NULL,
            100.0 + 50.0 * mitigated.min(4) as f64,
            tsc_ghz,
            &format!(
                "syscall/sysret and the kernel entry path (~100 cycles), plus ~50 per active \
                 entry mitigation (capped at 4; {mitigated} listed by the kernel)"
            ),
        )
        .into_iter()
        .collect()
    }

    fn run(&self, ctx: &mut Ctx<'_>) -> Result<Measured, ExperimentError> {
        let mut out = Measured::default();
        let null = ctx.measure(Spec::new(NULL).note("system call"), |n| {
            for _ in 0..n {
                black_box(sys::null_syscall());
            }
        })?;
        out.metrics.push(null);
        io_calls(ctx, &mut out)?;
        error_paths(ctx, &mut out)?;
        ratio_to_call(ctx, &mut out)?;
        Ok(out)
    }
}

fn open(path: &str) -> Result<File, ExperimentError> {
    File::options()
        .read(true)
        .write(path == "/dev/null")
        .open(path)
        .map_err(|e| ExperimentError::io(&format!("open {path}"), e))
}

fn io_calls(ctx: &mut Ctx<'_>, out: &mut Measured) -> Result<(), ExperimentError> {
    let zero = open("/dev/zero")?;
    let null = open("/dev/null")?;
    let (zfd, nfd) = (zero.as_raw_fd(), null.as_raw_fd());
    let mut buf = [0u8; 1];
    out.metrics
        .push(ctx.measure(Spec::new("read 1 B /dev/zero"), |n| {
            for _ in 0..n {
                black_box(sys::read(zfd, &mut buf));
            }
        })?);
    out.metrics
        .push(ctx.measure(Spec::new("write 1 B /dev/null"), |n| {
            for _ in 0..n {
                black_box(sys::write(nfd, b"x"));
            }
        })?);
    let exe = std::env::current_exe().map_err(|e| ExperimentError::io("find own executable", e))?;
    let exe_c = std::ffi::CString::new(exe.as_os_str().as_encoded_bytes())
        .map_err(|e| ExperimentError::Failed(format!("executable path: {e}")))?;
    let exe_file = open(&exe.to_string_lossy())?;
    let efd = exe_file.as_raw_fd();
    out.metrics
        .push(ctx.measure(Spec::new("stat (cached file)"), |n| {
            for _ in 0..n {
                black_box(sys::stat(&exe_c));
            }
        })?);
    out.metrics.push(ctx.measure(Spec::new("fstat"), |n| {
        for _ in 0..n {
            black_box(sys::fstat(efd));
        }
    })?);
    out.metrics
        .push(ctx.measure(Spec::new("open+close /dev/null").ops(1), |n| {
            for _ in 0..n {
                black_box(sys::open_close(c"/dev/null"));
            }
        })?);
    Ok(())
}

fn error_paths(ctx: &mut Ctx<'_>, out: &mut Measured) -> Result<(), ExperimentError> {
    if sys::open_close(MISSING) != libc::ENOENT || sys::efault_call() != libc::EFAULT {
        return Err(ExperimentError::Failed(
            "the error-path calls did not return ENOENT/EFAULT as expected".into(),
        ));
    }
    out.metrics
        .push(ctx.measure(Spec::new("open missing file (ENOENT)"), |n| {
            for _ in 0..n {
                black_box(sys::open_close(MISSING));
            }
        })?);
    out.metrics
        .push(ctx.measure(Spec::new("bad pointer (EFAULT)"), |n| {
            for _ in 0..n {
                black_box(sys::efault_call());
            }
        })?);
    Ok(())
}

/// The syscall ÷ function call finding, with the call from cpu.call when it ran.
fn ratio_to_call(ctx: &mut Ctx<'_>, out: &mut Measured) -> Result<(), ExperimentError> {
    // The loop turn subtracted from the call: the reference metric's own when it is measured
    // here, else the run's calibration (cpu.call's metric is not at hand).
    let (call, loop_ns) = match ctx.previous_median("cpu.call", CALL0) {
        Some(c) => (c, ctx.calib.loop_overhead_ns),
        None => {
            let m = ctx.measure(Spec::new("reference: call, 0 args"), |n| {
                for _ in 0..n {
                    black_box(sysmeter_sys::kernels::call0());
                }
            })?;
            let c = (m.summary.median, m.subtracted_overhead_ns);
            out.metrics.push(m);
            c
        }
    };
    let Some(null) = out.median(NULL) else {
        return Ok(());
    };
    match crate::stats::ratio(null, call) {
        Some(r) => out.find(
            "syscall_vs_call",
            format!(
                "A null system call ({null:.1} ns) costs {r:.0}x a function call ({call:.2} ns): \
                 the price of crossing into the kernel and back, with its mitigations."
            ),
            Some(r),
        ),
        // The call vanished into the loop overhead: say so rather than divide by ~0.
        None => out.find(
            "syscall_vs_call",
            format!(
                "A null system call costs {null:.1} ns; a function call was indistinguishable \
                 from the loop overhead ({loop_ns:.2} ns), so the ratio is at least {:.0}x.",
                null / loop_ns.max(0.01)
            ),
            None,
        ),
    }
    Ok(())
}
