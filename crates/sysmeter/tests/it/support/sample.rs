//! The fixed run of `sysmeter::model::fixture` where tests need a stored run or a run file:
//! a database holding it, the run written as JSON.

use std::path::{Path, PathBuf};

use sysmeter::model::RunRecord;
use sysmeter::model::fixture::sample_run;
use sysmeter::store::Store;

/// `dir/runs.db` holding the sample run: the database and the run.
pub fn db_with_sample_run(dir: &Path) -> (PathBuf, RunRecord) {
    let db = dir.join("runs.db");
    let run = sample_run();
    Store::open(&db)
        .expect("open db")
        .save_run(&run)
        .expect("store the sample run");
    (db, run)
}

/// `dir/run.json`: the sample run as a run file.
pub fn sample_run_file(dir: &Path) -> PathBuf {
    let json = dir.join("run.json");
    std::fs::write(&json, serde_json::to_string(&sample_run()).expect("json")).expect("write");
    json
}
