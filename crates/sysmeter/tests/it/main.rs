//! The integration tests of `sysmeter`, one module per area, all in one test binary (the
//! Ctrl-C tests, which must be alone, are `tests/interrupt.rs`). Shared helpers live in
//! `support`; a test that cannot run here says `skipped: <reason>` through its `skip!`
//! macro, and fails instead when `SYSMETER_TEST_REQUIRE` names the missing capability or is
//! `all` (the list of capabilities is in `support/skip.rs`).

mod support;

mod alloc;
mod alloc_uprobe;
mod attach_end;
mod bad_inputs;
mod blind;
mod calls;
mod calls_attach;
mod calls_functions;
mod calls_inproc;
mod children;
mod cli;
mod compare_diag;
mod compare_diag_html;
mod compare_diag_sites;
mod compare_sets;
mod concurrency;
mod cpu_ops;
mod drift;
mod exec_chains;
mod export_cli;
mod export_traces;
mod export_viewers;
mod fleet;
mod fleet_own_spread;
mod fs;
mod glance;
mod hardening;
mod hostile;
mod html;
mod ipc;
mod killed;
mod layouts;
mod live;
mod live_attach;
mod locks;
mod locks_held;
mod locks_lost;
mod locks_views;
mod lookup;
mod mem;
mod mutation;
mod netns;
mod node_exporter;
mod offcpu;
mod offcpu_bpf;
mod outputs;
#[cfg(feature = "pg")]
mod pg;
#[cfg(not(feature = "pg"))]
mod pg_disabled;
mod pipes;
mod profile;
mod results;
mod run;
mod run_to_run;
mod scale;
mod scale_group;
mod serve;
mod trace;
mod trace_attach;
mod trace_kernel;
mod unprivileged;
mod unwind;
mod unwind_xz;
mod widths;
