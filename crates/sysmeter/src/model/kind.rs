//! The kind of a run: which command made it (`bench`, `run`, `trace`, …), its one name in
//! JSON, the database and run references (`latest:profile`).
//!
//! Pure data; depends on nothing of the crate (serde).

use serde::{Deserialize, Serialize};

/// Kind of run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunKind {
    /// `sysmeter bench`.
    Bench,
    /// `sysmeter run`.
    Run,
    /// `sysmeter trace`.
    Trace,
    /// `sysmeter profile`.
    Profile,
    /// `sysmeter scale`.
    Scale,
    /// `sysmeter calls`.
    Calls,
    /// `sysmeter locks`.
    Locks,
    /// `sysmeter alloc`.
    Alloc,
}

impl RunKind {
    /// Every kind, in the order of the commands' help.
    pub const ALL: [RunKind; 8] = [
        RunKind::Bench,
        RunKind::Run,
        RunKind::Trace,
        RunKind::Profile,
        RunKind::Scale,
        RunKind::Calls,
        RunKind::Locks,
        RunKind::Alloc,
    ];

    /// The kind named `name` (its [`RunKind::as_str`]), if there is one.
    pub fn from_name(name: &str) -> Option<RunKind> {
        RunKind::ALL.into_iter().find(|k| k.as_str() == name)
    }

    /// The names of every kind, `bench, run, …`, for a message that lists them.
    pub fn names() -> String {
        RunKind::ALL.map(RunKind::as_str).join(", ")
    }

    /// Lower-case name as used in JSON and the database.
    pub fn as_str(self) -> &'static str {
        match self {
            RunKind::Bench => "bench",
            RunKind::Run => "run",
            RunKind::Trace => "trace",
            RunKind::Profile => "profile",
            RunKind::Scale => "scale",
            RunKind::Calls => "calls",
            RunKind::Locks => "locks",
            RunKind::Alloc => "alloc",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::RunKind;

    #[test]
    fn every_kind_is_found_by_its_name() {
        for kind in RunKind::ALL {
            assert_eq!(RunKind::from_name(kind.as_str()), Some(kind));
            // The serde name is the same one.
            let json = serde_json::to_string(&kind).expect("serialises");
            assert_eq!(json, format!("\"{}\"", kind.as_str()));
        }
        assert_eq!(RunKind::from_name("Bench"), None);
        assert!(RunKind::names().starts_with("bench, run, trace"));
    }
}
