//! Integration tests of the memory group: `bench mem --quick` yields the latency curves, the
//! detected hierarchy, bandwidth figures and page-fault costs, with findings, in JSON.

use crate::support::{bench_json, finding_keys, result};

#[test]
fn bench_mem_quick_reports_curves_levels_bandwidth_and_faults() {
    let run = bench_json(&["mem"]);

    let lat = result(&run, "mem.latency");
    assert_eq!(lat["status"], "ok", "{lat}");
    let series = lat["series"].as_array().expect("series");
    assert!(series.len() >= 2, "random chain and strides expected");
    for s in series {
        let points = s["points"].as_array().expect("points");
        assert!(points.len() >= 4, "{}", s["name"]);
        assert_eq!(s["x_unit"], "bytes");
        let xs: Vec<f64> = points.iter().filter_map(|p| p["x"].as_f64()).collect();
        assert!(
            xs.windows(2).all(|w| w[0] < w[1]),
            "sizes ascending in {}",
            s["name"]
        );
        assert!(
            points
                .iter()
                .all(|p| p["summary"]["median"].as_f64().is_some_and(|m| m > 0.0))
        );
    }
    // The random chain over the largest working set is slower than over the smallest.
    let random = &series[0]["points"];
    let first = random[0]["summary"]["median"].as_f64().expect("first");
    let last = random.as_array().and_then(|p| p.last()).expect("last")["summary"]["median"]
        .as_f64()
        .expect("last median");
    assert!(
        last > 2.0 * first,
        "DRAM ({last} ns) not slower than L1 ({first} ns)"
    );
    let keys = finding_keys(lat);
    assert!(
        keys.iter().any(|k| k.starts_with("hierarchy.")),
        "no detected levels: {keys:?}"
    );

    let bw = result(&run, "mem.bandwidth");
    assert_eq!(bw["status"], "ok", "{bw}");
    let metrics = bw["metrics"].as_array().expect("metrics");
    assert!(metrics.len() >= 4);
    // Positive, not fast: a descheduled thread on a loaded host can make one figure tiny.
    assert!(metrics.iter().all(|m| m["unit"] == "bytes_per_sec"
        && m["summary"]["median"].as_f64().is_some_and(|v| v > 0.0)));
    assert!(!finding_keys(bw).is_empty());

    between_probes(lat, series[0]["points"].as_array().map_or(0, Vec::len));
    between_probes(bw, 2);
    shared_cache_probe(lat, bw);
    page_faults(&run);
}

/// `mem.latency` carries the shared-cache probe (start and end at least, a plausible time
/// per load, and the finding that reports it); `mem.bandwidth` does not.
fn shared_cache_probe(lat: &serde_json::Value, bw: &serde_json::Value) {
    let cache = &lat["machine"]["cache"];
    assert!(cache["count"].as_u64().is_some_and(|n| n >= 2), "{cache}");
    let field = |k: &str| cache[k].as_f64().unwrap_or(f64::NAN);
    let (lo, med, hi) = (field("min_ns"), field("median_ns"), field("max_ns"));
    assert!(lo > 0.3 && lo <= med && med <= hi && hi < 5000.0, "{cache}");
    assert!(
        finding_keys(lat).iter().any(|k| k == "machine.cache_share"),
        "{lat}"
    );
    assert!(bw["machine"].get("cache").is_none(), "{}", bw["machine"]);
}

/// Long series probe the machine between their points, on the measuring CPU.
fn between_probes(exp: &serde_json::Value, at_least: usize) {
    let between = &exp["machine"]["between"];
    let count = between["count"].as_u64().unwrap_or(0) as usize;
    assert!(
        count >= at_least,
        "{}: {between} (want {at_least})",
        exp["id"]
    );
    let (lo, hi) = (
        between["core_ghz_min"].as_f64(),
        between["core_ghz_max"].as_f64(),
    );
    assert!(lo.is_some_and(|lo| lo > 0.0) && lo <= hi, "{between}");
}

fn page_faults(run: &serde_json::Value) {
    let pf = result(run, "mem.pagefault");
    assert_eq!(pf["status"], "ok", "{pf}");
    let metrics = pf["metrics"].as_array().expect("metrics");
    assert!(!metrics.is_empty());
    assert!(
        metrics
            .iter()
            .all(|m| m["summary"]["median"].as_f64().is_some_and(|v| v > 0.0))
    );
    assert!(!finding_keys(pf).is_empty());
}
