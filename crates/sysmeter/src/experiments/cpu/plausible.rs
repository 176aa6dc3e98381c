//! The check of `cpu.ops`' latency rows against the core clock: a dependent add, multiply,
//! float add and float multiply take a known, small number of core cycles on every current
//! core (published instruction tables: 1; 3; 2–4; 3–5). A row that reads more than
//! [`TOLERANCE`] outside its range at the clock of this run (the multiply chain of the
//! machine-state probe, `core_clock`) did not measure what it names — a core that resolves
//! the operation before it executes, an overlapped chain — and is marked "not a result"
//! (`Metric::degenerate`), so no renderer prints it as a figure. The rows whose latency
//! varies widely between cores (divide, square root) are not checked.

use crate::model::Metric;

/// How far outside its published range a row may read before it is not a result.
pub const TOLERANCE: f64 = 0.30;

/// The rows checked and their published latency range, core cycles.
pub const PUBLISHED: [(&str, f64, f64); 4] = [
    ("int add (dependent)", 1.0, 1.0),
    ("int mul (dependent)", 3.0, 3.0),
    ("float add (dependent)", 2.0, 4.0),
    ("float mul (dependent)", 3.0, 5.0),
];

/// The sentence for a row that reads `cycles` where `lo`–`hi` are published, or `None`
/// when it is within [`TOLERANCE`] of that range.
pub fn verdict(cycles: f64, lo: f64, hi: f64, ghz: f64) -> Option<String> {
    let inside = cycles >= lo * (1.0 - TOLERANCE) && cycles <= hi * (1.0 + TOLERANCE);
    if inside {
        return None;
    }
    let published = if lo == hi {
        format!("{lo:.0}")
    } else {
        format!("{lo:.0}–{hi:.0}")
    };
    Some(format!(
        "reads {cycles:.2} core cycles at this run's {ghz:.2} GHz core clock where every \
         current core takes {published}: the chain did not measure the operation (the core \
         may resolve it before it executes), so this is not a result"
    ))
}

/// Marks the checked rows of `metrics` that are implausible at core clock `ghz`.
pub fn mark(metrics: &mut [Metric], ghz: f64) {
    if !(ghz.is_finite() && ghz > 0.0) {
        return;
    }
    for m in metrics.iter_mut() {
        let Some(&(_, lo, hi)) = PUBLISHED.iter().find(|p| p.0 == m.name) else {
            continue;
        };
        let cycles = m.summary.median * ghz;
        if cycles.is_finite() && m.degenerate.is_none() {
            m.degenerate = verdict(cycles, lo, hi, ghz);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Summary, Unit};

    #[test]
    fn rows_within_thirty_percent_of_their_range_pass() {
        assert_eq!(verdict(1.0, 1.0, 1.0, 4.0), None);
        assert_eq!(verdict(1.29, 1.0, 1.0, 4.0), None);
        assert_eq!(verdict(1.45, 2.0, 4.0, 4.0), None);
        assert_eq!(verdict(5.1, 2.0, 4.0, 4.0), None);
        let folded = verdict(0.23, 1.0, 1.0, 4.1).expect("an add in a quarter cycle");
        assert!(folded.contains("reads 0.23 core cycles") && folded.contains("takes 1:"));
        assert!(
            verdict(5.3, 2.0, 4.0, 4.0)
                .expect("too slow")
                .contains("takes 2–4")
        );
    }

    #[test]
    fn only_implausible_checked_rows_are_marked() {
        let metric = |name: &str, ns: f64| {
            let summary = Summary {
                median: ns,
                ..Summary::default()
            };
            Metric::new(name, Unit::Ns, summary)
        };
        // At 4 GHz: add 0.06 ns = 0.24 cycles (folded), mul 0.75 ns = 3 cycles, a divide of
        // any length is not checked.
        let mut rows = vec![
            metric("int add (dependent)", 0.06),
            metric("int mul (dependent)", 0.75),
            metric("int div 64-bit (dependent)", 0.01),
        ];
        mark(&mut rows, 4.0);
        assert!(rows[0].degenerate.is_some());
        assert!(rows[1].degenerate.is_none());
        assert!(rows[2].degenerate.is_none());
        mark(&mut rows, f64::NAN);
        assert!(rows[1].degenerate.is_none());
    }
}
