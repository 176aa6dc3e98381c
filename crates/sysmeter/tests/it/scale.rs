//! Integration tests of `sysmeter scale`: C fixtures of known complexity (a linear loop, a
//! doubly nested loop, a merge sort of N random ints) are recognised as O(N), O(N²) and
//! O(N log N); a program chasing pointers through an N KiB working set shows a knee past the
//! caches; and the command's errors, formats, storage and timeout behave.
//!
//! The fixtures fit the fastest run's CPU time (`--time cpu --stat min`): seven engineers
//! share this machine's two CPUs (and other guests its host), waiting for a CPU makes wall
//! times too noisy to tell N from N log N, and interference only ever slows a run down —
//! medians of five runs still swung ±10% from size to size here, minima did not. The heavy tests
//! take the `exclusive` lock so they do not run side by side with each other or the
//! profiler's (the knee test also needs the caches to itself). Sizes are chosen so most runs take 5–300 ms and process start-up (~1 ms) does
//! not dominate.

use std::path::Path;

use serde_json::Value;

use crate::support::skip::Missing;
use crate::support::sysmeter;
use crate::support::sysmeter_db;
use crate::support::{compile_fixture, exclusive, finding, json_out, need, stderr_of, stdout_of};

/// Runs `scale --format json --no-store --time cpu --stat min` with `args` on fixture `name`; returns the
/// one result.
fn scale_fixture(name: &str, args: &[&str]) -> Result<Value, Missing> {
    scale_fixture_with(name, &[], args)
}

/// [`scale_fixture`] with `fixed` arguments before the size (`scale_loops 2 {n}`).
fn scale_fixture_with(name: &str, fixed: &[&str], args: &[&str]) -> Result<Value, Missing> {
    let _alone = exclusive();
    let dir = tempfile::tempdir().expect("temp dir");
    let exe = compile_fixture(name, dir.path(), &[])?;
    let run = json_out(
        sysmeter()
            .args(["scale", "--format", "json", "--no-store", "--time", "cpu"])
            .args(["--stat", "min"])
            .args(args)
            .arg("--")
            .arg(&exe)
            .args(fixed)
            .arg("{n}"),
    );
    assert_eq!(run["kind"], "scale");
    let result = run["results"][0].clone();
    println!("{name}: {}", summary(&result));
    Ok(result)
}

/// The fit table and findings, for the test log.
fn summary(result: &Value) -> String {
    let mut lines = Vec::new();
    for m in result["metrics"].as_array().into_iter().flatten() {
        lines.push(format!(
            "  {} = {} ({})",
            m["name"].as_str().unwrap_or(""),
            m["summary"]["median"],
            m["note"].as_str().unwrap_or("")
        ));
    }
    let per: Vec<String> = result["series"][1]["points"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            format!(
                "{}:{:.3}",
                p["x"],
                p["summary"]["median"].as_f64().unwrap_or(0.0)
            )
        })
        .collect();
    lines.push(format!("  t/N (ns) by N: {}", per.join(" ")));
    for f in result["findings"].as_array().into_iter().flatten() {
        lines.push(format!("  • {}", f["text"].as_str().unwrap_or("")));
    }
    format!("\n{}", lines.join("\n"))
}

/// The class the fit chose, from the `best fit …: a` metric.
fn best_class(result: &Value) -> String {
    let name = result["metrics"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["name"].as_str())
        .find(|n| n.starts_with("best fit ") && n.ends_with(": a"))
        .expect("a best-fit metric");
    name["best fit ".len()..name.len() - ": a".len()].to_string()
}

/// Measures `name` with `fixed` and `args` until `accept` holds, up to three attempts: a run
/// the tool itself flags as noisy (`noisy_sizes`: some size's runs vary by more than 10%) is
/// measured again, a clean run that `accept` rejects fails at once. CI's VMs have made the
/// fastest run swing 10–26% from size to size, which blurs N from N log N and once made a
/// clean N² curve bend enough to pass for a knee; the tool said so in the same report.
fn measured_until(
    name: &str,
    fixed: &[&str],
    args: &[&str],
    accept: impl Fn(&Value) -> Result<(), String>,
) -> Result<Value, Missing> {
    for attempt in 1..=3 {
        let r = scale_fixture_with(name, fixed, args)?;
        let Err(why) = accept(&r) else {
            return Ok(r);
        };
        let noisy = finding(&r, "noisy_sizes").is_some();
        assert!(
            noisy && attempt < 3,
            "attempt {attempt}: {why}, from runs {}:{}",
            if noisy {
                "the tool flagged as noisy"
            } else {
                "it found clean"
            },
            summary(&r)
        );
        println!("attempt {attempt}: {why}, from noisy runs; measuring again");
    }
    unreachable!("the third attempt returns or fails")
}

/// `Ok` when the best fit is `class`.
fn class_is(class: &'static str) -> impl Fn(&Value) -> Result<(), String> {
    move |r| match best_class(r) {
        c if c == class => Ok(()),
        c => Err(format!("picked {c}, not {class}")),
    }
}

#[test]
fn a_linear_loop_is_o_n() {
    let args = ["--range", "2M..128M", "--repeat", "3"];
    let r = need!(measured_until(
        "scale_loops",
        &["1"],
        &args,
        class_is("O(N)")
    ));
    assert_eq!(best_class(&r), "O(N)", "{}", summary(&r));
}

#[test]
fn a_doubly_nested_loop_is_o_n_squared() {
    // A clean power law has no knee, whatever start-up does to the smallest sizes.
    let quadratic_without_knee = |r: &Value| {
        class_is("O(N²)")(r)?;
        match finding(r, "knee") {
            Some(k) => Err(format!("a knee: {}", k["text"])),
            None => Ok(()),
        }
    };
    let args = ["--range", "1000..8000x1.41421356", "--repeat", "5"];
    let r = need!(measured_until(
        "scale_loops",
        &["2"],
        &args,
        quadratic_without_knee
    ));
    assert_eq!(best_class(&r), "O(N²)", "{}", summary(&r));
    assert!(finding(&r, "knee").is_none(), "{}", summary(&r));
}

#[test]
fn sorting_is_o_n_log_n() {
    // A hand-written merge sort whose comparisons carry fixed work, over 2k..512k (log N
    // from 11 to 19): here O(N log N) fits within ~2% and O(N) misses by ~10%. CI's VM once
    // made the fastest of five runs swing 26% from size to size, which blurred the two (an
    // earlier qsort fixture over 8k..1024k picked O(N)).
    let args = ["--range", "2k..512k", "--repeat", "5", "--predict", "10M"];
    let r = need!(measured_until(
        "scale_sort",
        &[],
        &args,
        class_is("O(N log N)")
    ));
    let p = finding(&r, "prediction_10000000").expect("a prediction");
    assert!(p["value"].as_f64().is_some_and(|t| t > 0.0), "{p}");
}

/// The workset fixture's scale run; measured again (up to three attempts) when a run finds
/// no knee, which a co-tenant of the shared L3 can cause (CI once saw the small sizes swing
/// 2× with a clear step at 6–8 Ki elements and no knee found). A detector that never finds
/// the knee still fails.
fn workset_with_knee() -> Result<Value, Missing> {
    let args = ["--range", "256..32768x1.41421356", "--repeat", "4"];
    let mut r = scale_fixture("scale_workset", &args)?;
    for attempt in 1..3 {
        if finding(&r, "knee").is_some() {
            break;
        }
        println!(
            "attempt {attempt} found no knee; measuring again:{}",
            summary(&r)
        );
        r = scale_fixture("scale_workset", &args)?;
    }
    Ok(r)
}

/// The sizes' time per element (t/N) from the result's series, by N.
fn per_element(r: &Value) -> Vec<(f64, f64)> {
    let points = r["series"][1]["points"].as_array().into_iter().flatten();
    points
        .filter_map(|p| Some((p["x"].as_f64()?, p["summary"]["median"].as_f64()?)))
        .collect()
}

/// Nothing here depends on the host's caches. Where the step lies differs by machine: on
/// the AMD EPYC guest it began at 2–6 MiB in 8 runs, inside the 32 MiB L3 sysfs reports;
/// the Intel Xeon guest's sysfs reports a 260 MiB L3, which this range (up to 32 MiB) never
/// outgrows, yet its time per element rose 7× over the range. A random walk through 256 KiB–32 MiB outgrows
/// the L2 and the TLB's reach on every machine the project has run on, whether or not it
/// outgrows the last-level cache. What holds everywhere: a knee is found; its metric and
/// finding agree; it is a measured size with sizes of the curve on both sides; and the
/// largest size's time per element is clearly above the lowest at or below the knee — the
/// finding describes the curve, not noise.
#[test]
fn a_random_working_set_shows_a_knee_past_the_caches() {
    let r = need!(workset_with_knee());
    let knee = finding(&r, "knee").unwrap_or_else(|| panic!("no knee:{}", summary(&r)));
    let at = knee["value"].as_f64().expect("knee size");
    let metric = r["metrics"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|m| m["name"] == "knee at N")
        .expect("knee metric");
    assert_eq!(metric["summary"]["median"].as_f64(), Some(at));
    let text = knee["text"].as_str().unwrap_or("");
    let curve = per_element(&r);
    let i = curve
        .iter()
        .position(|&(n, _)| (n - at).abs() < 0.5)
        .unwrap_or_else(|| panic!("the knee {at} is no measured size:{}", summary(&r)));
    assert!(i > 0 && i + 1 < curve.len(), "knee at an end: {text}");
    // The lowest t/N up to the knee is the one least inflated by the fixed cost (which only
    // lowers t/N as N grows), so the rise over it is the rise of the work per element.
    let below = curve[..=i]
        .iter()
        .map(|p| p.1)
        .fold(f64::INFINITY, f64::min);
    let largest = curve[curve.len() - 1].1;
    assert!(
        largest >= 1.5 * below,
        "t/N {largest:.0} ns at the largest size, at least {below:.0} ns up to the knee: \
         {text}{}",
        summary(&r)
    );
}

/// `scale` of a command whose time does not depend on N (a shell doing nothing), quickly.
fn quick_scale(db: &Path, extra: &[&str]) -> assert_cmd::assert::Assert {
    sysmeter_db(db, &["scale", "--sizes", "1,2,3,4,5,6", "--repeat", "2"])
        .args(extra)
        .args(["--", "sh", "-c", ":", "{n}"])
        .assert()
}

#[test]
fn results_are_stored_and_render_in_every_format() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("s.db");
    let out = quick_scale(&db, &[]).success().get_output().clone();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("sysmeter scale run"), "{text}");
    assert!(text.contains("wall time by N"), "{text}");
    assert!(text.contains("best fit O("), "{text}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("stored as run"));
    let run = json_out(&mut sysmeter_db(
        &db,
        &["show", "latest", "--format", "json"],
    ));
    assert_eq!(run["kind"], "scale");
    assert_eq!(run["config"]["selected"][0], "sh -c : {n}");
    let r = &run["results"][0];
    assert_eq!(r["series"][0]["points"].as_array().map(Vec::len), Some(6));
    assert_eq!(r["series"][0]["points"][0]["summary"]["n"], 2);
    assert!(finding(r, "best_fit").is_some());
    let runs = r["artifacts"][0]["content"].as_str().expect("runs.csv");
    assert_eq!(runs.lines().count(), 13, "header + 12 runs: {runs}");
    for (format, needle) in [("csv", "wall time"), ("markdown", "| N |")] {
        let text = stdout_of(&mut sysmeter_db(
            &db,
            &["show", "latest", "--format", format],
        ));
        assert!(text.contains(needle), "{format}: {text}");
    }
}

#[test]
fn usage_errors_exit_2_with_one_sentence() {
    let cases: [(&[&str], &str); 5] = [
        (&["--sizes", "1,2,3", "--", "true"], "placeholder"),
        (&["--sizes", "1,2", "--", "true", "{n}"], "at least 3"),
        (&["--range", "8..1", "--", "true", "{n}"], "empty"),
        (&["--", "true", "{n}"], "--sizes"),
        (
            &["--sizes", "1,2,3", "--", "/nonexistent/prog", "{n}"],
            "cannot run '/nonexistent/prog'",
        ),
    ];
    for (args, needle) in cases {
        let err = stderr_of(sysmeter().args(["scale", "--no-store"]).args(args), 2);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

#[test]
fn a_failing_run_stops_the_measurement_with_exit_1() {
    let out = sysmeter()
        .args(["scale", "--no-store", "--sizes", "1,2,3", "--warmup", "0"])
        .args(["--", "sh", "-c", "exit 3", "{n}"])
        .assert()
        .code(1)
        .get_output()
        .clone();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("exited with status 3"), "{err}");
    assert!(err.contains("run 1 of 15"), "{err}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("failed:"));
}

#[test]
fn a_run_longer_than_the_timeout_is_killed() {
    let err = stderr_of(
        sysmeter()
            .args([
                "scale",
                "--no-store",
                "--sizes",
                "30,31,32",
                "--timeout",
                "0.2",
            ])
            .args(["--", "sleep", "{n}"]),
        1,
    );
    assert!(err.contains("took longer than --timeout 0.2 s"), "{err}");
    assert!(err.contains("warm-up run, N = 30"), "{err}");
}
