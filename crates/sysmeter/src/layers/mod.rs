//! The layer rules of the crate, checked: which top-level module may use which. ARCHITECTURE.md
//! draws the same table; this test is what keeps the two true.
//!
//! The check reads the source text: every `crate::<module>` path in a module's files must name
//! the module itself or one it may depend on, and the pure modules may not touch
//! `sysmeter_sys` (the OS). Reading the `use crate::` lines is enough because the crate has
//! no glob re-exports across modules and no macros that expand to foreign paths. Test-only.
//!
//! Inside `diagnose`, each diagnosis stands on `diagnose/observe` alone: a file of
//! `diagnose/<a>` may name `crate::diagnose::<b>` (or reach it through `super::`) only when
//! `b` is `a` itself or `observe`, and `observe` names no diagnosis ([`sibling_uses`]).
//!
//! [`size`] checks the other structural rule of ARCHITECTURE.md over both crates: no file
//! over 400 lines, no function over 60.

mod size;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Each top-level module and the modules it may use, lowest layer first. A module missing
/// from this table fails the check, so a new module must be placed in the layers on purpose.
pub const ALLOWED: &[(&str, &[&str])] = &[
    // Layer 0: the data everything else exchanges.
    ("model", &[]),
    // Layer 1: pure computation and machine description over the model.
    ("stats", &["model"]),
    ("host", &["model"]),
    ("wire", &["model"]),
    // Layer 2: measuring, diagnosing, storing and rendering — each independent of the others.
    ("harness", &["model", "stats", "host"]),
    ("diagnose", &["model", "stats", "host"]),
    ("store", &["model"]),
    ("report", &["model", "stats"]),
    // Layer 3: the experiments, on top of the harness.
    (
        "experiments",
        &["model", "stats", "host", "harness", "wire"],
    ),
    ("server", &["model", "wire"]),
    // Layer 4: the command line and the glue that joins everything.
    ("cli", &["model", "report", "diagnose"]),
    (
        "commands",
        &[
            "model",
            "stats",
            "host",
            "wire",
            "harness",
            "diagnose",
            "store",
            "report",
            "experiments",
            "server",
            "cli",
        ],
    ),
];

/// Modules that must not touch the OS through `sysmeter_sys`.
pub const PURE: &[&str] = &["model", "stats", "report", "store", "cli"];

/// Files exempt from the table, with the reason. Kept short on purpose.
pub const EXEMPT: &[(&str, &str)] = &[(
    "model/fixture.rs",
    "test-only fixed run: computes its summaries with stats so they are real",
)];

/// The diagnoses named by `crate::diagnose::<name>` paths in `text`, and by `super::` chains
/// that climb `depth` levels (to `diagnose` itself) from a file that deep below it.
pub fn diagnosis_paths(text: &str, depth: usize) -> BTreeSet<String> {
    let word = |before: &str| {
        before
            .chars()
            .last()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    let mut found = names_after(text, "crate::diagnose::", word);
    if depth > 0 {
        // Only a chain of exactly `depth` supers reaches `diagnose`; a longer one is caught
        // by the crate-level check, a shorter one stays inside the diagnosis.
        let up = "super::".repeat(depth);
        found.extend(names_after(text, &up, |before| {
            word(before) || before.ends_with("super::")
        }));
    }
    found
}

/// The uses in `text` (file `rel` below `src/diagnose/`) of a diagnosis other than its own
/// and `observe`.
pub fn sibling_uses(rel: &str, text: &str) -> Vec<Violation> {
    let parts: Vec<&str> = rel.split('/').collect();
    let own = parts[0].trim_end_matches(".rs");
    if own == "mod" {
        return Vec::new();
    }
    let depth = parts.len() - usize::from(parts.last() == Some(&"mod.rs"));
    diagnosis_paths(text, depth)
        .into_iter()
        .filter(|b| b != own && b != "observe")
        .map(|b| Violation {
            file: format!("diagnose/{rel}"),
            module: format!("diagnose::{own}"),
            uses: format!("crate::diagnose::{b} (a diagnosis may use only observe)"),
        })
        .collect()
}

/// One use of a module that the table forbids: `file: crate::x (module m may not use x)`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Violation {
    /// File, relative to `src/`.
    pub file: String,
    /// The module it belongs to.
    pub module: String,
    /// What it used (`crate::server` or `sysmeter_sys`).
    pub uses: String,
}

/// The top-level modules named by `crate::<name>` paths in `text`.
pub fn crate_paths(text: &str) -> BTreeSet<String> {
    // `sysmeter_sys::` or `$crate::` are not this crate's paths.
    names_after(text, "crate::", |before| {
        before
            .chars()
            .last()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
    })
}

/// The identifiers that follow `marker` in the code of `text` (comments left out), where
/// `inside(code before the marker)` says the marker is not part of a longer path or word.
fn names_after(text: &str, marker: &str, inside: impl Fn(&str) -> bool) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(i) = rest.find(marker) {
            let after = &rest[i + marker.len()..];
            let name: String = after
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !inside(&rest[..i]) && !name.is_empty() && name != "super" {
                found.insert(name);
            }
            rest = after;
        }
    }
    found
}

/// Whether `text` uses the `sysmeter_sys` crate.
pub fn uses_sys(text: &str) -> bool {
    text.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .any(|code| code.contains("sysmeter_sys"))
}

/// The violations in one file of `module`, given its text.
pub fn check_file(file: &str, module: &str, text: &str) -> Vec<Violation> {
    let mut out = Vec::new();
    if EXEMPT.iter().any(|(f, _)| *f == file) {
        return out;
    }
    let allowed = ALLOWED.iter().find(|(m, _)| *m == module).map(|(_, a)| *a);
    let violation = |uses: &str| Violation {
        file: file.to_string(),
        module: module.to_string(),
        uses: uses.to_string(),
    };
    let Some(allowed) = allowed else {
        out.push(violation("(module missing from the layer table)"));
        return out;
    };
    for name in crate_paths(text) {
        if name != module && !allowed.contains(&name.as_str()) {
            out.push(violation(&format!("crate::{name}")));
        }
    }
    if PURE.contains(&module) && uses_sys(text) {
        out.push(violation("sysmeter_sys"));
    }
    out
}

/// Every `.rs` file below `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

/// The violations in the crate's `src/` directory. `lib.rs`, `main.rs` and this file sit
/// above every layer.
pub fn check_tree(src: &Path) -> Vec<Violation> {
    let mut out = Vec::new();
    for path in rust_files(src) {
        let Ok(rel) = path.strip_prefix(src) else {
            continue;
        };
        let rel = rel.to_string_lossy().into_owned();
        let module = rel
            .split('/')
            .next()
            .unwrap_or("")
            .trim_end_matches(".rs")
            .to_string();
        if ["lib", "main", "layers"].contains(&module.as_str()) {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        out.extend(check_file(&rel, &module, &text));
        if let Some(inside) = rel.strip_prefix("diagnose/") {
            out.extend(sibling_uses(inside, &text));
        }
    }
    out
}

#[cfg(test)]
mod tests {
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
    fn paths_are_read_from_code_not_comments_or_other_crates() {
        let text = "// crate::server in a comment\nlet x = sysmeter_sys::crate_thing;\n\
                    f(crate::stats::median(&v), crate::model::units::sig3(1.0));\n";
        let found: Vec<String> = crate_paths(text).into_iter().collect();
        assert_eq!(found, ["model", "stats"]);
    }
}
