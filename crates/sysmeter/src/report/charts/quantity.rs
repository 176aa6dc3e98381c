//! What a plotted number is, finer than its [`Unit`]: a `count` metric may be a plain count,
//! a percentage (`CPU %`, `in-target overhead (%)`) or a rate per second (`page faults/s`).
//! Two numbers share a chart axis only when their quantity is the same, so no chart draws a
//! sample count next to a percentage; `charts::tests` checks it over a run of every kind.
//!
//! Pure; reads the name and unit only.

use crate::model::Unit;

/// The kind of a plotted number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantity {
    /// A duration (unit `ns`).
    Time,
    /// Bytes per second.
    Throughput,
    /// Bytes.
    Size,
    /// A percentage (a `count` whose name says `%`).
    Percent,
    /// Events per second (a `count` whose name ends in `/s`).
    PerSecond,
    /// Seconds as a plain number (a `count` named `seconds …`, such as a timeline's x).
    Seconds,
    /// A plain count or dimensionless value.
    Count,
}

impl Quantity {
    /// The quantity of a number called `name` measured in `unit`.
    pub fn of(name: &str, unit: Unit) -> Quantity {
        match unit {
            Unit::Ns => Quantity::Time,
            Unit::BytesPerSec => Quantity::Throughput,
            Unit::Bytes => Quantity::Size,
            Unit::Count if name.contains('%') => Quantity::Percent,
            Unit::Count if name.trim_end().ends_with("/s") => Quantity::PerSecond,
            Unit::Count if name.starts_with("seconds") => Quantity::Seconds,
            Unit::Count => Quantity::Count,
        }
    }

    /// The unit as an axis title names it, in brackets after the title (the tick labels
    /// carry the prefix, e.g. `40 µs`).
    pub fn axis_unit(self) -> &'static str {
        match self {
            Quantity::Time => "ns … s",
            Quantity::Throughput => "B/s",
            Quantity::Size => "B",
            Quantity::Percent => "%",
            Quantity::PerSecond => "per s",
            Quantity::Seconds => "s",
            Quantity::Count => "count",
        }
    }

    /// `title [unit]`, the axis title.
    pub fn axis_title(self, title: &str) -> String {
        format!("{title} [{}]", self.axis_unit())
    }

    /// Lower-case name (tests, captions).
    pub fn as_str(self) -> &'static str {
        match self {
            Quantity::Time => "time",
            Quantity::Throughput => "throughput",
            Quantity::Size => "size",
            Quantity::Percent => "percent",
            Quantity::PerSecond => "per second",
            Quantity::Seconds => "seconds",
            Quantity::Count => "count",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_told_apart_by_their_names() {
        assert_eq!(Quantity::of("samples", Unit::Count), Quantity::Count);
        let overhead = Quantity::of("in-target overhead (%)", Unit::Count);
        assert_eq!(overhead, Quantity::Percent);
        assert_eq!(
            Quantity::of("page faults/s", Unit::Count),
            Quantity::PerSecond
        );
        assert_eq!(Quantity::of("wall time", Unit::Ns), Quantity::Time);
        let x = Quantity::of("seconds since start", Unit::Count);
        assert_eq!(
            x.axis_title("seconds since start"),
            "seconds since start [s]"
        );
        assert_ne!(overhead, Quantity::of("samples", Unit::Count));
    }
}
