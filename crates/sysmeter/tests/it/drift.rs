//! The machine-state probe on a real run: a thread that starts spinning on the measuring CPU
//! partway through a bench must make the experiment it lands in `stable: false` with a
//! one-line reason, stored in the result (`ExperimentResult.machine`) and shown in the table.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::support::{json_out, sysmeter};

/// Spins on `cpu` until `stop` is set.
fn spinner(cpu: usize, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let pinned = sysmeter_sys::sched::pin_current_thread(cpu);
        assert!(
            pinned.is_ok(),
            "pinning the spinner to CPU {cpu}: {pinned:?}"
        );
        let mut x = 0u64;
        while !stop.load(Ordering::Relaxed) {
            x = std::hint::black_box(x.wrapping_add(1));
        }
    })
}

#[test]
fn a_spinner_on_the_measuring_cpu_makes_the_experiment_unstable() {
    let cpus = sysmeter_sys::sched::allowed_cpus().expect("affinity is readable");
    let cpu = *cpus.last().expect("at least one CPU");
    let run = bench_with_spinner(cpu);
    let results = run["results"].as_array().expect("results");
    assert_unstable_with_reasons(results, cpu);
    assert_core_cycles_on_time_metrics(results);
}

/// A JSON bench of cpu.call and os.syscall on `cpu`, with a spinner on the same CPU from
/// shortly after its start to its end.
fn bench_with_spinner(cpu: usize) -> serde_json::Value {
    // A spinner and a bench beside the timing-sensitive tests would blur them.
    let _alone = crate::support::exclusive();
    let stop = Arc::new(AtomicBool::new(false));
    // The spinner starts once the bench is under way (after its calibration) and runs until
    // it ends: every experiment it lands in shares its CPU with it, the re-measurement of
    // the default profile included, so the result must say the machine did not hold still.
    let starter = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(400));
            spinner(cpu, stop)
        })
    };
    let cpu_arg = cpu.to_string();
    let run = json_out(sysmeter().args([
        "bench",
        "--only",
        "cpu.call,os.syscall",
        "--cpu",
        &cpu_arg,
        "--no-store",
        "--format",
        "json",
    ]));
    stop.store(true, Ordering::Relaxed);
    let spin = starter.join().expect("starter thread");
    spin.join().expect("spinner thread");
    run
}

/// At least one result is unstable, and each unstable one has a one-line reason and the
/// probe's values.
fn assert_unstable_with_reasons(results: &[serde_json::Value], cpu: usize) {
    let unstable: Vec<&serde_json::Value> = results
        .iter()
        .filter(|r| r["machine"]["stable"] == false)
        .collect();
    assert!(
        !unstable.is_empty(),
        "no experiment was flagged although a spinner shared CPU {cpu}: {:#}",
        serde_json::Value::Array(results.iter().map(|r| r["machine"].clone()).collect())
    );
    for r in unstable {
        let reason = r["machine"]["reason"]
            .as_str()
            .expect("an unstable result has a reason");
        assert!(
            !reason.is_empty() && !reason.contains('\n'),
            "reason: {reason:?}"
        );
        for field in [
            "core_ghz_start",
            "core_ghz_end",
            "throughput_start",
            "syscall_ns_end",
        ] {
            let v = r["machine"][field]
                .as_f64()
                .expect("probe values are numbers");
            assert!(v.is_finite() && v > 0.0, "{field} = {v}");
        }
    }
}

/// Every experiment measured with the probe has core cycles on its time metrics (a
/// near-zero call cost can come out negative after subtraction; its sign is not checked),
/// and the null system call's are positive.
fn assert_core_cycles_on_time_metrics(results: &[serde_json::Value]) {
    for r in results.iter().filter(|r| r["status"] == "ok") {
        assert!(r["machine"].is_object(), "{} has no machine state", r["id"]);
        for m in r["metrics"].as_array().expect("metrics") {
            if m["unit"] == "ns" {
                assert!(m["core_cycles"]["median"].is_number(), "{m:#}");
            }
        }
    }
    let syscall = results
        .iter()
        .find(|r| r["id"] == "os.syscall")
        .expect("os.syscall");
    let null = syscall["metrics"]
        .as_array()
        .and_then(|ms| ms.iter().find(|m| m["name"] == "null (getppid)"))
        .expect("the null system call");
    assert!(
        null["core_cycles"]["median"]
            .as_f64()
            .is_some_and(|c| c > 0.0),
        "{null:#}"
    );
}

#[test]
fn rounds_interleave_and_report_the_between_round_spread() {
    let alone = crate::support::exclusive();
    let run = json_out(sysmeter().args([
        "bench",
        "--quick",
        "--rounds",
        "3",
        "--only",
        "cpu.loop,os.syscall",
        "--no-store",
        "--format",
        "json",
    ]));
    drop(alone);
    let results = run["results"].as_array().expect("results");
    assert_eq!(results.len(), 2, "one combined result per experiment");
    for r in results {
        assert_eq!(
            r["round_machines"].as_array().map(Vec::len),
            Some(3),
            "{}",
            r["id"]
        );
        for m in r["metrics"].as_array().expect("metrics") {
            let medians = m["rounds"]["medians"].as_array().expect("round medians");
            assert_eq!(medians.len(), 3, "{}", m["name"]);
            // The CV is null only when the medians average zero (an empty loop's cost).
            let cv = &m["rounds"]["cv"];
            let zero = medians.iter().all(|x| x.as_f64() == Some(0.0));
            assert!(
                cv.as_f64().is_some_and(|cv| cv >= 0.0) || (cv.is_null() && zero),
                "{m:#}"
            );
        }
    }
    let bad = sysmeter()
        .args(["bench", "--rounds", "0", "--no-store"])
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&bad.get_output().stderr).into_owned();
    assert!(err.contains("--rounds"), "{err}");
}
