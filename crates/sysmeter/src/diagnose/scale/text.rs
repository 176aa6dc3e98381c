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

    #[test]
    fn numbers_read_naturally() {
        let f = ClassFit {
            class: Class::NLogN,
            a: 12.3,
            b: 1.2e6,
            nrms: 0.01,
        };
        assert_eq!(formula(&f), "12.3 ns·N log N + 1.20 ms");
        let c = ClassFit {
            class: Class::Constant,
            a: 5e6,
            b: 0.0,
            nrms: 0.01,
        };
        assert_eq!(formula(&c), "5.00 ms");
    }
}
