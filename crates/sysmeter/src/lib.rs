//! sysmeter: measure what every operation costs on this machine, and where a program's time
//! goes.
//!
//! The library is the whole product; `main.rs` only parses the command line and maps errors
//! to exit codes. The pipeline is measure (`harness`, `experiments`) → reduce (`stats`) →
//! store (`store`) → report (`report`), each stage joined by the plain types of `model`.
#![forbid(unsafe_code)]

pub mod cli;
pub mod commands;
pub mod diagnose;
pub mod experiments;
pub mod harness;
pub mod host;
#[cfg(test)]
mod layers;
pub mod model;
pub mod report;
pub mod server;
pub mod stats;
pub mod store;
pub mod wire;
