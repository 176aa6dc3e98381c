//! The result model: the plain data types that flow measure → reduce → store → report, the
//! machine description stored with every run, and the one set of number formatters.
//!
//! Every stage of the pipeline takes and returns these types, so any stage can be fed from a
//! fixture and tested alone. This is also the JSON contract (`--format json`), versioned by
//! [`SCHEMA_VERSION`] and documented in `docs/json-schema.md`. Times are stored in
//! nanoseconds and sizes in bytes; nothing here holds a formatted string of a number.
//!
//! The bottom layer: depends on nothing in this crate and nothing outside but serde and
//! serde_json (the typed rows of `locks` travel as a JSON artifact; the test-only `fixture`
//! computes its summaries with `stats`).

pub mod about;
pub mod alloc;
pub mod call_note;
pub mod callgraph;
pub mod finding;
#[cfg(any(test, feature = "fixtures"))]
pub mod fixture;
pub mod fleet;
pub mod held;
pub mod host;
pub mod interval;
pub mod kind;
pub mod live;
pub mod locks;
pub mod machine;
pub mod offcpu;
pub mod run;
pub mod session;
pub mod showable;
pub mod summary;
pub mod tally;
pub mod thread_stacks;
pub mod units;
pub mod visible;

pub use about::{About, Estimate};
pub use finding::{Finding, Skip};
pub use fleet::{
    FleetData, FleetHost, FleetJudged, FleetSpread, FleetValue, ROLL_CALL_HOSTS, fleet_rule,
};
pub use host::{
    CacheInfo, Capability, CgroupLimits, CpuInfo, DiskInfo, HostInfo, MemoryInfo, NicInfo,
};
pub use interval::{IntervalBasis, RunToRun};
pub use machine::{BetweenProbes, CacheShare, MachineState, RoundStats};
pub use run::*;
pub use session::SessionEnd;
pub use summary::Summary;
