//! Arguments of `sysmeter alloc`: the target ([`TargetArgs`]: a command, or `-p` through the
//! uprobe fallback), `-f`, the stack walker, `--backend`, and the usual output and storage
//! flags.

use clap::Args;

use crate::diagnose::alloc::Backend;
use crate::diagnose::observe::backend::Request;

use super::OutputArgs;
use super::target::{Rules, TargetArgs};

/// What `alloc` accepts of the target arguments.
pub const ALLOC_TARGET: Rules = Rules {
    duration_needs_pid: false,
    missing: "nothing to profile: give a command after -- (e.g. `sysmeter alloc -- ./server`)",
};

/// `sysmeter alloc`: a heap profile of a command (like heaptrack).
#[derive(Debug, Args)]
#[command(
    after_help = "Per call stack: allocations, bytes, blocks still live at exit \
                  (leaks, with their stacks), temporary allocations; the peak of live bytes \
                  and when; the live heap over time beside RSS; flame graphs of bytes and of \
                  counts (report --html). A preloaded library interposes malloc, calloc, \
                  realloc, free, posix_memalign, aligned_alloc, memalign, valloc, pvalloc \
                  and anonymous mmap/munmap (C++ new/delete and Rust's system allocator go \
                  through malloc); no root. Where the library cannot go (-p PID, static and \
                  setuid programs) uprobes on the same functions of the process's C library \
                  (or of the static program) count in the kernel instead: root (or CAP_BPF + \
                  CAP_PERFMON), tens of µs per call here, threads but not children, and with -p only what is \
                  allocated after the attach (docs/alloc.md). The report goes to stderr (or \
                  --out).\n\nExamples:\n  \
                  sysmeter alloc -- ./parse input.txt\n  \
                  sysmeter alloc -f -- make -j2\n  \
                  sysmeter alloc -p 1234 --duration 30"
)]
#[command(mut_arg("pid", |a| a.help(
    "Observe a running process through uprobes (root): what it allocates from now on; \
     what is live when observation stops is reported as live then, not as leaks at exit")))]
#[command(mut_arg("duration", |a| a.help(
    "Stop observing after this long (e.g. 10, 2.5s); what is live then is reported, and the \
     command keeps running")))]
#[command(mut_arg("command", |a| a.help("The command to launch and its arguments (after `--`)")))]
pub struct AllocArgs {
    /// Follow child processes too (threads are always followed).
    #[arg(short = 'f', long = "follow-forks")]
    pub follow_forks: bool,
    /// Walk stacks by frame pointers (cheaper; deeper frames only where the program keeps
    /// frame pointers) instead of the DWARF unwind tables (the preload library's walk; the
    /// uprobe fallback always completes the kernel's walk with the unwind tables).
    #[arg(long)]
    pub frame_pointers: bool,
    /// How the allocations are seen: `preload` interposes the allocator in the launched
    /// process (no root), `uprobes` counts its calls in the kernel (root; the only way into
    /// `-p`, static and setuid programs), `auto` takes `preload` where it can go.
    #[arg(long, value_enum, value_name = "BACKEND", default_value = "auto")]
    pub backend: Request<Backend>,
    /// `--duration` and the command after `--`.
    #[command(flatten)]
    pub target: TargetArgs,
    /// `--rounds N`: observe the command N times, one run.
    #[command(flatten)]
    pub rounds: super::rounds::RoundsArgs,
    /// Output format, --out, and where the run is stored.
    #[command(flatten)]
    pub output: OutputArgs,
}
