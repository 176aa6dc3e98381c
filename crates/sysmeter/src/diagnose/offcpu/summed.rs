//! The sentence that reconciles off-CPU time with wall time: off-CPU time is a sum over
//! threads (and processes), so two threads asleep together count twice and the total can
//! exceed the wall time. Said where it does, so the two figures never read as a
//! contradiction. Pure; depends on `model` only.

use crate::model::{Finding, units};

/// The `summed` finding when `total_ns` of off-CPU time over `threads` threads exceeds the
/// session's `wall_ns`; its value is the ratio of the two.
pub fn finding(total_ns: u64, wall_ns: u64, threads: usize) -> Option<Finding> {
    (total_ns > wall_ns && threads > 0).then(|| {
        Finding::new(
            "summed",
            format!(
                "Off-CPU time {} exceeds the wall time {}: it is summed over the {threads} \
                 threads and processes observed, each counted while it was off the CPU.",
                units::duration_ns(total_ns as f64),
                units::duration_ns(wall_ns as f64),
            ),
            Some(total_ns as f64 / wall_ns.max(1) as f64),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_sum_above_the_wall_time_is_explained() {
        assert!(finding(900, 1_000, 2).is_none());
        assert!(finding(1_000, 1_000, 2).is_none());
        let f = finding(1_500_000_000, 1_000_000_000, 2).expect("a sum above wall");
        assert_eq!(f.key, "summed");
        assert!(f.text.contains("summed over the 2 threads"), "{}", f.text);
        assert_eq!(f.value, Some(1.5));
    }
}
