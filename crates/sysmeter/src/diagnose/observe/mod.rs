//! The floor under every diagnosis: what `trace`, `calls`, `profile`, `offcpu`, `locks`, `run`
//! and `scale` share to look at a program, and the only part of `diagnose` they may import from
//! each other.
//!
//! - [`target`]: the one `Target { Launch, Attach }` and the program resolver (126/127);
//! - [`proc`]: a target's threads, its end, the online CPUs;
//! - [`tracefs`]: where tracefs is, mounting it, and the one tracepoint `format` parser;
//! - [`rings`]: per-CPU perf rings shared by every event of a CPU, and the drain loop;
//! - [`records`]: the perf record types and the one parser of their bytes (the typed
//!   `Record`);
//! - [`pump`]: the one drain of the rings into a diagnosis's `Handler`, and the one session
//!   loop (one drain period, one stop rule); [`recording`]: what such a session leaves (one
//!   `Recording` for `profile`, `offcpu` and `locks`);
//! - [`uprobes`]: the one RAII manager of uprobe definitions (stale groups cleaned);
//! - [`elf`]: the one ELF reader (defined functions and PLT stubs as file offsets);
//! - [`maps`], [`symbolize`]: address spaces and symbolisation (functions without symbols
//!   named by their unwind-table entry);
//! - [`unwind`]: the one unwinder: whole user stacks from a sample's registers and stack
//!   copy, with DWARF CFI where the code has it and frame pointers where it does not;
//! - [`inject`]: the one injection of the preload library into a launched command (memfds
//!   reached by `/proc/<sysmeter pid>/fd/N`, `LD_PRELOAD`, the shared region read back),
//!   shared by `calls`, `alloc` and `locks`; [`script`]: a script's `#!` chain to the program
//!   that runs it; [`not_entered`]: the programs the library noted it could not enter;
//! - [`preloaded`]: the preload library as a target maps it (a memfd): recognised by name,
//!   its tables and symbols read from this process's copy;
//! - [`sampled`]: what the stack-sampling diagnoses (`profile`, `offcpu`) share: CPU-clock
//!   sampling, the sampled session, symbolised stacks → flat profile, call graph and flame
//!   graph, and the seam of `profile --both`;
//! - [`flame`]: the one drawing of a flame graph from folded stacks (inferno);
//! - [`scan`]: the x86 call and prologue decoders (the frameless-leaf check);
//! - [`reservoir`]: the durations kept of paired entries and exits (`trace`, `calls`);
//! - [`lookups`]: the seam through which `run` receives `trace`'s path-lookup tracer;
//! - [`overhead`]: the one shape of a tracer's overhead calibration (paired A/B);
//! - [`session`]: why a session ended, the one stop rule (target ended, Ctrl-C,
//!   `--duration`), a launched command still running, the progress observer;
//! - [`backend`]: the one shape of a diagnosis's backends: the availability check's
//!   [`Reason`](backend::Reason), `auto` or a backend asked for, the "backend:" line;
//! - [`bpf`]: the one loader of the BPF objects (permission and BTF check, tracepoints,
//!   maps), for the in-kernel backends; [`in_kernel`]: their choice of `bpf` or `perf`;
//! - [`attachable`]: whether a PID can be observed (alive, not us, not a kernel thread, ours);
//! - [`error`]: why a target cannot be observed (126/127, usage errors, refusals);
//! - [`witness`]: whether a session saw what happened (an independent count against what
//!   arrived; blinded by a BPF program on the tracepoint, and by which).
//!
//! Depends on `model`, `host` and `sysmeter_sys`; never on a diagnosis.

pub mod attachable;
pub mod backend;
pub mod bpf;
pub mod bytes;
pub mod call_counter;
pub mod elf;
pub mod error;
pub mod flame;
pub mod in_kernel;
pub mod inject;
pub mod lookups;
pub mod maps;
pub mod not_entered;
pub mod overhead;
pub mod preloaded;
pub mod proc;
pub mod pump;
pub mod recording;
pub mod records;
pub mod reservoir;
pub mod rings;
pub mod sampled;
pub mod scan;
pub mod script;
pub mod session;
pub mod symbolize;
pub mod target;
pub mod tracefs;
pub mod unwind;
pub mod uprobes;
pub mod witness;
