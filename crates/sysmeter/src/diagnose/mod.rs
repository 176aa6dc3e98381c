//! Program diagnosis: `run` (time split, /proc timeline, verdict), `trace` (system-call
//! summary), `profile` (sampling CPU profile), `locks` (lock contention) and `scale` (growth with input size).
//! Each produces a [`crate::model::RunRecord`] so results are stored and rendered like bench
//! runs. What they look at — a command to launch or a process to attach to — is the one
//! [`target::Target`].

pub mod calls;
pub mod classify;
pub mod locks;
pub mod price;
pub mod proc;
pub mod profile;
pub mod run;
pub mod scale;
pub mod target;
pub mod trace;
pub mod tracefs;
