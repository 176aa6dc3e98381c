//! The `core_clock` finding of `cpu.ops`: the core's effective clock while measuring, from a
//! latency chain whose cycle count is unambiguous, and the cross-check of the add row.
//!
//! The clock comes from the machine-state probe's dependent 64-bit multiply chain
//! (`sysmeter_sys::probe`: 3 cycles per `imul` on x86-64, carried across loop turns so the
//! out-of-order core cannot overlap blocks), median of [`PROBES`] probes just before and as
//! many just after the `int mul (dependent)` row. It is cross-checked
//! against two add chains of 1 cycle per add: the probe's carried one, which must agree, and
//! the `int add (dependent)` row of this experiment, which carries its chain across blocks
//! too (until issue 12 it restarted it every `CHAIN_LEN` instructions, so a wide core
//! overlapped consecutive blocks and the row claimed 5.9 GHz). When a chain disagrees with
//! the multiply chain by more than [`DISAGREEMENT`], the finding says which one is off and
//! the likely cause.

use crate::harness::Measured;
use crate::harness::machine::{CYCLES_PER_MUL, sample};
use crate::stats;

/// Probes whose median gives the clock.
pub const PROBES: usize = 5;

/// Disagreement between two clock estimates above which the finding explains it.
pub const DISAGREEMENT: f64 = 0.10;

/// Three clock estimates, GHz.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Clocks {
    /// From the carried multiply chain: the one trusted.
    pub mul: f64,
    /// From the probe's carried add chain (1 cycle per add).
    pub carried_add: f64,
    /// From the `int add (dependent)` row (1 cycle per add).
    pub add_row: Option<f64>,
}

/// One reading of the probe chains on the calling (measuring) thread: [`PROBES`] pairs of
/// (multiply-chain GHz, carried-add GHz).
pub fn probe_clocks() -> Vec<(f64, f64)> {
    (0..PROBES)
        .map(|_| {
            let r = sysmeter_sys::probe::probe();
            let turns = sysmeter_sys::probe::PROBE_ADD_TURNS;
            let ns = sysmeter_sys::probe::time_add_chain(turns) as f64;
            let add = (turns * sysmeter_sys::probe::ADD_UNROLL) as f64 / ns.max(1.0);
            (sample::core_ghz(CYCLES_PER_MUL, r.mul_ns), add)
        })
        .collect()
}

/// The clocks from `readings` (probe pairs taken just before and just after the `int mul
/// (dependent)` row, so the clock is the one that row ran at: on the development host the
/// turbo bin moved by up to 12% within the second between that row and the end of
/// `cpu.ops`, where the probes used to be taken), and the add row's.
pub fn measure(readings: &[(f64, f64)], add_row_ns: Option<f64>) -> Clocks {
    let muls: Vec<f64> = readings.iter().map(|r| r.0).collect();
    let adds: Vec<f64> = readings.iter().map(|r| r.1).collect();
    Clocks {
        mul: stats::median(&muls).unwrap_or(f64::NAN),
        carried_add: stats::median(&adds).unwrap_or(f64::NAN),
        add_row: add_row_ns.filter(|ns| *ns > 0.0).map(|ns| 1.0 / ns),
    }
}

/// Adds the `core_clock` finding (and `core_clock_check`) to `out`, from the probe readings
/// around the multiply row (see [`measure`]); the clock, GHz, when there is one.
pub fn find(out: &mut Measured, readings: &[(f64, f64)], tsc_ghz: Option<f64>) -> Option<f64> {
    let clocks = measure(readings, out.median("int add (dependent)"));
    if !(clocks.mul.is_finite() && clocks.mul > 0.0) {
        return None;
    }
    out.find("core_clock", clock_text(&clocks, tsc_ghz), Some(clocks.mul));
    out.find("core_clock_check", check_text(&clocks), clocks.add_row);
    Some(clocks.mul)
}

/// The `core_clock` sentence.
pub fn clock_text(c: &Clocks, tsc_ghz: Option<f64>) -> String {
    let mut text = format!(
        "The core runs at about {:.2} GHz while measuring (a dependent 64-bit multiply, {} \
         cycles each, takes {:.3} ns)",
        c.mul,
        CYCLES_PER_MUL,
        CYCLES_PER_MUL / c.mul
    );
    match tsc_ghz {
        Some(tsc) if tsc > 0.0 => text.push_str(&format!(
            ", {:.2}x the {tsc:.2} GHz TSC: TSC-tick figures differ from core cycles by that \
             factor (the core cycles column is the time × this run's probe clock).",
            c.mul / tsc
        )),
        _ => text.push('.'),
    }
    text
}

/// The cross-check sentence: which add chain agrees with the multiply chain, and why one
/// that does not is off.
pub fn check_text(c: &Clocks) -> String {
    let off = |x: f64| x / c.mul - 1.0;
    let carried = off(c.carried_add);
    let mut text = if carried.abs() <= DISAGREEMENT {
        format!(
            "A carried dependent-add chain (1 cycle per add) gives {:.2} GHz, within {:.0}% of \
             the multiply chain",
            c.carried_add,
            100.0 * carried.abs()
        )
    } else {
        format!(
            "A carried dependent-add chain gives {:.2} GHz, {:+.0}% off the multiply chain: \
             the core does not run 1 add per cycle here, or the multiply latency is not {} \
             cycles on this core, so absolute core-cycle figures are uncertain by that much",
            c.carried_add,
            100.0 * carried,
            CYCLES_PER_MUL
        )
    };
    if let Some(row) = c.add_row {
        let d = off(row);
        if d.abs() > DISAGREEMENT {
            text.push_str(&format!(
                "; the int add (dependent) row implies {row:.2} GHz ({:+.0}%), which is off: \
                 the row was disturbed while it was measured (compare its CI and the \
                 experiment's machine state), its chain is not carried across its blocks \
                 of {} adds, so the out-of-order core overlapped them, or this core resolves \
                 the adds before they execute — read it with care.",
                100.0 * d,
                sysmeter_sys::kernels::CHAIN_LEN
            ));
        } else {
            text.push_str(&format!(
                "; the int add (dependent) row agrees ({row:.2} GHz, {:+.0}%).",
                100.0 * d
            ));
        }
    } else {
        text.push('.');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_overlapping_add_row_is_named_as_the_one_that_is_off() {
        // Issue 12's run: add row 0.169 ns (5.91 GHz) against a 3.69 GHz multiply chain.
        let c = Clocks {
            mul: 3.69,
            carried_add: 3.66,
            add_row: Some(1.0 / 0.169),
        };
        let t = check_text(&c);
        assert!(t.contains("within 1%"), "{t}");
        assert!(t.contains("+60%") && t.contains("which is off"), "{t}");
        let clock = clock_text(&c, Some(2.445));
        assert!(
            clock.contains("3.69 GHz") && clock.contains("1.51x"),
            "{clock}"
        );
    }

    #[test]
    fn agreeing_chains_say_so_and_a_disagreeing_carried_chain_is_flagged() {
        let c = Clocks {
            mul: 3.0,
            carried_add: 3.1,
            add_row: Some(3.05),
        };
        let t = check_text(&c);
        assert!(t.contains("agrees") && !t.contains("which is off"), "{t}");
        let bad = Clocks {
            carried_add: 4.0,
            add_row: None,
            ..c
        };
        assert!(
            check_text(&bad).contains("uncertain"),
            "{}",
            check_text(&bad)
        );
    }

    #[test]
    fn the_probe_chains_give_finite_clocks() {
        let readings = probe_clocks();
        assert_eq!(readings.len(), PROBES);
        let c = measure(&readings, Some(0.25));
        assert!(c.mul.is_finite() && c.mul > 0.0, "{c:?}");
        assert!(c.carried_add.is_finite() && c.carried_add > 0.0, "{c:?}");
        assert_eq!(c.add_row, Some(4.0));
    }
}
