//! The layer rules' own tests: the tree keeps them, and each rule catches what it is for
//! (grouped and climbing imports, a command using another, a file that cannot be read).

use super::*;

#[test]
fn the_tree_keeps_the_layer_rules() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let bad = check_tree(&src);
    assert!(
        bad.is_empty(),
        "layer rules broken (see ARCHITECTURE.md, src/layers/mod.rs):\n{}",
        bad.iter()
            .map(|v| format!("  {} (module {}) uses {}", v.file, v.module, v.uses))
            .collect::<Vec<_>>()
            .join("\n")
    );
    // The walk really read the tree: every module of the table has files.
    for (module, _) in ALLOWED {
        assert!(
            src.join(module).is_dir() || src.join(format!("{module}.rs")).is_file(),
            "{module} in the layer table but not in src/"
        );
    }
}

#[test]
fn a_forbidden_use_is_caught() {
    let text = "use crate::model::RunRecord;\nuse crate::report::format;\n";
    let bad = check_file("stats/x.rs", "stats", text);
    assert_eq!(bad.len(), 1);
    assert_eq!(bad[0].uses, "crate::report");
    let text = "use sysmeter_sys::clock;\n";
    assert_eq!(check_file("report/x.rs", "report", text).len(), 1);
    assert!(check_file("harness/x.rs", "harness", text).is_empty());
    assert_eq!(check_file("newmod/x.rs", "newmod", "").len(), 1);
}

#[test]
fn a_diagnosis_using_another_is_caught() {
    let text = "use crate::diagnose::observe::rings::follow;\n\
                use crate::diagnose::profile::maps::AddressSpaces;\n";
    let bad = sibling_uses("locks/events.rs", text);
    assert_eq!(bad.len(), 1, "{bad:?}");
    assert!(bad[0].uses.starts_with("crate::diagnose::profile"));
    // Through `super::` from the top file of a diagnosis, and two levels down.
    assert_eq!(
        sibling_uses("calls.rs", "use super::trace::Ended;\n").len(),
        1
    );
    let deep = "use super::super::super::trace::x;\nuse super::super::rings::y;\n";
    assert_eq!(sibling_uses("calls/a/b.rs", deep).len(), 1);
    assert!(sibling_uses("calls/a/b.rs", "use super::super::rings::y;\n").is_empty());
    // observe itself may use no diagnosis; a diagnosis may use itself and observe.
    assert_eq!(
        sibling_uses("observe/x.rs", "use crate::diagnose::trace::y;\n").len(),
        1
    );
    assert!(sibling_uses("trace/x.rs", "use crate::diagnose::trace::y;\n").is_empty());
    // No diagnosis is exempt: `run` naming `trace` is caught like any other.
    assert_eq!(
        sibling_uses("run.rs", "use crate::diagnose::trace::Overhead;\n").len(),
        1
    );
}

#[test]
fn a_grouped_or_climbing_sibling_import_is_caught() {
    // Grouped, on one line and over several: the compiler reads `profile` in both.
    let grouped = sibling_uses(
        "locks/events.rs",
        "use crate::diagnose::{observe, profile};\n",
    );
    assert_eq!(grouped.len(), 1, "{grouped:?}");
    assert!(grouped[0].uses.starts_with("crate::diagnose::profile"));
    let nested = "use crate::{\n    diagnose::{\n        self,\n        observe::rings,\n        \
                  trace::x,\n    },\n    model,\n};\n";
    assert_eq!(sibling_uses("calls/a.rs", nested).len(), 1);
    // `super::super::` from a file one level down climbs into a sibling.
    let climb = sibling_uses(
        "offcpu/events.rs",
        "use super::super::profile::ProfileError;\n",
    );
    assert_eq!(climb.len(), 1, "{climb:?}");
    // Inside `mod tests` the same chain stays in the diagnosis.
    let tests = "#[cfg(test)]\nmod tests {\n    use super::super::raw::Switch;\n}\n";
    assert!(sibling_uses("offcpu/blocks.rs", tests).is_empty());
    // A glob of `diagnose` from the top of a diagnosis brings in every other one.
    assert_eq!(sibling_uses("calls.rs", "use super::*;\n").len(), 1);
}

#[test]
fn a_command_using_another_is_caught() {
    let commands: BTreeSet<String> = ["profile", "locks", "diagnosis", "console"]
        .map(String::from)
        .into();
    let text = "use super::profile::checked_target;\n";
    let bad = command_uses("locks.rs", text, &commands);
    assert_eq!(bad.len(), 1, "{bad:?}");
    assert!(bad[0].uses.starts_with("crate::commands::profile"));
    let grouped = "use super::{Outcome, console, diagnosis::diagnose, profile};\n";
    assert_eq!(command_uses("locks.rs", grouped, &commands).len(), 1);
    let call = "fn f() { crate::commands::profile::checked_target(); }\n";
    assert_eq!(command_uses("locks.rs", call, &commands).len(), 1);
    // The shared infrastructure and the items of commands/mod.rs are allowed.
    let shared =
        "use super::diagnosis::{diagnose, checked_target};\nuse super::{Outcome, console};\n";
    assert!(command_uses("locks.rs", shared, &commands).is_empty());
    assert!(command_uses("diagnosis.rs", text, &commands).is_empty());
    assert_eq!(
        command_uses("locks.rs", "use super::*;\n", &commands).len(),
        1
    );
    let own_tests = "#[cfg(test)]\nmod tests {\n    use super::*;\n}\n";
    assert!(command_uses("locks.rs", own_tests, &commands).is_empty());
}

#[test]
fn paths_are_read_from_code_not_comments_or_other_crates() {
    let text = "// crate::server in a comment\nfn g() {\nlet x = sysmeter_sys::crate_thing;\n\
                f(crate::stats::median(&v), crate::model::units::sig3(1.0));\n}\n";
    let found: Vec<String> = top_modules("x/y.rs", text)
        .expect("parses")
        .into_iter()
        .collect();
    assert_eq!(found, ["model", "stats"]);
}

#[test]
fn a_file_that_cannot_be_read_is_a_violation() {
    let bad = check_file("stats/x.rs", "stats", "use crate::{;\n");
    assert_eq!(bad.len(), 1);
    assert!(bad[0].uses.starts_with("(cannot be read"), "{bad:?}");
}
