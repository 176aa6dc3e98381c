//! What an `alloc` run made through the uprobe fallback says about it: how the allocations
//! were seen and what that misses (frees of blocks allocated before observation began,
//! forked children, anonymous maps), how the stacks were walked and what the kernel's maps
//! could not keep (never silent), and, for `-p`, that the process's exit ended the session.
//! Pure. Depends on `model`, `diagnose::observe::session` and the siblings.

use crate::diagnose::alloc::region::DEPTH;
use crate::diagnose::alloc::{Outcome, Uprobes};
use crate::diagnose::observe::session::process_exited;
use crate::model::{Finding, units};

/// The `mechanism` finding: what was probed, why, and how unknown frees are treated.
pub fn mechanism(u: &Uprobes) -> Finding {
    let why = match (u.attached, u.asked) {
        (true, _) => "a running process: the preload library is loaded only when a program starts",
        (false, true) => "chosen with --backend uprobes",
        (false, false) => "a static or setuid program, which the preload library cannot enter",
    };
    let before = match u.attached {
        true => "allocated before observation began, or freed by a path not probed",
        false => "freed by a path not probed",
    };
    let text = format!(
        "Seen through uprobes on the allocation functions of {} ({why}); {} probe hits were \
         aggregated in the kernel, so none was lost on the way. {} frees of blocks not seen \
         allocated ({before}) were not counted against any site, and such blocks are never \
         leaks here. Forked children are not followed and anonymous mmap is not probed.",
        u.file,
        units::count(u.stats.hits as f64),
        units::count(u.stats.heap.foreign_frees as f64),
    );
    Finding::new("mechanism", text, Some(u.stats.heap.foreign_frees as f64))
}

/// What the maps could not keep, as phrases (empty: nothing), and the calls it affects.
pub fn lost(u: &Uprobes) -> (Vec<String>, u64) {
    let s = &u.stats;
    let phrases = [
        (
            s.lost_stacks,
            "allocations found no room in the stack map (one lump site)",
        ),
        (
            s.heap.untracked,
            "allocations were not kept (block table full)",
        ),
        (
            s.threads_full,
            "calls came from threads beyond the thread table (not counted)",
        ),
        (
            s.sites_full,
            "allocations found the site table full (not counted per site)",
        ),
        (
            s.snapshot_failed,
            "stacks had no readable stack copy (the kernel's walk kept)",
        ),
        (
            s.replaced,
            "blocks were handed out again before their free was seen",
        ),
    ];
    let lost = phrases
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{} {what}", units::count(*n as f64)))
        .collect();
    // Snapshots and replaced blocks lose nothing counted: not in the sum.
    (
        lost,
        s.lost_stacks + s.heap.untracked + s.threads_full + s.sites_full,
    )
}

/// The `stacks` finding of the uprobe backend.
pub fn stacks(u: &Uprobes) -> Finding {
    let (lost, n) = lost(u);
    let lost_text = match lost.is_empty() {
        true => " Nothing was lost.".to_string(),
        false => format!(" Lost: {}.", lost.join("; ")),
    };
    let text = format!(
        "Stacks were walked from a copy of the top of the user stack taken at the first \
         allocation of each stack the kernel's frame-pointer walk tells apart, with the DWARF \
         unwind tables, {DEPTH} frames at most (a function without frame pointers called from \
         two places is charged to the first caller seen).{lost_text}"
    );
    Finding::new("stacks", text, Some(n as f64))
}

/// The findings the uprobe backend adds: the mechanism, and for `-p` the process's end.
pub fn extra(out: &Outcome) -> Vec<Finding> {
    let Some(u) = out.mechanism.uprobes_used() else {
        return Vec::new();
    };
    let mut f = vec![mechanism(u)];
    f.extend(u.exited_after_ns.map(process_exited));
    f
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::alloc::Mechanism;
    use crate::diagnose::alloc::result::build;
    use std::collections::HashMap;

    #[test]
    fn what_the_maps_lost_is_said_first_and_unknown_frees_are_counted_apart() {
        let mut m = Mechanism::uprobes(std::path::Path::new("/lib/libc.so.6"), true);
        let mut stats = crate::diagnose::alloc::uprobe::maps::Stats {
            lost_stacks: 3,
            heap: crate::diagnose::alloc::region::Heap {
                foreign_frees: 7,
                ..Default::default()
            },
            hits: 100,
            ..Default::default()
        };
        m.set_stats(stats.clone(), Some(2_000_000), false);
        let out = Outcome {
            mechanism: m,
            ..Outcome::default()
        };
        let r = build("PID 1", &out, &HashMap::new());
        assert_eq!(r.findings[0].key, "lost", "{:?}", r.findings);
        assert!(r.findings[0].text.contains("3 allocations found no room"));
        let mech = r.findings.iter().find(|f| f.key == "mechanism");
        let mech = mech.expect("the mechanism is named");
        assert_eq!(mech.value, Some(7.0));
        assert!(mech.text.contains("uprobes") && mech.text.contains("before observation"));
        assert!(r.findings.iter().any(|f| f.key == "ended"));
        let leaks = r.findings.iter().find(|f| f.key == "leaks").expect("leaks");
        assert!(
            leaks.text.contains("when observation stopped"),
            "{}",
            leaks.text
        );
        // Nothing lost: no `lost` finding at all.
        stats.lost_stacks = 0;
        let mut m = Mechanism::uprobes(std::path::Path::new("/x"), false);
        m.set_stats(stats, None, false);
        let out = Outcome {
            mechanism: m,
            ..Outcome::default()
        };
        let r = build("x", &out, &HashMap::new());
        assert!(
            r.findings
                .iter()
                .all(|f| f.key != "lost" && f.key != "ended")
        );
    }
}
