//! The machine cost experiments of `sysmeter bench` and the registry that lists them and
//! resolves a user's selection (groups, ids) to experiments.
//!
//! One folder per group (`cpu`, `os`, `mem`, `ipc`, `net`, `fs`); its `mod.rs` holds the
//! group's registry entry, and each experiment `group.id` lives in `group/id.rs` or
//! `group/id/` with its findings. Shared by several groups: [`estimate`] and the pipe echo
//! [`peer`]. Experiments own only the work; timing, sampling and statistics belong to the
//! harness. Each documents its timing model in its `about().methodology`. Depends on the
//! harness, `model`, `stats`, `host`, `wire` and `sysmeter-sys`; never on `commands`,
//! `report`, `store` or `server`.

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
}
