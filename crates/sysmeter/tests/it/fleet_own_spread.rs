//! `sysmeter fleet` judges a host that stands out against its own run-to-run interval (issue
//! 33): the slow machine of the five-machine fleet (`support::fleet`), given a stored history
//! of its own in which `os.syscall` swings between normal and twice as slow, is no outlier —
//! its own runs reach the fleet median — while the same machine with a steady history stays
//! one.

use std::path::{Path, PathBuf};

use sysmeter::model::RunRecord;

use crate::support::fleet::{HOSTS, SLOW, fleet_files, host_run, outliers};
use crate::support::{json_out, sysmeter};

/// Earlier runs of the slow machine whose `os.syscall` is `factors` × its latest run's.
fn slow_history(dir: &Path, factors: &[f64]) -> Vec<PathBuf> {
    let slow = HOSTS
        .iter()
        .position(|h| *h == SLOW)
        .expect("the slow host");
    (factors.iter().enumerate())
        .map(|(k, f)| {
            let mut run: RunRecord = host_run(slow);
            run.id = format!("20261122T1700{k:02}Z-hist{k}");
            run.started_ns -= (k as i64 + 1) * 3_600_000_000_000;
            run.finished_ns = Some(run.started_ns + 30_000_000_000);
            let syscall = run.results.iter_mut().find(|r| r.id == "os.syscall");
            for m in &mut syscall.expect("os.syscall").metrics {
                m.summary = m.summary.scaled(*f);
                m.samples.iter_mut().for_each(|s| *s *= f);
            }
            let path = dir.join(format!("hist{k}.json"));
            std::fs::write(&path, serde_json::to_string(&run).expect("serialise")).expect("write");
            path
        })
        .collect()
}

/// The outliers of the fleet with the slow machine's history `factors`.
fn outliers_with_history(factors: &[f64]) -> Vec<(String, String)> {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("fleet.db");
    // The history first: a host's latest run is the one the store received last
    // (`store/retention.rs`), as when each run is imported after it ran.
    let mut files = slow_history(dir.path(), factors);
    files.extend(fleet_files(dir.path()));
    let mut import = sysmeter();
    import.arg("import").arg("--db").arg(&db).args(&files);
    import.assert().success();
    let mut fleet = sysmeter();
    fleet
        .arg("fleet")
        .arg("--db")
        .arg(&db)
        .args(["--format", "json"]);
    outliers(&json_out(&mut fleet))
}

#[test]
fn a_host_that_swings_that_far_by_itself_is_no_outlier() {
    // Its own runs read the null call anywhere from normal to twice as slow.
    let swinging = outliers_with_history(&[0.45, 1.05, 0.5, 1.0, 0.48, 0.9]);
    assert!(swinging.is_empty(), "{swinging:?}");
    // A steady history: twice as slow every time, so it stands out for real.
    let steady = outliers_with_history(&[1.0, 1.01, 0.99, 1.005, 0.995, 1.0]);
    assert!(!steady.is_empty(), "no outlier");
    for (host, experiment) in &steady {
        assert_eq!((host.as_str(), experiment.as_str()), (SLOW, "os.syscall"));
    }
}
