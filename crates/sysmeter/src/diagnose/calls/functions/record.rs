//! The `calls.functions` result: one metric per function of the program (n = its exact
//! calls; median the self time per call, mean the inclusive time per call, hooks removed),
//! the typed call graph ([`CallGraph`](crate::model::callgraph::CallGraph) as its artifact), the folded stacks and the flame
//! graph drawn from them (exact self time per calling context), and findings for the
//! backend, the totals, the hooks' cost and anything not counted.
//!
//! Depends on `model`, `diagnose::observe` (the flame graph) and the siblings.

use std::path::Path;

use super::super::inproc::Outcome;
use super::super::inproc::funcs_region::Functions;
use super::calibration::Cost;
use super::graph::{Views, views};
use super::names;
use crate::diagnose::observe::flame::{Style, svg};
use crate::diagnose::observe::session::Ended;
use crate::model::callgraph::{FUNCTIONS_ID, FunctionRow};
use crate::model::{About, Artifact, ExperimentResult, Finding, Metric, Summary, Unit, units};

fn about(target: &str) -> About {
    About {
        title: "Function call graph".into(),
        measures: format!(
            "Per function of `{target}` built with -finstrument-functions: exact calls per \
             caller → callee edge, self and inclusive time (gprof's flat profile and call \
             graph)"
        ),
        methodology: "A library preloaded into the program defines the hooks that \
             -finstrument-functions calls at every entry and exit of the program's own \
             functions. Each thread keeps a shadow stack and a calling-context tree in shared \
             memory: exact counts, and time-stamp-counter ticks of each call's own code and \
             (for the outermost activation of a recursion) with its callees. An empty \
             function timed through the same hooks in the same run gives their cost, which \
             is removed from every time; a time within its spread is reported as below \
             resolution."
            .into(),
        references: vec![
            "gprof: the flat profile and the call graph (called/total, called+self)".into(),
        ],
    }
}

fn metric(f: &FunctionRow) -> Metric {
    let calls = f.calls + f.recursive;
    // Per timed call: a call left by longjmp has no time of its own.
    let (per_self, per_total) = (f.self_time.per(f.timed), f.total.per(f.calls.min(f.timed)));
    let bound = |t: &crate::model::callgraph::Timed| {
        if t.resolved() {
            t.ns
        } else {
            t.ns.max(0.0) + t.resolution_ns
        }
    };
    let summary = Summary {
        n: calls as usize,
        median: bound(&per_self),
        mean: bound(&per_total),
        ..Summary::default()
    };
    Metric {
        note: Some(format!(
            "self {} per call; total {} per call",
            per_self.cell_of(f.timed),
            per_total.cell_of(f.timed)
        )),
        ..Metric::new(&f.name, Unit::Ns, summary)
    }
}

fn artifacts(v: &Views, target: &str) -> Vec<Artifact> {
    let title = format!("sysmeter calls --functions: {target} (exact self time)");
    let style = Style {
        count_name: "ns",
        factor: 1.0,
        off_cpu: false,
    };
    let empty = "No self time above zero: nothing to draw.";
    let mut out: Vec<Artifact> = v.graph.artifact().into_iter().collect();
    out.push(Artifact {
        name: "folded".into(),
        media_type: "text/plain".into(),
        content: v.folded.clone(),
    });
    if let Ok(content) = svg(&v.folded, &title, style, empty) {
        out.push(Artifact {
            name: "exact flamegraph".into(),
            media_type: "image/svg+xml".into(),
            content,
        });
    }
    out
}

fn cost_finding(cost: &Cost) -> Finding {
    Finding::new(
        "overhead",
        format!(
            "The hooks' own cost, measured on {} calls of an empty function through them in \
             this run: {} inside a call's own time (±{}), {} added to its caller's time per \
             call (±{}); both removed from every time, and a time within their spread is \
             shown as below resolution.",
            units::count(cost.calls as f64),
            units::duration_ns(cost.inside_ns),
            units::duration_ns(cost.inside_spread_ns),
            units::duration_ns(cost.full_ns),
            units::duration_ns(cost.full_spread_ns)
        ),
        Some(cost.full_ns),
    )
}

/// Findings for what was not counted or not timed.
fn losses(f: &Functions, v: &Views, other_images: usize) -> Vec<Finding> {
    let mut out = Vec::new();
    let full: u64 = f.threads.iter().map(|t| u64::from(t.full)).sum();
    let deep: u64 = f.threads.iter().map(|t| u64::from(t.deep)).sum();
    let mut add = |key: &str, n: u64, text: String| {
        if n > 0 {
            out.push(Finding::new(key, text, Some(n as f64)));
        }
    };
    add(
        "lost",
        u64::from(f.lost),
        format!(
            "{} thread(s) found no free area and were not counted.",
            f.lost
        ),
    );
    add(
        "full",
        full,
        format!("{full} call(s) were not recorded: a thread's tree of calling contexts was full."),
    );
    add(
        "deep",
        deep,
        format!("{deep} call(s) deeper than 4 096 frames were not recorded."),
    );
    add(
        "unwound",
        v.unwound,
        format!(
            "{} call(s) ended without their exit hook (longjmp): counted, not timed; their time is their caller's.",
            v.unwound
        ),
    );
    add(
        "other_images",
        other_images as u64,
        format!(
            "{other_images} thread(s) belong to a later process image (after an exec) and are not shown."
        ),
    );
    out
}

/// The result of a `--functions` run of `program`; `backend` names the backend.
pub fn build(out: &Outcome, program: &Path, target: &str, backend: &str) -> ExperimentResult {
    let f = out.functions.clone().unwrap_or_default();
    let cost = Cost::of(&f, out.ns_per_tick, f64::from(out.region.step));
    let (threads, others): (Vec<_>, Vec<_>) =
        f.threads.iter().cloned().partition(|t| t.claim.image <= 1);
    let mut addrs: Vec<(u64, u64)> = threads
        .iter()
        .flat_map(|t| {
            t.nodes
                .iter()
                .filter(|n| n.fn_addr != 0)
                .map(|n| (t.base, n.fn_addr))
        })
        .collect();
    addrs.sort_unstable();
    addrs.dedup();
    let named = names::resolve(program, &addrs);
    let v = views(&threads, &named, &cost, out.ns_per_tick);
    let mut result = ExperimentResult::new(FUNCTIONS_ID, about(target));
    result.metrics = v.graph.functions.iter().map(metric).collect();
    result.artifacts = artifacts(&v, target);
    // What was not counted comes first (`losses`' `lost`), and "exact" only without it.
    let mut losses = losses(&f, &v, others.len());
    let mut findings: Vec<Finding> = losses
        .iter()
        .position(|l| l.key == "lost")
        .map(|i| losses.remove(i))
        .into_iter()
        .collect();
    findings.push(Finding::new("backend", format!("{backend}."), None));
    let top = v.graph.functions.first().map_or(String::new(), |t| {
        format!(" Most self time: {} ({}).", t.name, units::percent(t.share))
    });
    findings.push(Finding::new(
        "total",
        format!(
            "{} calls ({}) of {} function(s) of the program in {} thread(s).{top}",
            units::count(v.calls as f64),
            crate::diagnose::calls::inproc::record::exactness(f.lost),
            v.graph.functions.len(),
            threads.len()
        ),
        Some(v.calls as f64),
    ));
    findings.push(cost_finding(&cost));
    findings.extend(losses);
    findings.extend(ended(out.session.ended));
    result.findings = findings;
    result
}

fn ended(e: Ended) -> Option<Finding> {
    let text = match e {
        Ended::Finished => return None,
        Ended::Interrupted => "Stopped by Ctrl-C; the counts are the command's until it ended.",
        Ended::Duration => "Read after --duration; calls still in flight are counted, not timed.",
    };
    Some(Finding::new("ended", text.into(), None))
}
