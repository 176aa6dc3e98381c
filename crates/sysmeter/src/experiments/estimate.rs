//! Helpers for model-based estimates: convert a cycle count to ns at the measured TSC rate.

use crate::model::{Estimate, Unit};

/// An estimate of `cycles` cycles for `metric`, converted at `tsc_ghz` (no estimate when the
/// rate is unknown, because an estimate must come from this machine's numbers).
pub fn cycles(metric: &str, cycles: f64, tsc_ghz: Option<f64>, basis: &str) -> Option<Estimate> {
    let ghz = tsc_ghz.filter(|g| *g > 0.0)?;
    Some(Estimate {
        metric: metric.to_string(),
        value: cycles / ghz,
        unit: Unit::Ns,
        basis: format!("{basis}; {cycles} cycles at the measured {ghz:.3} GHz TSC rate"),
    })
}
