//! The `os` group: the operating system. One file or folder per experiment id:
//! `syscall.rs`, `task.rs`, `ctxsw/`, `lookup/` (with its thread peers; the forked pipe echo is the
//! shared [`crate::experiments::peer`]). Depends on the harness, `model`, `stats` and
//! `sysmeter-sys`; of other groups only on `cpu.call`'s metric name for one finding.

pub(super) mod ctxsw;
mod lookup;
mod syscall;
mod task;

use super::Group;

/// The group's registry entry.
pub static GROUP: Group = Group {
    name: "os",
    description: "the operating system: system calls, process and thread creation, context switches, path lookup",
    experiments: &[
        &syscall::OsSyscall,
        &task::OsTask,
        &ctxsw::OsCtxsw,
        &lookup::OsLookup,
    ],
};
