//! The `fs` group: files and disks. One file or folder per experiment id: `read/` (with its
//! findings), `cache_size/` (with its findings), `contention.rs`, `write.rs`,
//! `remote_read.rs` (fs.read's measurement on another mount); the group's helpers are the
//! test files (`files.rs`) and timed block reads (`blocks.rs`). Depends on the harness,
//! `model`, `stats`, `host` (storage, meminfo, cgroup) and `sysmeter-sys`; on no other group.

mod blocks;
mod cache_size;
mod contention;
mod files;
mod read;
mod remote_read;
pub mod stale;
mod write;

use super::Group;

/// The group's registry entry.
pub static GROUP: Group = Group {
    name: "fs",
    description: "files and disks: uncached and cached reads, file cache size, contention, durability",
    experiments: &[
        &read::FsRead,
        &cache_size::FsCacheSize,
        &contention::FsContention,
        &write::FsWrite,
        &remote_read::FsRemoteRead,
    ],
};
