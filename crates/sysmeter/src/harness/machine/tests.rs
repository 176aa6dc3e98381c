//! Measurements of the probe itself on the machine at hand, run by hand (they are
//! `#[ignore]`d and assert nothing about speed):
//! `cargo test -p sysmeter --release --lib probe_repeatability -- --ignored --nocapture`.
//! They print the spread of 200 back-to-back probes, the probe's duration, minimum versus
//! median of the repetitions, and the core clock by three methods.

use std::hint::black_box;
use std::time::Instant;

use sysmeter_sys::kernels::{self, CHAIN_LEN, Chain};
use sysmeter_sys::probe::{self, ADD_UNROLL, MUL_UNROLL, PROBE_MUL_TURNS};

use super::sample::{CYCLES_PER_MUL, ProbeSample};

fn sorted(mut v: Vec<f64>) -> Vec<f64> {
    v.sort_by(f64::total_cmp);
    v
}

fn q(s: &[f64], p: f64) -> f64 {
    s[((s.len() - 1) as f64 * p).round() as usize]
}

fn describe(name: &str, v: &[f64]) {
    let s = sorted(v.to_vec());
    let steps: Vec<f64> = v.windows(2).map(|w| (w[1] / w[0] - 1.0).abs()).collect();
    let st = sorted(steps);
    println!(
        "{name:>12}: min {:.3} p5 {:.3} median {:.3} p95 {:.3} max {:.3} CV {:.2}% | \
         |change| between neighbours: p50 {:.2}% p95 {:.2}% p99 {:.2}% max {:.2}%",
        s[0],
        q(&s, 0.05),
        q(&s, 0.5),
        q(&s, 0.95),
        s[s.len() - 1],
        100.0 * crate::stats::cv(v),
        100.0 * q(&st, 0.5),
        100.0 * q(&st, 0.95),
        100.0 * q(&st, 0.99),
        100.0 * st[st.len() - 1],
    );
}

fn pin_last_cpu() -> usize {
    let cpus = sysmeter_sys::sched::allowed_cpus().unwrap_or_default();
    let cpu = cpus.last().copied().unwrap_or(0);
    let pinned = sysmeter_sys::sched::pin_current_thread(cpu).is_ok();
    println!("measuring on CPU {cpu} (pinned: {pinned})");
    cpu
}

#[test]
#[ignore = "a measurement of this machine, run by hand with --release --nocapture"]
fn probe_repeatability() {
    pin_last_cpu();
    let n = 200;
    let mut durations = Vec::new();
    let mut samples = Vec::new();
    let t0 = Instant::now();
    for _ in 0..n {
        let r = probe::probe();
        durations.push(r.duration_ns as f64 / 1000.0);
        samples.push(ProbeSample::from_reading(&r, CYCLES_PER_MUL));
    }
    println!("{n} probes in {:.1} ms", t0.elapsed().as_secs_f64() * 1e3);
    describe(
        "core_ghz",
        &samples.iter().map(|s| s.core_ghz).collect::<Vec<_>>(),
    );
    describe(
        "throughput",
        &samples.iter().map(|s| s.throughput).collect::<Vec<_>>(),
    );
    describe(
        "syscall_ns",
        &samples.iter().map(|s| s.syscall_ns).collect::<Vec<_>>(),
    );
    describe("duration_us", &durations);
    min_versus_median(n);
}

/// The same 5 repetitions of the multiply chain, summarised by their minimum and by their
/// median: which statistic repeats better from probe to probe.
fn min_versus_median(n: usize) {
    let (mut mins, mut medians) = (Vec::new(), Vec::new());
    let muls = (PROBE_MUL_TURNS * MUL_UNROLL) as f64;
    for _ in 0..n {
        let reps = sorted(
            (0..5)
                .map(|_| probe::time_mul_chain(PROBE_MUL_TURNS) as f64)
                .collect(),
        );
        mins.push(CYCLES_PER_MUL * muls / reps[0]);
        medians.push(CYCLES_PER_MUL * muls / reps[2]);
    }
    describe("ghz(min)", &mins);
    describe("ghz(median)", &medians);
}

#[test]
#[ignore = "a measurement of this machine, run by hand with --release --nocapture"]
fn core_clock_three_ways() {
    pin_last_cpu();
    let turns = 20_000u64;
    for round in 0..5 {
        let mul = probe::time_mul_chain(turns) as f64 / (turns * MUL_UNROLL) as f64;
        let add = probe::time_add_chain(turns) as f64 / (turns * ADD_UNROLL) as f64;
        let blocks = turns * ADD_UNROLL / CHAIN_LEN;
        let t = Instant::now();
        black_box(kernels::run_chain(Chain::IntAdd, black_box(blocks)));
        let reset_add = t.elapsed().as_nanos() as f64 / (blocks * CHAIN_LEN) as f64;
        let t = Instant::now();
        black_box(kernels::run_chain(Chain::IntMul, black_box(blocks)));
        let reset_mul = t.elapsed().as_nanos() as f64 / (blocks * CHAIN_LEN) as f64;
        println!(
            "round {round}: carried mul {mul:.4} ns -> {:.2} GHz | carried add {add:.4} ns -> \
             {:.2} GHz | cpu.ops add (reset per 100) {reset_add:.4} ns -> {:.2} GHz | cpu.ops \
             mul (reset per 100) {reset_mul:.4} ns -> {:.2} GHz",
            CYCLES_PER_MUL / mul,
            1.0 / add,
            1.0 / reset_add,
            CYCLES_PER_MUL / reset_mul
        );
    }
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let mhz: Vec<&str> = cpuinfo
        .lines()
        .filter(|l| l.starts_with("cpu MHz"))
        .collect();
    println!("/proc/cpuinfo: {mhz:?}");
}

#[test]
#[ignore = "a measurement of this machine, run by hand with --nocapture"]
fn beside_on_a_quiet_interval() {
    use super::counters::{Beside, Counters};
    let cpu = pin_last_cpu();
    for (what, spin) in [("sleeping 300 ms", false), ("spinning 300 ms", true)] {
        let a = Counters::read(cpu).expect("/proc is readable");
        let t = Instant::now();
        if spin {
            while t.elapsed().as_millis() < 300 {
                black_box(probe::mul_chain(100, 3));
            }
        } else {
            std::thread::sleep(std::time::Duration::from_millis(300));
        }
        let b = Counters::read(cpu).expect("/proc is readable");
        let d = Beside::between(&a, &b, t.elapsed().as_nanos() as u64);
        println!(
            "{what}: own {} ms, {d:?}",
            (b.own_cpu_ns - a.own_cpu_ns) / 1_000_000
        );
    }
}
