//! "This machine at a glance": about one line per group (os, memory, ipc, storage) with the
//! numbers people quote, the three findings asked about first, and the noise state of the
//! run. It ends the terminal output of `bench` and `show`, opens the HTML report, and is
//! printed alone by `show --summary` (text, or one Markdown table for an issue tracker).
//!
//! Pure: built from a [`RunRecord`] (`pick` says where each figure comes from); numbers come
//! from [`crate::model::units`].

mod pick;

use crate::model::{ExperimentResult, RunRecord, Status};

pub use pick::{levels, note, shown, top_rank};

/// The summary of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Glance {
    /// `host · CPU · kernel`, for the title.
    pub machine: String,
    /// `(group, "label value · label value …")`, groups with nothing measured left out.
    pub groups: Vec<(String, String)>,
    /// The same figures as `(group, [(label, value)])`, for the HTML grid.
    pub figures: Vec<(String, Vec<(String, String)>)>,
    /// The findings quoted first (at most three).
    pub findings: Vec<String>,
    /// How still the machine was while measuring.
    pub noise: String,
}

/// How many findings the summary quotes.
pub const FINDINGS: usize = 3;

/// The summary of `run`.
pub fn glance(run: &RunRecord) -> Glance {
    let h = &run.host;
    let mut machine = format!("{} · {}", h.hostname, h.cpu.model);
    if !h.kernel.is_empty() {
        machine.push_str(&format!(" · Linux {}", h.kernel));
    }
    if let Some(v) = &h.virtualization {
        machine.push_str(&format!(" · {v}"));
    }
    let figures: Vec<(String, Vec<(String, String)>)> = pick::GROUPS
        .iter()
        .map(|g| (g.to_string(), pick::figures(run, g)))
        .filter(|(_, items)| !items.is_empty())
        .collect();
    let groups = figures
        .iter()
        .map(|(g, items)| {
            let items: Vec<String> = items.iter().map(|(l, v)| format!("{l} {v}")).collect();
            (g.clone(), items.join(" · "))
        })
        .collect();
    Glance {
        machine,
        groups,
        figures,
        findings: pick::top_findings(run, FINDINGS),
        noise: noise(run),
    }
}

/// The noise state: experiments measured on a moving machine (the machine-state probe's
/// judgment, `ExperimentResult::machine`), experiments measured again, metrics that are not a
/// result, and the host's own warnings.
fn noise(run: &RunRecord) -> String {
    let ok: Vec<&ExperimentResult> = run
        .results
        .iter()
        .filter(|r| r.status == Status::Ok)
        .collect();
    let mut parts = vec![probe_state(run)];
    let with = |key: &str| {
        ok.iter()
            .filter(|r| r.findings.iter().any(|f| f.key == key))
            .count()
    };
    let again = with("machine.remeasured");
    if again > 0 {
        parts.push(format!(
            "{again} measured again after a first attempt on a moving machine"
        ));
    }
    let kept = with("machine.not_remeasured");
    if kept > 0 {
        parts.push(format!(
            "{kept} kept from a moving machine (the re-measure budget was spent)"
        ));
    }
    let not_results: Vec<String> = ok
        .iter()
        .flat_map(|r| {
            r.metrics
                .iter()
                .filter(|m| m.degenerate.is_some())
                .map(|m| format!("{} {}", r.id, m.name))
        })
        .collect();
    match not_results.len() {
        0 => {}
        1 => parts.push(format!("1 metric is not a result ({})", not_results[0])),
        n => parts.push(format!(
            "{n} metrics are not a result (first: {})",
            not_results[0]
        )),
    }
    match run.host.warnings.len() {
        0 => {}
        1 => parts.push("1 host warning".to_string()),
        n => parts.push(format!("{n} host warnings")),
    }
    parts.join("; ")
}

/// What the machine-state probe judged: how many experiments it saw the machine move in.
fn probe_state(run: &RunRecord) -> String {
    let (moving, probed) = super::format::probe_counts(run);
    match (probed, moving.len()) {
        (0, _) => "machine state not probed".to_string(),
        (all, 0) => format!("machine held still in all {all} experiments"),
        (all, n) => format!(
            "machine moved in {n} of {all} experiments ({})",
            moving.join(", ")
        ),
    }
}

/// The block for the terminal.
pub fn text(g: &Glance) -> Vec<String> {
    let mut lines = vec![format!("This machine at a glance ({})", g.machine)];
    let width = g
        .groups
        .iter()
        .map(|(n, _)| n.len())
        .max()
        .unwrap_or(0)
        .max("findings".len());
    lines.extend(g.groups.iter().map(|(n, v)| format!("  {n:width$}  {v}")));
    for (i, f) in g.findings.iter().enumerate() {
        lines.push(format!(
            "  {:width$}  {f}",
            if i == 0 { "findings" } else { "" },
            width = width
        ));
    }
    lines.push(format!("  {:width$}  {}", "noise", g.noise));
    lines
}

/// The block as one Markdown table (a heading, then `| group | figures |` rows), to paste
/// into an issue tracker.
pub fn markdown(g: &Glance) -> String {
    let cell = |s: &str| s.replace('|', "\\|").replace('\n', " ");
    let mut out = format!(
        "### This machine at a glance ({})\n\n| group | figures |\n|---|---|\n",
        cell(&g.machine)
    );
    for (n, v) in &g.groups {
        out.push_str(&format!("| {} | {} |\n", cell(n), cell(v)));
    }
    for (i, f) in g.findings.iter().enumerate() {
        out.push_str(&format!("| finding {} | {} |\n", i + 1, cell(f)));
    }
    out.push_str(&format!("| noise | {} |\n", cell(&g.noise)));
    out
}
