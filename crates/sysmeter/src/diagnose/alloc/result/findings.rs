//! What an `alloc` run says in words: where the bytes come from (with what would remove
//! them), the leaks, the peak and when, the temporary allocations, the sizes, how stacks
//! were walked and what was lost, and — given a stored bench — what the allocator calls
//! cost on this machine. Pure. Depends on `model` and the siblings.

use super::Totals;
use crate::diagnose::alloc::Outcome;
use crate::diagnose::alloc::region::HIST;
use crate::model::alloc::AllocSite;
use crate::model::{ExperimentResult, Finding, units};

fn pct(part: f64, all: f64) -> String {
    units::percent(if all > 0.0 { part / all } else { 0.0 })
}

/// A site's allocations: `one allocation of 8 MiB`, `100k allocations of 64 B on average`
/// (the counters give the mean size, not each size).
fn allocations_of(r: &AllocSite) -> String {
    match r.allocations {
        1 => format!("one allocation of {}", units::size(r.bytes)),
        n => format!(
            "{} allocations of {} on average",
            units::count(n as f64),
            units::bytes(r.mean_size())
        ),
    }
}

fn top_site(rows: &[AllocSite], t: &Totals) -> Option<Finding> {
    let top = rows.first()?;
    let temp_share = top.temporary as f64 / top.allocations.max(1) as f64;
    let advice = if temp_share >= 0.5 {
        format!(
            "; {} of them are freed before their thread allocates again — an arena, a \
             buffer on the stack or one reused buffer removes them",
            units::percent(temp_share)
        )
    } else if top.allocations >= 10_000 && top.mean_size() <= 256.0 {
        "; many small blocks — a pool or one array of them cuts the calls".into()
    } else {
        String::new()
    };
    let text = format!(
        "{} of allocated bytes come from {}: {}{advice}.",
        pct(top.bytes as f64, t.bytes as f64),
        top.site,
        allocations_of(top)
    );
    Some(Finding::new("top_site", text, Some(top.bytes as f64)))
}

fn leaks(out: &Outcome, rows: &[AllocSite], t: &Totals) -> Finding {
    let attached = out.mechanism.uprobes_used().is_some_and(|u| u.attached);
    let when = match out.session.ended {
        _ if attached => "when observation stopped (of the blocks allocated while observed)",
        crate::diagnose::observe::session::Ended::Finished => "at exit",
        _ => "when observation stopped",
    };
    if t.leaked == 0 {
        return Finding::new("leaks", format!("No block was live {when}."), Some(0.0));
    }
    let mut leaking: Vec<&AllocSite> = rows.iter().filter(|r| r.leaked > 0).collect();
    leaking.sort_by_key(|r| std::cmp::Reverse(r.leaked_bytes));
    let top: Vec<String> = leaking
        .iter()
        .take(3)
        .map(|r| {
            format!(
                "{} ({} blocks, {})",
                r.site,
                units::count(r.leaked as f64),
                units::bytes(r.leaked_bytes as f64)
            )
        })
        .collect();
    let text = format!(
        "{} blocks ({}) were still live {when}, from {} site(s); the most: {}.",
        units::count(t.leaked as f64),
        units::bytes(t.leaked_bytes as f64),
        leaking.len(),
        top.join("; ")
    );
    Finding::new("leaks", text, Some(t.leaked_bytes as f64))
}

fn peak(out: &Outcome, t: &Totals) -> Finding {
    let rss = out.samples.iter().map(|s| s.rss).fold(0.0_f64, f64::max);
    let rss_text = if rss > 0.0 {
        format!(
            " (RSS peaked at {} as sampled every 10 ms)",
            units::bytes(rss)
        )
    } else {
        String::new()
    };
    let since = match out.mechanism.uprobes_used().is_some_and(|u| u.attached) {
        true => "observation started (of the blocks allocated while observed)",
        false => "the program started",
    };
    let text = if t.peak_at_end {
        format!(
            "The heap peaked at {} live at the end, summed over the run's processes (no one \
             of them held as much at once){rss_text}.",
            units::bytes(t.peak as f64)
        )
    } else {
        format!(
            "The heap peaked at {} live, {} after {since}{rss_text}.",
            units::bytes(t.peak as f64),
            units::duration_ns(t.peak_after_ns as f64)
        )
    };
    Finding::new("peak", text, Some(t.peak as f64))
}

fn temporary(rows: &[AllocSite], t: &Totals) -> Option<Finding> {
    if t.temps == 0 {
        return None;
    }
    let most = rows.iter().max_by_key(|r| r.temporary)?;
    let text = format!(
        "{} of {} allocations ({}) were temporary: freed by the allocating thread before \
         it allocated again (heaptrack's definition); the most at {} ({}).",
        units::count(t.temps as f64),
        units::count(t.allocs as f64),
        pct(t.temps as f64, t.allocs as f64),
        most.site,
        units::count(most.temporary as f64)
    );
    Some(Finding::new("temporary", text, Some(t.temps as f64)))
}

/// The commonest size class of the histogram.
fn sizes(out: &Outcome) -> Option<Finding> {
    let mut hist = [0u64; HIST];
    for p in &out.procs {
        for (h, v) in hist.iter_mut().zip(&p.hist) {
            *h += v;
        }
    }
    let all: u64 = hist.iter().sum();
    let (b, &n) = hist.iter().enumerate().max_by_key(|&(_, n)| *n)?;
    if n == 0 {
        return None;
    }
    let range = match b {
        0 => "0 B".to_string(),
        1 => "1 B".to_string(),
        _ => format!(
            "{}–{}",
            units::bytes((1u64 << (b - 1)) as f64),
            units::bytes(((1u64 << b) - 1) as f64)
        ),
    };
    let text = format!(
        "Most allocations are {range} ({} of them).",
        pct(n as f64, all as f64)
    );
    Some(Finding::new("sizes", text, Some(n as f64)))
}

/// What the preload library could not keep, as phrases, and the allocations and processes
/// it affects.
fn preload_lost(out: &Outcome) -> (Vec<String>, u64) {
    let h = &out.header;
    let untracked: u64 = out.procs.iter().map(|p| p.heap.untracked).sum();
    let phrases = [
        (
            u64::from(h.lost_stacks),
            "allocations found the stack table full (counted at one lump site)",
        ),
        (
            u64::from(h.lost_procs),
            "processes found no record and were not counted",
        ),
        (untracked, "allocations were not kept (pointer table full)"),
    ];
    let mut lost: Vec<String> = phrases
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect();
    lost.extend(out.not_entered.phrase());
    let n = phrases.iter().map(|p| p.0).sum::<u64>() + out.not_entered.count();
    (lost, n)
}

fn stacks(out: &Outcome) -> Finding {
    let how = match out.header.unwinder {
        1 => "frame pointers (deeper frames only where the code keeps them)",
        2 => "the DWARF unwind tables through libunwind",
        _ => "the DWARF unwind tables through libgcc's unwinder",
    };
    let (lost, _) = preload_lost(out);
    let lost = if lost.is_empty() {
        " Nothing was lost.".into()
    } else {
        format!(" Lost: {}.", lost.join("; "))
    };
    let text = format!(
        "Stacks were walked in the process with {how}, {} frames at most.{lost}",
        crate::diagnose::alloc::region::DEPTH
    );
    Finding::new("stacks", text, Some(f64::from(out.header.lost_stacks)))
}

/// The `lost` finding, first of all when anything was not kept (never silent).
fn lost(out: &Outcome) -> Option<Finding> {
    let (lost, n) = match out.mechanism.uprobes_used() {
        Some(u) => super::uprobes::lost(u),
        None => preload_lost(out),
    };
    (!lost.is_empty()).then(|| {
        let text = format!("Incomplete: {}.", lost.join("; "));
        Finding::new("lost", text, Some(n as f64))
    })
}

/// Every finding of a run.
pub fn all(out: &Outcome, rows: &[AllocSite], t: &Totals) -> Vec<Finding> {
    let mut f: Vec<Finding> = lost(out).into_iter().collect();
    f.extend(crate::diagnose::alloc::images::sentence(out).map(|text| {
        let n = crate::diagnose::alloc::images::labels(out).len();
        Finding::new("images", text, Some(n as f64))
    }));
    f.extend(top_site(rows, t));
    f.push(leaks(out, rows, t));
    f.push(peak(out, t));
    f.extend(temporary(rows, t));
    f.extend(sizes(out));
    f.push(match out.mechanism.uprobes_used() {
        Some(u) => super::uprobes::stacks(u),
        None => stacks(out),
    });
    f.extend(super::uprobes::extra(out));
    f
}

/// The `priced` finding: the allocator calls (allocations and frees) priced at `pair`, the
/// bench's malloc+free (`(ns, metric, bench run id)`), as a share of `cpu_ns` when known;
/// without a bench, the bench to run.
pub fn priced(r: &mut ExperimentResult, pair: Option<(f64, String, String)>, cpu_ns: Option<f64>) {
    let allocs = r
        .metrics
        .iter()
        .find(|m| m.name == "allocations")
        .map_or(0.0, |m| m.summary.median);
    let Some((each, metric, bench)) = pair else {
        let text = "No bench run of this host is stored to price the allocations with; \
                    `sysmeter bench --only cpu.ops` measures malloc+free here, and the next \
                    run is priced.";
        r.findings.push(Finding::new("priced", text.into(), None));
        return;
    };
    let total = allocs * each;
    let share = cpu_ns
        .filter(|c| *c > 0.0)
        .map(|c| format!(", {} of the program's CPU time", pct(total, c)))
        .unwrap_or_default();
    let text = format!(
        "Priced with this machine's bench run {bench}: {} allocations with their frees cost \
         about {} here ({} per malloc+free by {metric}){share} — the most removing them all \
         would save.",
        units::count(allocs),
        units::duration_ns(total),
        units::duration_ns(each)
    );
    r.findings.push(Finding::new("priced", text, Some(total)));
}
