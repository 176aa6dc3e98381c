//! The normalising arithmetic and the clock-scaling decision on synthetic points.

use super::*;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn core_cycles_and_machine_ratio() {
    assert_eq!(core_cycles(250.0, 4.0), 1000.0);
    assert!(close(machine_ratio(4.5, 3.42).expect("positive"), 0.76));
    assert_eq!(machine_ratio(0.0, 3.0), None);
    assert_eq!(machine_ratio(3.0, f64::NAN), None);
}

#[test]
fn a_slower_machine_is_no_change_after_normalising() {
    // 900 cycles at 4.5 GHz = 200 ns; the same 900 cycles at 3.42 GHz = 263.16 ns.
    let c = change(Kind::Time, 200.0, 900.0 / 3.42, 4.5, 3.42).expect("valid");
    assert!(close(c.machine_ratio, 0.76));
    assert!(close(c.raw_change, 900.0 / 3.42 / 200.0 - 1.0));
    assert!(c.raw_change > 0.3);
    assert!(close(c.normalised_change, 0.0));
    // A real 10% regression on the same slower machine.
    let r = change(Kind::Time, 200.0, 1.1 * 900.0 / 3.42, 4.5, 3.42).expect("valid");
    assert!(close(r.normalised_change, 0.1));
    // Same machine speed: normalised equals raw.
    let same = change(Kind::Time, 100.0, 120.0, 3.6, 3.6).expect("valid");
    assert!(close(same.raw_change, same.normalised_change));
}

#[test]
fn rates_divide_by_the_clock() {
    // 8 bytes per cycle: 36 GB/s at 4.5 GHz, 27.36 GB/s at 3.42 GHz.
    let c = change(Kind::Rate, 36.0, 27.36, 4.5, 3.42).expect("valid");
    assert!(close(c.raw_change, -0.24));
    assert!(close(c.normalised_change, 0.0));
}

#[test]
fn invalid_inputs_are_named() {
    let e = change(Kind::Time, 100.0, 0.0, 3.0, 3.0).unwrap_err();
    assert!(e.to_string().contains("median of run B"), "{e}");
    let e = change(Kind::Time, 100.0, 90.0, 3.0, f64::NAN).unwrap_err();
    assert!(e.to_string().contains("core clock of run B"), "{e}");
}

/// Five runs on a drifting machine; `noise` is a deterministic ±1% pattern.
fn runs(cost: impl Fn(f64) -> f64) -> Vec<Point> {
    let noise = [1.0, 1.01, 0.99, 1.005, 0.995];
    [4.46, 4.52, 5.91, 4.50, 4.62]
        .iter()
        .zip(noise)
        .map(|(&ghz, n)| Point {
            ns: cost(ghz) * n,
            core_ghz: ghz,
        })
        .collect()
}

#[test]
fn cycle_bound_metrics_scale_and_fixed_ones_do_not() {
    let cpu = clock_scaling(&runs(|ghz| 1000.0 / ghz));
    assert_eq!(cpu.verdict, Scaling::Scales, "{cpu:?}");
    assert!(cpu.cycles_cv < 0.01 && cpu.time_cv > 0.1, "{cpu:?}");
    assert!(
        (cpu.elasticity.expect("defined") - 1.0).abs() < 0.1,
        "{cpu:?}"
    );
    let dram = clock_scaling(&runs(|_| 80.0));
    assert_eq!(dram.verdict, Scaling::Fixed, "{dram:?}");
    assert!(dram.elasticity.expect("defined").abs() < 0.1, "{dram:?}");
    // A syscall: mostly cycles plus some fixed ns; decided by which CV is lower.
    let mix = clock_scaling(&runs(|ghz| 700.0 / ghz + 40.0));
    assert_eq!(mix.verdict, Scaling::Scales, "{mix:?}");
    let e = mix.elasticity.expect("defined");
    assert!(e > 0.5 && e < 1.0, "{mix:?}");
}

#[test]
fn a_few_noisy_points_over_a_barely_moving_clock_decide_nothing() {
    // Six rounds, the probe stepping by 0.1 GHz (CV 2.7%), the metric's own noise ±4%
    // unrelated to the clock: the elasticity's CI spans ½, so neither verdict.
    let clocks = [3.0, 3.1, 3.2, 3.0, 3.1, 3.2];
    let noise = [1.04, 0.97, 1.0, 0.96, 1.03, 1.01];
    let points: Vec<Point> = (clocks.iter().zip(noise))
        .map(|(&g, n)| Point {
            ns: 1.0 * n,
            core_ghz: g,
        })
        .collect();
    let e = clock_scaling(&points);
    assert!(e.probe_cv > MIN_PROBE_CV, "{e:?}");
    assert_eq!(e.verdict, Scaling::Undecided, "{e:?}");
    // The same clocks with the time following them exactly: decided.
    let exact: Vec<Point> = (clocks.iter())
        .map(|&g| Point {
            ns: 3.1 / g,
            core_ghz: g,
        })
        .collect();
    assert_eq!(clock_scaling(&exact).verdict, Scaling::Scales);
}

#[test]
fn within_side_evidence_is_not_fooled_by_a_change_between_sides() {
    // A DRAM-bound metric (fixed ns) 25% slower in B, whose machine is 24% slower: pooled,
    // the "cycles" look steadier than the time; within each side they do not.
    let side = |scale: f64, ghz: [f64; 3]| -> Vec<Point> {
        ghz.iter()
            .zip([1.0, 1.004, 0.996])
            .map(|(&g, n)| Point {
                ns: 80.0 * scale * n,
                core_ghz: g,
            })
            .collect()
    };
    let a = side(1.0, [4.5, 4.9, 4.2]);
    let b = side(1.25, [3.42, 3.7, 3.2]);
    let mut pooled = a.clone();
    pooled.extend(&b);
    let fooled = clock_scaling(&pooled);
    assert!(fooled.cycles_cv < fooled.time_cv, "{fooled:?}");
    assert_ne!(fooled.verdict, Scaling::Fixed);
    assert_eq!(within_side_scaling(&a, &b).verdict, Scaling::Fixed);
    // A cycle-bound metric on the same clocks scales.
    let cyc = |ghz: [f64; 3]| -> Vec<Point> {
        ghz.iter()
            .map(|&g| Point {
                ns: 900.0 / g,
                core_ghz: g,
            })
            .collect()
    };
    let e = within_side_scaling(&cyc([4.5, 4.9, 4.2]), &cyc([3.42, 3.7, 3.2]));
    assert_eq!(e.verdict, Scaling::Scales, "{e:?}");
    // Steady clocks inside each side: undecided, whatever the ratio between them.
    let steady = within_side_scaling(&cyc([4.5, 4.5, 4.5]), &cyc([3.4, 3.4, 3.4]));
    assert_eq!(steady.verdict, Scaling::Undecided);
}

#[test]
fn too_little_evidence_is_undecided() {
    let steady: Vec<Point> = [1.0, 1.02, 0.98, 1.01]
        .iter()
        .map(|n| Point {
            ns: 100.0 * n,
            core_ghz: 3.69,
        })
        .collect();
    let s = clock_scaling(&steady);
    assert_eq!(s.verdict, Scaling::Undecided, "{s:?}");
    assert_eq!(s.elasticity, None);
    let two = runs(|ghz| 1000.0 / ghz);
    assert_eq!(clock_scaling(&two[..2]).verdict, Scaling::Undecided);
    assert_eq!(clock_scaling(&[]).verdict, Scaling::Undecided);
    let bad = [Point {
        ns: f64::NAN,
        core_ghz: 3.0,
    }; 4];
    assert_eq!(clock_scaling(&bad).verdict, Scaling::Undecided);
}

#[test]
fn within_side_evidence_counts_only_what_varies_within_a_side() {
    // A is one run (one point: nothing varies within it), B two rounds whose time follows
    // the clock exactly. Two points on one line leave no residual degree of freedom once
    // B is centred and the slope fitted: undecided, however clean the line looks.
    let a = [Point {
        ns: 1.0,
        core_ghz: 3.0,
    }];
    let b = [
        Point {
            ns: 1.0,
            core_ghz: 3.0,
        },
        Point {
            ns: 3.0 / 3.4,
            core_ghz: 3.4,
        },
    ];
    assert_eq!(within_side_scaling(&a, &b).verdict, Scaling::Undecided);
    // Three rounds on B leave one: decided.
    let b3 = [
        b[0],
        b[1],
        Point {
            ns: 3.0 / 3.2,
            core_ghz: 3.2,
        },
    ];
    assert_eq!(within_side_scaling(&a, &b3).verdict, Scaling::Scales);
}
