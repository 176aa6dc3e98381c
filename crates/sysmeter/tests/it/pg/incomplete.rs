//! A run whose process died, in a PostgreSQL (fleet) database (issue 13, item 3): like in
//! SQLite (`killed.rs`), `history` and `show` call it "incomplete (sysmeter did not
//! finish)", `show` names the experiments it is missing, and `latest` skips it while its id
//! still finds it. Compiled only with `--features pg`.

use sysmeter::model::fixture::sample_run;

use crate::support::pg::{open, sysmeter_as, test_db};
use crate::support::{json_out, need, stdout_of};

#[test]
fn a_run_that_died_is_incomplete_and_not_latest_in_postgres() {
    let db = need!(test_db());
    let done = sample_run();
    let mut died = sample_run();
    died.id = "died-1".into();
    died.started_ns += 1_000;
    died.finished_ns = None;
    let mut store = open(&db.url);
    store.save_run(&done).expect("store the finished run");
    // What a bench killed after its first experiment leaves: begun, one result, no end.
    store.begin_run(&died).expect("begin");
    store
        .put_result((&died.id, 0), &died.results[0], sysmeter::store::Put::New)
        .expect("add");
    drop(store);
    let host = done.host.hostname.as_str();
    let history = stdout_of(sysmeter_as(host).args(["history", "--db", &db.url]));
    let row = history
        .lines()
        .find(|l| l.contains("died-1"))
        .expect("listed");
    assert!(
        row.contains("incomplete (sysmeter did not finish)"),
        "{history}"
    );
    let shown = stdout_of(sysmeter_as(host).args(["show", "died-1", "--db", &db.url]));
    let missing = "incomplete (sysmeter did not finish): missing 3 of 4 experiments: \
                   mem.latency, fs.direct, ipc.pipe";
    assert!(shown.contains(missing), "{shown}");
    let latest =
        json_out(sysmeter_as(host).args(["show", "latest", "--format", "json", "--db", &db.url]));
    assert_eq!(latest["id"], done.id.as_str());
}
