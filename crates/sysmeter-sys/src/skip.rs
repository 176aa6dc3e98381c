//! Skipping a unit test (or a part of one) that cannot run here, and failing instead where
//! it must run: the rule of the integration tests' `skip!` (crates/sysmeter/tests/it/support/
//! skip.rs), for this crate's unit tests. Test-only; no dependencies.
//!
//! [`skip`] prints `skipped: <reason>` unless the environment variable
//! `SYSMETER_TEST_REQUIRE` names the capability (a comma-separated list) or is `all`; then
//! it panics with `required capability <name> missing: <reason>`. The caller returns from
//! the test (or goes on without the skipped part) afterwards.
//!
//! The capabilities these tests use:
//!
//! | name | what |
//! | --- | --- |
//! | `disk` | the temp directory is on a disk, not tmpfs (as in the integration tests) |
//! | `counter` | a free-running counter readable in user space (x86_64 TSC, aarch64 CNTVCT) |
//! | `ntstore` | a non-temporal store kernel for this architecture (x86_64, aarch64) |
//! | `bintrue` | the program /bin/true |

/// Whether `list` (the value of `SYSMETER_TEST_REQUIRE`) requires capability `cap`.
fn required_by(list: &str, cap: &str) -> bool {
    list.split(',')
        .map(str::trim)
        .any(|w| w == "all" || w == cap)
}

/// Reports that capability `cap` is missing because of `reason`: prints
/// `skipped: <reason>`, or panics when `SYSMETER_TEST_REQUIRE` requires `cap`.
pub(crate) fn skip(cap: &str, reason: &str) {
    let list = std::env::var("SYSMETER_TEST_REQUIRE").unwrap_or_default();
    if required_by(&list, cap) {
        panic!("required capability {cap} missing: {reason}");
    }
    println!("skipped: {reason}");
}

#[test]
fn the_require_list_names_capabilities_or_all() {
    assert!(required_by("all", "counter"));
    assert!(required_by("cc, disk", "disk"));
    assert!(!required_by("cc,disk", "ntstore"));
    assert!(!required_by("", "bintrue"));
    assert!(!required_by("diskx", "disk"));
}
