//! A run whose process died, in a PostgreSQL (fleet) database (issue 13, item 3): like in
//! SQLite (`killed.rs`), `history` and `show` call it "incomplete (sysmeter did not
//! finish)", `show` names the experiments it is missing, and `latest` skips it while its id
//! still finds it. Compiled only with `--features pg`.

use sysmeter::model::RunRecord;
use sysmeter::model::fixture::sample_run;

use crate::support::pg::{open, sysmeter_as, test_db};
use crate::support::{json_out, need, stdout_of};

/// The sample run as a run that died: id `id`, no end.
fn died(id: &str) -> RunRecord {
    let mut died = sample_run();
    died.id = id.into();
    died.finished_ns = None;
    died
}

#[test]
fn a_run_that_died_is_incomplete_and_not_latest_in_postgres() {
    let db = need!(test_db());
    let done = sample_run();
    let mut died = died("died-1");
    died.started_ns += 1_000;
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

/// Retention and `latest` on a fleet store rank by the server's clock (issue 47): a run dated
/// three years ahead is never latest and is the one `prune --keep 1` deletes, the killed
/// run received last stays, and a hostname written by SQL is printed escaped.
#[test]
fn prune_and_latest_rank_by_what_the_server_received_in_postgres() {
    let db = need!(test_db());
    let done = sample_run();
    let died = died("died-2");
    let mut future = sample_run();
    future.id = "future-1".into();
    future.started_ns += 3 * 365 * 86_400 * 1_000_000_000;
    future.finished_ns = Some(future.started_ns + 1);
    let mut store = open(&db.url);
    assert!(
        store
            .import_run(&future)
            .expect("import the run dated ahead")
    );
    store.save_run(&done).expect("store the finished run");
    store.begin_run(&died).expect("begin the run that dies");
    drop(store);
    let host = done.host.hostname.as_str();
    let latest =
        json_out(sysmeter_as(host).args(["show", "latest", "--format", "json", "--db", &db.url]));
    assert_eq!(latest["id"], done.id.as_str());
    let dry =
        stdout_of(sysmeter_as(host).args(["prune", "--keep", "1", "--dry-run", "--db", &db.url]));
    assert!(dry.contains("would delete run future-1"), "{dry}");
    assert!(!dry.contains(&done.id) && !dry.contains("died-2"), "{dry}");
    stdout_of(sysmeter_as(host).args(["prune", "--keep", "1", "--db", &db.url]));
    let listed = json_out(sysmeter_as(host).args(["history", "--format", "json", "--db", &db.url]));
    let ids: Vec<&str> = listed
        .as_array()
        .expect("runs")
        .iter()
        .filter_map(|r| r["id"].as_str())
        .collect();
    assert_eq!(ids.len(), 2, "{ids:?}");
    assert!(
        ids.contains(&"died-2") && ids.contains(&done.id.as_str()),
        "{ids:?}"
    );
    db.client()
        .execute(
            "UPDATE runs SET hostname = 'good\u{202e}evil\u{1b}]0;x\u{7}' WHERE id = 'died-2'",
            &[],
        )
        .expect("a hostname written by SQL");
    let all = stdout_of(sysmeter_as(host).args(["history", "--all-hosts", "--db", &db.url]));
    assert!(
        !all.contains('\u{202e}') && !all.contains('\u{1b}'),
        "{all}"
    );
    assert!(all.contains("good\\u202eevil\\u001b]0;x\\u0007"), "{all}");
}
