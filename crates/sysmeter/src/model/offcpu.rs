//! The off-CPU result's per-reason metrics: the time blocked for one reason (disk, a lock, a
//! sleep, …) is the metric `off-CPU: <reason>`. This file writes and reads that name, so the
//! diagnosis and the renderers share one definition and no renderer parses a name itself.

use super::Metric;

const REASON_PREFIX: &str = "off-CPU: ";

/// The name of the metric of the time blocked for `reason` (its label).
pub fn reason_metric(reason: &str) -> String {
    format!("{REASON_PREFIX}{reason}")
}

/// The reason whose blocked time `m` is, if it is a per-reason metric.
pub fn reason_of(m: &Metric) -> Option<&str> {
    m.name.strip_prefix(REASON_PREFIX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Summary, Unit};

    #[test]
    fn a_reason_metric_reads_back_and_others_are_not_reasons() {
        let m = Metric::new(&reason_metric("disk I/O"), Unit::Ns, Summary::default());
        assert_eq!(reason_of(&m), Some("disk I/O"));
        let other = Metric::new("off-CPU time", Unit::Ns, Summary::default());
        assert_eq!(reason_of(&other), None);
    }
}
