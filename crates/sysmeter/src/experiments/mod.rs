//! The machine cost experiments of `sysmeter bench` and the registry that lists them and
//! resolves a user's selection (groups, ids) to experiments.
//!
//! One folder per group (`cpu`, `os`, `mem`, `ipc`, `net`, `fs`); its `mod.rs` holds the
//! group's registry entry, and each experiment `group.id` lives in `group/id.rs` or
//! `group/id/` with its findings, and its page `group/id.md`: the id, title, what it
//! measures, its timing model and references as Markdown, the one source of its id and
//! [`crate::model::About`] (`Experiment::page`). Shared by several groups: `estimate` and
//! the pipe echo `peer`. Experiments own only the work; timing, sampling and statistics
//! belong to the harness. Depends on the harness, `model`, `stats`, `host`, `wire` and
//! `sysmeter-sys`; never on `commands`, `report`, `store` or `server`.

mod cpu;
mod estimate;
pub mod fs;
mod ipc;
mod mem;
mod net;
mod os;
mod peer;

use crate::harness::Experiment;

/// One group's registry entry: its name, its description line, its experiments in run order.
pub struct Group {
    /// The group's name, the part of each id before the dot.
    pub name: &'static str,
    /// One line for `sysmeter list`.
    pub description: &'static str,
    /// The group's experiments, in run order.
    pub experiments: &'static [&'static dyn Experiment],
}

/// Every group's entry, in run order.
const ENTRIES: [&Group; 6] = [
    &cpu::GROUP,
    &os::GROUP,
    &mem::GROUP,
    &ipc::GROUP,
    &net::GROUP,
    &fs::GROUP,
];

/// The experiment groups, in run order, with a one-line description.
pub const GROUPS: &[(&str, &str)] = &{
    let mut out = [("", ""); ENTRIES.len()];
    let mut i = 0;
    while i < ENTRIES.len() {
        out[i] = (ENTRIES[i].name, ENTRIES[i].description);
        i += 1;
    }
    out
};

/// Every experiment, in run order.
pub fn all() -> Vec<&'static dyn Experiment> {
    ENTRIES
        .iter()
        .flat_map(|g| g.experiments.iter().copied())
        .collect()
}

/// A selection named something that does not exist.
#[derive(Debug, thiserror::Error)]
#[error(
    "unknown experiment or group '{name}'; valid groups: {groups}; valid ids: {ids} (see `sysmeter list`)"
)]
pub struct UnknownSelection {
    /// What the user typed.
    pub name: String,
    /// Valid group names, comma separated.
    pub groups: String,
    /// Valid experiment ids, comma separated.
    pub ids: String,
}

/// Resolve positional `names` (groups or ids) and `--only` ids to experiments in run order.
/// Nothing selected means the default set (every group).
pub fn select(
    names: &[String],
    only: &[String],
) -> Result<Vec<&'static dyn Experiment>, UnknownSelection> {
    let all = all();
    let mut wanted = vec![false; all.len()];
    for name in names.iter().chain(only) {
        let is_group = GROUPS.iter().any(|(g, _)| g == name) && !only.contains(name);
        let mut hit = false;
        for (i, e) in all.iter().enumerate() {
            let group = e.id().split('.').next().unwrap_or("");
            if e.id() == name || (is_group && group == name) {
                wanted[i] = true;
                hit = true;
            }
        }
        if !hit {
            return Err(UnknownSelection {
                name: name.clone(),
                groups: GROUPS
                    .iter()
                    .map(|(g, _)| *g)
                    .collect::<Vec<_>>()
                    .join(", "),
                ids: all.iter().map(|e| e.id()).collect::<Vec<_>>().join(", "),
            });
        }
    }
    let none = !wanted.iter().any(|&w| w);
    Ok(all
        .into_iter()
        .zip(wanted)
        .filter(|(_, w)| none || *w)
        .map(|(e, _)| e)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::about::page::Page;

    fn ids(v: &[&dyn Experiment]) -> Vec<&'static str> {
        v.iter().map(|e| e.id()).collect()
    }

    #[test]
    fn empty_selection_is_everything() {
        assert_eq!(select(&[], &[]).map(|v| v.len()).ok(), Some(all().len()));
    }

    #[test]
    fn groups_and_ids_resolve_in_run_order() {
        let v = select(&["os".into(), "cpu.timer".into()], &[]).expect("valid");
        assert_eq!(
            ids(&v),
            [
                "cpu.timer",
                "os.syscall",
                "os.task",
                "os.ctxsw",
                "os.lookup"
            ]
        );
        let v = select(&[], &["os.task".into()]).expect("valid");
        assert_eq!(ids(&v), ["os.task"]);
    }

    #[test]
    fn unknown_names_list_the_valid_ones() {
        let err = select(&["bogus".into()], &[]).err().expect("must fail");
        let msg = err.to_string();
        assert!(
            msg.contains("'bogus'") && msg.contains("cpu, os, mem") && msg.contains("os.ctxsw")
        );
        // --only takes ids, not groups
        assert!(select(&[], &["cpu".into()]).is_err());
    }

    #[test]
    fn the_time_shares_of_the_registry_fit_one_run_budget() {
        let shares: Vec<f64> = all().iter().map(|e| e.time_share()).collect();
        assert!(shares.iter().all(|&s| s > 0.0 && s <= 1.0), "{shares:?}");
        let total: f64 = shares.iter().sum();
        assert!(total <= 1.0, "the shares add up to {total}");
    }

    #[test]
    fn every_group_entry_holds_only_its_own_ids() {
        for g in ENTRIES {
            assert!(!g.experiments.is_empty(), "{}", g.name);
            for e in g.experiments {
                assert_eq!(e.id().split_once('.').map(|(x, _)| x), Some(g.name));
            }
        }
    }

    #[test]
    fn every_id_is_group_dot_name_and_documented() {
        for e in all() {
            let (g, n) = e.id().split_once('.').expect("group.name");
            assert!(GROUPS.iter().any(|(x, _)| *x == g), "{g}");
            assert!(!n.is_empty());
            let a = e.about();
            assert!(!a.title.is_empty() && !a.measures.is_empty() && a.methodology.len() > 80);
        }
    }

    #[test]
    fn every_page_parses_and_every_hole_is_filled() {
        let mut ids = Vec::new();
        for e in all() {
            let page = Page::parse(e.page()).unwrap_or_else(|err| panic!("{}: {err}", e.id()));
            assert_eq!(page.id, e.id());
            ids.push(page.id);
            let a = e.about();
            assert_eq!(a.title, page.title, "{}", e.id());
            assert!(!a.references.is_empty(), "{}", e.id());
            assert!(a.references.iter().all(|r| !r.is_empty()), "{}", e.id());
            assert!(!a.has_holes(), "{}: {a:?}", e.id());
            assert!(!a.measures.contains("  ") && !a.methodology.contains("  "));
        }
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), all().len(), "two experiments share a page");
    }

    /// The pages that say what runs beside the measuring thread are the experiments that
    /// ran work of their own before the pages said so; the others measure alone.
    #[test]
    fn the_pages_declare_who_shares_the_measuring_cpu() {
        let alone: Vec<&str> = all()
            .iter()
            .filter(|e| !e.shares_measuring_cpu())
            .map(|e| e.id())
            .collect();
        assert_eq!(
            alone,
            [
                "cpu.timer",
                "cpu.loop",
                "cpu.call",
                "cpu.ops",
                "os.syscall",
                "os.lookup",
                "mem.latency"
            ]
        );
    }

    /// The README's catalogue of the experiments ("Groups today: …", up to "Results go to")
    /// names every id, and none that does not exist (links to docs/*.md aside).
    #[test]
    fn the_readme_catalogue_matches_the_registry() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md");
        let readme = std::fs::read_to_string(path).expect("README.md is readable");
        let start = readme.find("Groups today:").expect("the catalogue");
        let end = start
            + readme[start..]
                .find("Results go to")
                .expect("the catalogue ends");
        let catalogue = &readme[start..end];
        let named: Vec<&str> = catalogue
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '_'))
            .map(|w| w.trim_end_matches('.'))
            .filter(|w| !w.ends_with(".md"))
            .filter(|w| GROUPS.iter().any(|(g, _)| w.starts_with(&format!("{g}."))))
            .collect();
        for e in all() {
            assert!(
                named.contains(&e.id()),
                "README's catalogue misses {}",
                e.id()
            );
        }
        for id in named {
            assert!(all().iter().any(|e| e.id() == id), "README names {id}");
        }
    }
}
