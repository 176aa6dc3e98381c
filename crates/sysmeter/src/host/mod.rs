//! Machine description (`sysmeter host`): what this machine is, what this run can do on it,
//! and what could disturb a measurement.
//!
//! The parsers in the submodules are pure functions of the text of /proc and /sys files, so
//! they are unit-tested on captured fixtures (tests/fixtures/host/). Only [`read_host`]
//! (module `read`) and the probes of [`capabilities`] touch the file system. Depends on
//! `serde`, `libc` constants and `tempfile`; never on the measuring or reporting modules.

pub mod capabilities;
pub mod cgroup;
pub mod cpuinfo;
pub mod cpulist;
pub mod meminfo;
pub mod osinfo;
pub mod ownership;
pub mod procfs;
mod read;
pub mod storage;
pub mod sysfs;
pub mod warnings;

pub use read::{check_hostname_override, hostname, read_host, read_host_for_dir};
