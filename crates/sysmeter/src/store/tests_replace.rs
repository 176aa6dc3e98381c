//! Replacing a stored result, as `bench` with several rounds does after each round: the new
//! result comes back with only its own metrics, and a result not stored yet is inserted.

use super::tests::{begin_fixture_run, put};
use super::*;

fn metric_rows(store: &Store) -> i64 {
    store
        .sqlite_conn()
        .query_row("SELECT count(*) FROM metrics", [], |r| r.get(0))
        .expect("count")
}

#[test]
fn a_replaced_result_comes_back_with_only_its_own_metrics() {
    let mut store = Store::open_in_memory().expect("open");
    let run = begin_fixture_run(&mut store, "r1");
    // Nothing stored under 0 yet: replacing inserts.
    put(&mut store, ("r1", 0), &run.results[0], Put::Replace);
    put(&mut store, ("r1", 1), &run.results[1], Put::New);
    assert_eq!(metric_rows(&store), 2);
    let mut fewer = run.results[0].clone();
    fewer.metrics.truncate(1);
    fewer.findings.clear();
    put(&mut store, ("r1", 0), &fewer, Put::Replace);
    let back = store.load_run("r1").expect("load");
    assert_eq!(back.results, [fewer, run.results[1].clone()]);
    assert_eq!(
        metric_rows(&store),
        1,
        "no metric of the old result is left"
    );
    let err = store.put_result(("ghost", 0), &run.results[1], Put::Replace);
    assert!(
        matches!(err, Err(StoreError::RunNotFound { .. })),
        "{err:?}"
    );
}
