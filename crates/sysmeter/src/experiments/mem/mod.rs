//! The `mem` group: the memory hierarchy. One folder per experiment id, each with its
//! helpers and findings: `latency/`, `bandwidth/`, `pagefault/`. Depends on the harness,
//! `model`, `stats`, `host` (cache and CPU lists) and `sysmeter-sys`; on no other group.

mod bandwidth;
mod latency;
mod pagefault;

use super::Group;

/// The group's registry entry.
pub static GROUP: Group = Group {
    name: "mem",
    description: "the memory hierarchy: cache and DRAM latency, bandwidth, page faults",
    experiments: &[
        &latency::MemLatency,
        &bandwidth::MemBandwidth,
        &pagefault::MemPagefault,
    ],
};
