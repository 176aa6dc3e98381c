//! A build without the `pg` feature (the default) given a `postgres://` database: one clear
//! sentence and exit code 2, from `--db` and from `SYSMETER_DB`, before anything is measured.
//! The PostgreSQL backend itself is tested in `pg.rs` (built with `--features pg`).

use crate::support::{stderr_of, sysmeter};

const SENTENCE: &str = "this sysmeter was built without PostgreSQL support; rebuild with \
                        `cargo build --features pg`";

#[test]
fn a_postgres_url_is_a_usage_error_naming_the_feature() {
    let url = "postgres://fleet:s3cret@db.example/sysmeter";
    let mut bench = sysmeter();
    bench.args(["bench", "--quick", "--only", "cpu.loop", "--db", url]);
    let out = bench.assert().code(2).stdout("");
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert_eq!(
        err.trim_end(),
        format!("error: cannot use database postgres://fleet@db.example/sysmeter: {SENTENCE}")
    );
    for args in [["history"], ["show"]] {
        let err = stderr_of(
            sysmeter()
                .args(args)
                .env("SYSMETER_DB", "postgresql://db.example/sysmeter"),
            2,
        );
        assert!(err.contains(SENTENCE), "{err}");
        assert!(err.contains("postgresql://db.example/sysmeter"), "{err}");
    }
}
