//! A BPF program that returns 0 on one tracepoint, attached for as long as the [`Blinder`]
//! lives: what an older sysmeter, a hand-written loader or a bcc tool does, and what makes
//! the kernel drop that tracepoint's perf samples for every perf reader on the machine. It
//! lets the tests see a perf backend blinded on purpose and check that it says so. Built
//! with clang at test time (no headers needed) and loaded with aya; the caller holds the
//! event's [`super::observing`] lock meanwhile.

use std::path::Path;

use aya::programs::TracePoint;

use super::observing::Event;
use super::skip::{Cap, Missing};

/// The program's name in the object (the kernel shows it in `bpftool prog`).
pub const NAME: &str = "blinder";

const SOURCE: &str = r#"
#define SEC(name) __attribute__((section(name), used))
SEC("tracepoint") int blinder(void *ctx) { return 0; }
char LICENSE[] SEC("license") = "GPL";
"#;

/// The attached program (detached and unloaded on drop).
pub struct Blinder {
    _bpf: aya::Ebpf,
}

/// The (category, name) of the tracepoint of `event` that the blinder sits on.
fn tracepoint(event: Event) -> (&'static str, &'static str) {
    match event {
        Event::Futex => ("syscalls", "sys_enter_futex"),
        Event::Sched => ("sched", "sched_switch"),
        Event::RawSyscalls => ("raw_syscalls", "sys_enter"),
    }
}

/// Attaches the blinder to `event`'s tracepoint; needs clang and BPF (capability `bpf`).
pub fn blind(event: Event, dir: &Path) -> Result<Blinder, Missing> {
    super::needs::bpf()?;
    let obj = dir.join("blinder.bpf.o");
    let src = dir.join("blinder.bpf.c");
    std::fs::write(&src, SOURCE).expect("write the blinder");
    let built = std::process::Command::new("clang")
        .args(["-O2", "-target", "bpf", "-c"])
        .arg(&src)
        .arg("-o")
        .arg(&obj)
        .status();
    if !built.is_ok_and(|s| s.success()) {
        return Err(Missing::new(
            Cap::Bpf,
            "clang cannot build a BPF program (apt-get install clang)",
        ));
    }
    let mut bpf = aya::Ebpf::load(&std::fs::read(&obj).expect("the blinder object"))
        .map_err(|e| Missing::new(Cap::Bpf, format!("loading the blinder: {e}")))?;
    let program: &mut TracePoint = bpf
        .program_mut(NAME)
        .expect("the blinder program")
        .try_into()
        .expect("a tracepoint program");
    program.load().expect("load the blinder");
    let (category, name) = tracepoint(event);
    program.attach(category, name).expect("attach the blinder");
    Ok(Blinder { _bpf: bpf })
}
