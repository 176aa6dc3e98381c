//! What a result says beyond its numbers: a derived conclusion ([`Finding`]: a stable key,
//! a sentence for people and the number behind it) and why an experiment could not run
//! ([`Skip`]).
//!
//! Pure data. Depends only on serde.

use serde::{Deserialize, Serialize};

/// A derived conclusion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// Stable key (e.g. `syscall_vs_call_ratio`).
    pub key: String,
    /// One or two sentences for people.
    pub text: String,
    /// The number behind it, if any.
    pub value: Option<f64>,
}

impl Finding {
    /// A finding with its stable `key`, its sentence and the number behind it.
    pub fn new(key: &str, text: String, value: Option<f64>) -> Finding {
        Finding {
            key: key.to_string(),
            text,
            value,
        }
    }
}

/// Why an experiment could not run here.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Skip {
    /// What is missing.
    pub reason: String,
    /// How to make it run.
    pub hint: String,
}
