//! What the integration tests share: the binary under test with a clean environment and
//! the run-and-read-output helpers (`cmd`), headless Chromium (`chromium`), accessors of run records in JSON (`record`),
//! the sample run stored or written as a file (`sample`),
//! the capabilities a test may need and the `skip!`/`need!` macros that report a missing
//! one — or fail, under `SYSMETER_TEST_REQUIRE` (`skip`, `needs`), a `sysmeter serve` child
//! (`serve`), a diagnosis starved of CPU until it loses records (`starved`), one lock for tests that want the CPUs to themselves (`exclusive`), one lock per kernel event
//! that tests attach BPF or perf to (`observing`), a BPF program that hides a tracepoint
//! from perf (`blinder`), a small tmpfs to fill and EDQUOT by strace (`full_disk`), and the
//! PostgreSQL test database (`pg`, with the `pg` feature), a network namespace with a veth
//! pair (`netns`), and the Ansible test's machines: sshd hosts in namespaces (`ssh_hosts`)
//! and a CPU-limited cgroup (`cpu_limit`), with the `pg` feature like the test.

pub mod beside;
pub mod blinder;
pub mod chromium;
pub mod cmd;
#[cfg(feature = "pg")]
pub mod cpu_limit;
pub mod each_backend;
pub mod fleet;
pub mod full_disk;
pub mod needs;
pub mod netns;
pub mod observing;
#[cfg(feature = "pg")]
pub mod pg;
pub mod record;
pub mod sample;
pub mod serve;
pub mod skip;
#[cfg(feature = "pg")]
pub mod ssh_hosts;
pub mod starved;

pub use cmd::{
    BENCH_JSON, bench_json, json_of, json_out, json_out_code, json_run, stderr_of, stdout_of,
    sysmeter, sysmeter_db,
};
pub(crate) use each_backend::each_backend;
pub use needs::{compile_fixture, fixture_arg, is_root, path_arg};
pub use observing::{Event, observing, observing_alone};
pub use record::{
    artifact, artifact_json, assert_says, error_of, finding, finding_keys, median, not_a_result,
    result,
};
pub(crate) use skip::{need, skip};

/// Tests that measure CPU time or caches (the profile's sampling, scale's fits) run one at a
/// time: two CPU-bound fixtures side by side would contend for the CPUs and the caches.
pub fn exclusive() -> std::sync::MutexGuard<'static, ()> {
    static EXCLUSIVE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    EXCLUSIVE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A new temporary directory and the database `runs.db` in it (not created yet), for a test
/// that stores runs; the directory goes when the first value is dropped.
pub fn temp_db() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("runs.db");
    (dir, db)
}
