//! What a fleet's outliers share that the other hosts do not: the machine fields (kernel, CPU
//! model, settings: `compare_text::machine_fields`) whose value at least half of the outlier
//! hosts have and that is at most half as common among the other hosts, the outliers grouped
//! by them (hosts with exactly the same shared fields are one group) — and the one sentence
//! every format prints of each group ("All 4 outliers run kernel 6.11.0-9-generic; none of
//! the other 196 hosts does"), in place of a list of differences per outlier.
//!
//! Counts are printed whole (9996, not 10.0k): they are exact.
//!
//! Pure: the hosts' descriptions in, groups and sentences out.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use super::super::compare_text::machine_fields;
use crate::model::FleetHost;

/// Most groups named.
const MAX_GROUPS: usize = 3;
/// Most shared fields named per group.
const MAX_FIELDS: usize = 3;
/// Hosts of a partial group named in its sentence, then counted.
const NAMED_HOSTS: usize = 5;

/// Outlier hosts that share machine fields the other hosts mostly lack.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutlierGroup {
    /// The outlier hosts of the group, every one with all of `shared`.
    pub hosts: Vec<String>,
    /// How many hosts are an outlier in some metric.
    pub outlier_hosts: usize,
    /// The machine fields and the value each host of the group has.
    pub shared: Vec<SharedField>,
    /// How many of the hosts that are no outlier have all of `shared` too.
    pub others_alike: usize,
    /// How many hosts are no outlier.
    pub other_hosts: usize,
    /// The most common value of the first shared field among the other hosts, when it is
    /// another value.
    pub usual: Option<String>,
}

/// One machine field and its value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SharedField {
    /// `kernel`, `CPU model`, `mitigation spectre_v2`, …
    pub field: String,
    /// Its value.
    pub value: String,
}

type Field = (String, String);
/// A host: its name, whether it is an outlier, its machine fields.
type Described<'a> = (&'a str, bool, Vec<Field>);

/// The machine values that at least half of the outlier hosts have and that are at most half
/// as common among the other hosts, each with the outlier hosts that have it: those held by
/// most outliers first, then those rarest among the others, then in the fields' order.
fn shared_values<'a>(
    described: &'a [Described<'a>],
    outlier_hosts: usize,
    other_hosts: usize,
) -> Vec<(&'a Field, Vec<&'a str>)> {
    // (field, value) → (outlier hosts with it, other hosts with it, order of the field)
    let mut seen: HashMap<&Field, (Vec<&str>, usize, usize)> = HashMap::new();
    for (name, _, fields) in described.iter().filter(|d| d.1) {
        for (order, f) in fields.iter().enumerate() {
            seen.entry(f).or_insert((Vec::new(), 0, order)).0.push(name);
        }
    }
    for (_, _, fields) in described.iter().filter(|d| !d.1) {
        for f in fields {
            if let Some(entry) = seen.get_mut(f) {
                entry.1 += 1;
            }
        }
    }
    let share = |n: usize, of: usize| n as f64 / of as f64;
    let mut candidates: Vec<(&Field, Vec<&str>, usize, usize)> = (seen.into_iter())
        .filter(|(_, (with, others, _))| {
            2 * with.len() >= outlier_hosts
                && share(*others, other_hosts) <= share(with.len(), outlier_hosts) / 2.0
        })
        .map(|(f, (with, others, order))| (f, with, others, order))
        .collect();
    candidates.sort_by(|a, b| {
        (b.1.len().cmp(&a.1.len()))
            .then(a.2.cmp(&b.2))
            .then(a.3.cmp(&b.3))
            .then(a.0.cmp(b.0))
    });
    candidates
        .into_iter()
        .map(|(f, with, _, _)| (f, with))
        .collect()
}

/// The candidates as groups of hosts: a value held by exactly the hosts of a group joins
/// it (up to [`MAX_FIELDS`]), one held by hosts of no group starts one (up to
/// [`MAX_GROUPS`]), one that straddles groups is left out.
fn grouped<'a>(candidates: Vec<(&'a Field, Vec<&'a str>)>) -> Vec<(Vec<&'a str>, Vec<&'a Field>)> {
    let mut groups: Vec<(Vec<&str>, Vec<&Field>)> = Vec::new();
    for (field, members) in candidates {
        let same = groups.iter().position(|(g, _)| *g == members);
        let apart = (groups.iter()).all(|(g, _)| members.iter().all(|m| !g.contains(m)));
        match same {
            Some(i) if groups[i].1.len() < MAX_FIELDS => groups[i].1.push(field),
            None if apart && groups.len() < MAX_GROUPS => groups.push((members, vec![field])),
            _ => {}
        }
    }
    groups
}

/// The groups of `outliers` (host names, each once) among `hosts`, largest first.
pub(super) fn outlier_groups(outliers: &[&str], hosts: &[FleetHost]) -> Vec<OutlierGroup> {
    let is_outlier: HashSet<&str> = outliers.iter().copied().collect();
    let described: Vec<Described> = (hosts.iter())
        .map(|h| {
            let name = h.hostname.as_str();
            (name, is_outlier.contains(name), machine_fields(&h.host))
        })
        .collect();
    let count = |outlier: bool| described.iter().filter(|d| d.1 == outlier).count();
    let (outlier_hosts, other_hosts) = (count(true), count(false));
    if outlier_hosts == 0 || other_hosts == 0 {
        return Vec::new();
    }
    let candidates = shared_values(&described, outlier_hosts, other_hosts);
    let groups = grouped(candidates);
    let others: Vec<&Vec<Field>> = described.iter().filter(|d| !d.1).map(|d| &d.2).collect();
    (groups.into_iter())
        .map(|(members, fields)| OutlierGroup {
            hosts: members.iter().map(|m| m.to_string()).collect(),
            outlier_hosts,
            shared: (fields.iter())
                .map(|(field, value)| SharedField {
                    field: field.clone(),
                    value: value.clone(),
                })
                .collect(),
            others_alike: (others.iter())
                .filter(|o| fields.iter().all(|f| o.contains(f)))
                .count(),
            other_hosts,
            usual: usual(&others, fields[0]),
        })
        .collect()
}

/// The most common value of `field`'s field among `others`, unless it is `field`'s value.
fn usual(others: &[&Vec<Field>], field: &Field) -> Option<String> {
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for fields in others {
        if let Some((_, value)) = fields.iter().find(|(name, _)| *name == field.0) {
            *counts.entry(value).or_default() += 1;
        }
    }
    let (value, _) = (counts.into_iter()).max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(a.0)))?;
    (value != field.1).then(|| value.to_string())
}

/// The group in one sentence: "All 4 outliers run kernel 6.11.0-9-generic; none of the other
/// 196 hosts does (the usual kernel: 6.8.0-45-generic)."
fn sentence(g: &OutlierGroup) -> String {
    let one = g.hosts.len() == 1;
    let who = match (g.hosts.len() == g.outlier_hosts, one) {
        (true, true) => format!("The outlier {}", g.hosts[0]),
        (true, false) => format!("All {} outliers", g.hosts.len()),
        (false, _) => {
            let mut named: Vec<&str> = g
                .hosts
                .iter()
                .take(NAMED_HOSTS)
                .map(|h| h.as_str())
                .collect();
            let more = g.hosts.len().saturating_sub(NAMED_HOSTS);
            let rest = format!("{more} more");
            if more > 0 {
                named.push(&rest);
            }
            let of = format!("{} of the {} outlier hosts", g.hosts.len(), g.outlier_hosts);
            format!("{of} ({})", named.join(", "))
        }
    };
    let what: Vec<String> = (g.shared.iter())
        .map(|s| match (s.field.as_str(), one) {
            ("kernel", true) => format!("runs kernel {}", s.value),
            ("kernel", false) => format!("run kernel {}", s.value),
            (field, true) => format!("has {field} {}", s.value),
            (field, false) => format!("have {field} {}", s.value),
        })
        .collect();
    let all = g.other_hosts;
    let others = match g.others_alike {
        0 => format!("none of the other {all} hosts does"),
        1 => format!("1 of the other {all} hosts does too"),
        n => format!("{n} of the other {all} hosts do too"),
    };
    let usual = (g.usual.as_ref()).map_or(String::new(), |u| {
        format!(" (the usual {}: {u})", g.shared[0].field)
    });
    format!("{who} {}; {others}{usual}.", what.join(" and "))
}

/// Every group's sentence, or, when the outliers share nothing the others lack, one sentence
/// saying so (nothing without outliers).
pub(super) fn sentences(groups: &[OutlierGroup], outlier_hosts: usize) -> Vec<String> {
    if outlier_hosts == 0 {
        return Vec::new();
    }
    if groups.is_empty() {
        return vec![match outlier_hosts {
            1 => "The outlier host has no machine setting that sets it apart from the other \
                  hosts."
                .to_string(),
            n => format!(
                "The {n} outlier hosts share no machine setting that sets them apart from the \
                 other hosts."
            ),
        }];
    }
    groups.iter().map(sentence).collect()
}
