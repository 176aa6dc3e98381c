//! A fleet of five machines as run-record files, made from the fixture run: host names and
//! run ids changed, every metric jittered by a few percent per host, and `node-4` — on
//! another kernel — twice as slow in every `os.syscall` metric (and not in `os.ctxsw` or
//! `mem.pagefault`, copies of it). `sysmeter fleet` should find
//! `node-4` in `os.syscall` and nowhere else.

use std::path::{Path, PathBuf};

use sysmeter::model::RunRecord;
use sysmeter::model::fixture::sample_run;

/// The machines, in order.
pub const HOSTS: [&str; 5] = ["node-0", "node-1", "node-2", "node-3", "node-4"];
/// The slow machine.
pub const SLOW: &str = "node-4";
/// Each host's factor on every metric: a few percent, as real machines of one model differ.
const JITTER: [f64; 5] = [1.0, 1.03, 0.97, 1.02, 0.99];

/// Host `i`'s run: the fixture under another name, id and start, its metrics scaled.
pub fn host_run(i: usize) -> RunRecord {
    let mut run = sample_run();
    run.id = format!("20261122T18324{i}Z-f1e{i}");
    run.started_ns += i as i64 * 1_000_000_000;
    run.host.hostname = HOSTS[i].to_string();
    // The fixture measures only os.syscall: two more experiments with metrics of their own
    // (copies of it under other ids), in which the slow machine is not slow.
    let syscall = run.results[0].clone();
    for id in ["os.ctxsw", "mem.pagefault"] {
        let mut copy = syscall.clone();
        copy.id = id.to_string();
        run.results.push(copy);
    }
    if HOSTS[i] == SLOW {
        run.host.kernel = "6.11.0-9-generic".to_string();
    }
    for r in &mut run.results {
        let k = JITTER[i]
            * if HOSTS[i] == SLOW && r.id == "os.syscall" {
                2.0
            } else {
                1.0
            };
        for m in &mut r.metrics {
            m.summary = m.summary.scaled(k);
            m.samples.iter_mut().for_each(|s| *s *= k);
        }
    }
    run
}

/// Writes the five runs as `dir/node-N.json` (`--format json` records).
pub fn fleet_files(dir: &Path) -> Vec<PathBuf> {
    (0..HOSTS.len())
        .map(|i| {
            let path = dir.join(format!("{}.json", HOSTS[i]));
            let json = serde_json::to_string_pretty(&host_run(i)).expect("serialise");
            std::fs::write(&path, json).expect("write run file");
            path
        })
        .collect()
}

/// The outliers of `fleet --format json` as (host, experiment) pairs, after checking that
/// each names its metric, value and fleet median.
pub fn outliers(doc: &serde_json::Value) -> Vec<(String, String)> {
    let list = doc["outliers"].as_array().expect("outliers list");
    list.iter()
        .map(|o| {
            assert!(o["metric"].is_string() && o["value"].is_number(), "{o}");
            assert!(o["fleet_median"].is_number(), "{o}");
            let s = |k: &str| o[k].as_str().expect("string").to_string();
            (s("host"), s("experiment"))
        })
        .collect()
}

/// (For the PostgreSQL tests.) A fleet of `n` machines as run-record files in `dir`, made from the fixture run: every
/// host's metrics jittered by up to ±3% (deterministically), three CPU models, and every
/// host numbered 42 modulo 100 on another kernel and twice as slow in `os.syscall`.
#[cfg(feature = "pg")]
pub fn many_files(dir: &Path, n: usize) -> Vec<PathBuf> {
    (0..n)
        .map(|i| {
            let mut run = host_run(i % 4);
            run.id = format!("20261122T183240Z-m{i:05}");
            run.host.hostname = format!("host-{i:05}");
            run.host.cpu.model = format!("Xeon {}", ["A", "B", "C"][i % 3]);
            run.host.kernel = "6.8.0-45-generic".to_string();
            let slow = i % 100 == 42;
            if slow {
                run.host.kernel = "6.11.0-9-generic".to_string();
            }
            let jitter = 1.0 + 0.03 * ((i as f64) * 12.9898).sin();
            for r in &mut run.results {
                let k = jitter
                    * if slow && r.id == "os.syscall" {
                        2.0
                    } else {
                        1.0
                    };
                for m in &mut r.metrics {
                    m.summary = m.summary.scaled(k);
                }
            }
            let path = dir.join(format!("host-{i:05}.json"));
            std::fs::write(&path, serde_json::to_string(&run).expect("serialise")).expect("write");
            path
        })
        .collect()
}
