//! Arguments of `sysmeter alloc`: the target ([`TargetArgs`]; `-p` is refused with its
//! reason by the command), `-f`, the stack walker, and the usual output and storage flags.

use clap::Args;

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
                  through malloc); no root. Launched, dynamically linked programs only \
                  (docs/alloc.md). The report goes to stderr (or --out).\n\nExamples:\n  \
                  sysmeter alloc -- ./parse input.txt\n  \
                  sysmeter alloc -f -- make -j2"
)]
#[command(mut_arg("pid", |a| a.help(
    "Not supported: the hooks are loaded when the program starts (exit 2 says so)")))]
#[command(mut_arg("duration", |a| a.help(
    "Stop observing after this long (e.g. 10, 2.5s); what is live then is reported, and the \
     command keeps running")))]
#[command(mut_arg("command", |a| a.help("The command to launch and its arguments (after `--`)")))]
pub struct AllocArgs {
    /// Follow child processes too (threads are always followed).
    #[arg(short = 'f', long = "follow-forks")]
    pub follow_forks: bool,
    /// Walk stacks by frame pointers (cheaper; deeper frames only where the program keeps
    /// frame pointers) instead of the DWARF unwind tables.
    #[arg(long)]
    pub frame_pointers: bool,
    /// `--duration` and the command after `--`.
    #[command(flatten)]
    pub target: TargetArgs,
    /// Output format, --out, and where the run is stored.
    #[command(flatten)]
    pub output: OutputArgs,
}
