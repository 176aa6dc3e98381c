//! The layer rules of the crate, checked: which top-level module may use which. ARCHITECTURE.md
//! draws the same table; this test is what keeps the two true.
//!
//! The check reads the code as the compiler does ([`paths`]: the file parsed, `use` trees
//! expanded — grouped, nested, `self`, over several lines — and `super::` climbed from the
//! file's module and its inline modules): every crate path in a module's files must name the
//! module itself or one it may depend on, and the pure modules may not touch `sysmeter_sys`
//! (the OS). Paths are enough because the crate has no glob re-exports across modules and no
//! macros that expand to foreign paths. Test-only.
//!
//! Inside `diagnose`, each diagnosis stands on `diagnose/observe` alone: a file of
//! `diagnose/<a>` may name `crate::diagnose::<b>` (or reach it through `super::`) only when
//! `b` is `a` itself or `observe`, and `observe` names no diagnosis ([`sibling_uses`]).
//! Inside `commands`, a command uses diagnoses and output, not another command: only the
//! shared [`COMMAND_INFRASTRUCTURE`] and `commands/mod.rs` ([`command_uses`]).
//!
//! [`size`] checks the other structural rule of ARCHITECTURE.md over both crates: no file
//! over 400 lines, no function over 60.

mod paths;
mod size;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use paths::Named;

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

/// The commands' shared infrastructure in `commands/`, which every command may use: a
/// command (`commands/<kind>.rs`) may use these, the diagnoses and the output layers, but no
/// other command.
pub const COMMAND_INFRASTRUCTURE: &[&str] = &[
    "console",
    "diagnosis",
    "full_disk",
    "infile",
    "outfile",
    "output",
    "progress",
    "run_history",
    // Test-only: docs/json-schema.md checked against every command's output.
    "json_docs",
];

/// The crate paths of file `rel`; a file that does not parse is a violation of its own.
fn named(rel: &str, text: &str) -> Result<Vec<Named>, Violation> {
    paths::crate_paths(rel, text).map_err(|why| Violation {
        file: rel.to_string(),
        module: paths::module_of(rel).join("::"),
        uses: format!("(cannot be read: {why})"),
    })
}

/// The uses in `text` (file `rel` below `src/diagnose/`) of a diagnosis other than its own
/// and `observe`, however they are written: `crate::diagnose::b`, inside a group
/// (`crate::diagnose::{observe, b}`), or climbing with `super::`.
pub fn sibling_uses(rel: &str, text: &str) -> Vec<Violation> {
    let rel = format!("diagnose/{rel}");
    let module = paths::module_of(&rel);
    let Some(own) = module.get(1).cloned() else {
        return Vec::new();
    };
    let found = match named(&rel, text) {
        Ok(found) => found,
        Err(v) => return vec![v],
    };
    let mut used: BTreeSet<String> = BTreeSet::new();
    for n in found {
        match n.path.as_slice() {
            [top, b, ..] if top == "diagnose" && *b != own && b != "observe" => {
                used.insert(format!("crate::diagnose::{b}"));
            }
            // `use super::*` from the top of a diagnosis brings in every other one.
            [top] if top == "diagnose" && n.glob => {
                used.insert("crate::diagnose::*".to_string());
            }
            _ => {}
        }
    }
    used.into_iter()
        .map(|uses| Violation {
            file: rel.clone(),
            module: format!("diagnose::{own}"),
            uses: format!("{uses} (a diagnosis may use only observe)"),
        })
        .collect()
}

/// The uses in `text` (file `rel` below `src/commands/`) of another command: a command may
/// use [`COMMAND_INFRASTRUCTURE`] and the items of `commands/mod.rs`, not a sibling command
/// (`commands` lists every module of `commands/`).
pub fn command_uses(rel: &str, text: &str, commands: &BTreeSet<String>) -> Vec<Violation> {
    let rel = format!("commands/{rel}");
    let module = paths::module_of(&rel);
    let Some(own) = module.get(1).cloned() else {
        return Vec::new();
    };
    if COMMAND_INFRASTRUCTURE.contains(&own.as_str()) {
        return Vec::new();
    }
    let found = match named(&rel, text) {
        Ok(found) => found,
        Err(v) => return vec![v],
    };
    let used: BTreeSet<String> = found
        .into_iter()
        .filter_map(|n| match n.path.as_slice() {
            [top, other, ..]
                if top == "commands"
                    && *other != own
                    && commands.contains(other)
                    && !COMMAND_INFRASTRUCTURE.contains(&other.as_str()) =>
            {
                Some(other.clone())
            }
            // `use super::*` from a command brings in every other one.
            [top] if top == "commands" && n.glob => Some("*".to_string()),
            _ => None,
        })
        .collect();
    used.into_iter()
        .map(|other| Violation {
            file: rel.clone(),
            module: format!("commands::{own}"),
            uses: format!(
                "crate::commands::{other} (a command may use diagnoses and output, not another \
                 command)"
            ),
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

/// The top-level modules named by the crate paths of file `rel` in `text`.
pub fn top_modules(rel: &str, text: &str) -> Result<BTreeSet<String>, Violation> {
    Ok(named(rel, text)?
        .into_iter()
        .filter_map(|n| n.path.into_iter().next())
        .collect())
}

/// Whether `text` uses the `sysmeter_sys` crate.
pub fn uses_sys(text: &str) -> bool {
    paths::names_ident(text, "sysmeter_sys")
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
    let names = match top_modules(file, text) {
        Ok(names) => names,
        Err(v) => return vec![v],
    };
    for name in names {
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

/// The names of the modules in `dir` (its `.rs` files and folders).
fn modules_in(dir: &Path) -> BTreeSet<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return BTreeSet::new();
    };
    entries
        .flatten()
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.strip_suffix(".rs").unwrap_or(&name).to_string()
        })
        .collect()
}

/// The violations in the crate's `src/` directory. `lib.rs`, `main.rs` and this file sit
/// above every layer.
pub fn check_tree(src: &Path) -> Vec<Violation> {
    let mut out = Vec::new();
    let commands = modules_in(&src.join("commands"));
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
        if let Some(inside) = rel.strip_prefix("commands/") {
            out.extend(command_uses(inside, &text, &commands));
        }
    }
    out
}

#[cfg(test)]
mod tests;
