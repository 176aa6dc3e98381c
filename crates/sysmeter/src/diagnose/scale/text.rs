//! The fitted formula of a `scale` class for people (`12.3 ns·N log N + 1.20 ms`), with the
//! numbers from [`crate::model::units`].
//!
//! Pure.

use crate::model::units::duration_ns;
use crate::stats::fit::{Class, ClassFit};

/// The fitted formula: `12.3 ns·N log N + 1.20 ms`, `5.00 ms` for O(1).
pub fn formula(f: &ClassFit) -> String {
    if f.class == Class::Constant {
        return duration_ns(f.a);
    }
    let growth = format!("{}·{}", duration_ns(f.a), f.class.term());
    if f.b > 0.0 {
        format!("{growth} + {}", duration_ns(f.b))
    } else {
        growth
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::fixture::assert_cases;

    #[test]
    fn numbers_read_naturally() {
        let formula_of = |(class, a, b)| {
            formula(&ClassFit {
                class,
                a,
                b,
                nrms: 0.01,
            })
        };
        assert_cases(
            formula_of,
            &[
                ((Class::NLogN, 12.3, 1.2e6), "12.3 ns·N log N + 1.20 ms"),
                ((Class::Constant, 5e6, 0.0), "5.00 ms"),
            ],
        );
    }
}
