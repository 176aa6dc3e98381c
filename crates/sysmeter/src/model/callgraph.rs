//! The typed rows of a `calls --functions` result: the program's own functions with exact
//! call counts (the flat profile) and each caller → callee edge (the call graph), with
//! self and inclusive times from the -finstrument-functions hooks. `diagnose::calls`
//! writes them as the result's [`CALL_GRAPH`] artifact (JSON), which the store keeps like
//! every artifact; renderers read them with [`read`] and never parse a metric's name or
//! note.
//!
//! Every time carries its resolution: a time that does not stand clear of it is shown as
//! `< resolution (±X)`, never as a number ([`Timed::cell`]). Depends on `model` types,
//! `model::units`, serde and serde_json only.

use serde::{Deserialize, Serialize};

use super::units;
use super::{Artifact, ExperimentResult};

/// The result id of `calls --functions`.
pub const FUNCTIONS_ID: &str = "calls.functions";
/// The name of the artifact that holds the rows.
pub const CALL_GRAPH: &str = "call graph";
/// The caller of a function entered with no instrumented function below it (`main`, a
/// thread's start routine).
pub const SPONTANEOUS: &str = "<spontaneous>";

/// A time with the bound under which it cannot be told from zero.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Timed {
    /// The time with the hooks' calibrated cost removed (at least 0), ns.
    pub ns: f64,
    /// The uncertainty of that removal, ns.
    pub resolution_ns: f64,
}

impl Timed {
    /// Whether the time stands clear of its resolution.
    pub fn resolved(&self) -> bool {
        self.ns > self.resolution_ns
    }

    /// The time, or `< resolution (±X)` with X the bound under which the time lies, or
    /// `not timed` for a sum of no timed call (a resolution of 0: any timed call has one).
    pub fn cell(&self) -> String {
        if self.resolution_ns <= 0.0 && self.ns <= 0.0 {
            "not timed".into()
        } else if self.resolved() {
            units::duration_ns(self.ns)
        } else {
            let bound = self.ns.max(0.0) + self.resolution_ns;
            format!("< resolution (±{})", units::duration_ns(bound))
        }
    }

    /// [`Timed::cell`], or `not timed` when none of the calls was (`timed` is 0).
    pub fn cell_of(&self, timed: u64) -> String {
        if timed == 0 {
            "not timed".into()
        } else {
            self.cell()
        }
    }

    /// Per one of `n` (the same time and resolution divided).
    pub fn per(&self, n: u64) -> Timed {
        let n = n.max(1) as f64;
        Timed {
            ns: self.ns / n,
            resolution_ns: self.resolution_ns / n,
        }
    }
}

/// One function of the program: a row of the flat profile and the middle line of its
/// call-graph entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionRow {
    /// Its name (symbolised; `0x…` where no symbol names it).
    pub name: String,
    /// Calls from other functions (exact).
    pub calls: u64,
    /// Calls from itself (direct recursion, exact): gprof's `+self`.
    pub recursive: u64,
    /// Time in the function itself, all calls.
    pub self_time: Timed,
    /// Time with its callees, outermost activations only (recursion counted once).
    pub total: Timed,
    /// Share of all self time, 0–1.
    pub share: f64,
    /// Calls that ended without their exit hook (longjmp): counted, not timed.
    pub unwound: u64,
    /// Calls timed (returned through their exit hook); 0: every time cell is `not timed`.
    pub timed: u64,
}

/// One caller → callee edge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EdgeRow {
    /// The caller ([`SPONTANEOUS`] for none).
    pub caller: String,
    /// The callee.
    pub callee: String,
    /// Calls along the edge (exact).
    pub calls: u64,
    /// The callee's own time in these calls.
    pub self_time: Timed,
    /// The callee's time with its callees in these calls (outermost activations).
    pub total: Timed,
    /// Calls timed along the edge.
    pub timed: u64,
}

/// The flat profile and the call graph.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CallGraph {
    /// Functions, most self time first.
    pub functions: Vec<FunctionRow>,
    /// Edges, in no particular order.
    pub edges: Vec<EdgeRow>,
}

impl CallGraph {
    /// The rows as the [`CALL_GRAPH`] artifact; `None` if they cannot be encoded.
    pub fn artifact(&self) -> Option<Artifact> {
        Some(Artifact {
            name: CALL_GRAPH.into(),
            media_type: "application/json".into(),
            content: serde_json::to_string(self).ok()?,
        })
    }

    /// The function named `name`.
    pub fn function(&self, name: &str) -> Option<&FunctionRow> {
        self.functions.iter().find(|f| f.name == name)
    }

    /// The edge `caller` → `callee`.
    pub fn edge(&self, caller: &str, callee: &str) -> Option<&EdgeRow> {
        self.edges
            .iter()
            .find(|e| e.caller == caller && e.callee == callee)
    }
}

/// The call graph of result `r`, if it is a `calls --functions` result.
pub fn read(r: &ExperimentResult) -> Option<CallGraph> {
    r.artifact_json(CALL_GRAPH)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_inside_its_resolution_is_never_a_number() {
        let small = Timed {
            ns: 3.0,
            resolution_ns: 10.0,
        };
        assert_eq!(
            small.cell(),
            format!("< resolution (±{})", units::duration_ns(13.0))
        );
        let big = Timed {
            ns: 300.0,
            resolution_ns: 10.0,
        };
        assert_eq!(big.cell(), units::duration_ns(300.0));
        assert_eq!(big.per(3).ns, 100.0);
    }
}
