//! Findings of `mem.latency` about where a level ends as a range: the wording of a range,
//! its two ends as findings of their own (`hierarchy.<L>.end_lo_bytes`, `end_hi_bytes`),
//! and the finding for a candidate end that the re-measurement did not confirm.

use crate::harness::Measured;
use crate::model::units;
use crate::stats::hierarchy::Unconfirmed;

/// "between 4 MiB and 6 MiB", or one size when both ends are equal.
pub fn between((lo, hi): (u64, u64)) -> String {
    if lo == hi {
        units::size(lo)
    } else {
        format!("between {} and {}", units::size(lo), units::size(hi))
    }
}

/// The ends of a confirmed range, as their own findings.
pub fn range_findings(out: &mut Measured, name: &str, (lo, hi): (u64, u64), jump: f64) {
    let why = format!(
        "the step ({jump:.1}x) was confirmed by the fine, repeated re-measurement (core \
         cycles per load)"
    );
    out.find(
        &format!("hierarchy.{name}.end_lo_bytes"),
        format!(
            "{name}: the last size clearly inside it is {}; {why}.",
            units::size(lo)
        ),
        Some(lo as f64),
    );
    out.find(
        &format!("hierarchy.{name}.end_hi_bytes"),
        format!(
            "{name}: from {} on every size is clearly beyond it; {why}.",
            units::size(hi)
        ),
        Some(hi as f64),
    );
}

/// A candidate end that the fine re-measurement did not confirm.
pub fn unconfirmed(out: &mut Measured, name: &str, candidate: u64, why: Unconfirmed) {
    let why = match why {
        Unconfirmed::NoPersistentStep => "no size after it stays clearly beyond the level (a \
             burst of interference or a one-point bump, not a step)"
            .to_string(),
        Unconfirmed::NothingInside => "no size before the step is clearly inside the level".into(),
        Unconfirmed::NotRemeasured => "the step appeared only after re-measuring, so its ends \
             were not measured again"
            .into(),
        Unconfirmed::SmallJump(j) => format!("the step is only {j:.2}x (at least 1.5x needed)"),
        Unconfirmed::TooWide(w) => {
            format!("the transition spreads over {w:.1}x of sizes (4x at most)")
        }
    };
    out.find(
        &format!("hierarchy.{name}.unconfirmed"),
        format!(
            "{name}: where this level ends could not be confirmed — {why}; the candidate near \
             {} is not reported as its size.",
            units::size(candidate)
        ),
        Some(candidate as f64),
    );
}
