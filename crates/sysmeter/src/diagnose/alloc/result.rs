//! The `alloc` result of a run: the run-wide metrics (allocations, bytes, peak live bytes
//! and when, leaks, temporary allocations), the heap-over-time series beside RSS, the typed
//! site rows (`model::alloc`), the folded stacks and the flame graphs of bytes and of
//! counts, and the findings (`findings`).
//!
//! Pure but for the flame graph drawing. Depends on `model`, `stats`, `diagnose::observe`
//! and the siblings.

mod findings;
mod peak;
mod uprobes;

pub use findings::priced;

use std::collections::HashMap;

use super::images;
use super::names::Named;
use super::{Outcome, Sample};
use crate::diagnose::observe::flame;
use crate::model::alloc::{ALLOC_ID, ALLOC_SITES, AllocSite, LIVE_HEAP, PEAK_AFTER, PEAK_LIVE};
use crate::model::{About, Artifact, ExperimentResult, Metric, Series, SeriesPoint, Summary, Unit};
use crate::stats::summarize;

const PRELOAD_METHOD: &str = "A library preloaded into the program interposes malloc, calloc, \
     realloc, free, posix_memalign, aligned_alloc, memalign, valloc, pvalloc and anonymous \
     mmap/munmap. Each allocation's call stack is walked in the process (DWARF unwind tables \
     through libunwind, else libgcc; or frame pointers) and counted in a region of shared \
     memory per stack and process; each block is kept in a table until freed. Counts are \
     exact; nothing is sampled.";

const UPROBE_METHOD: &str = "Uprobes on malloc, calloc, realloc, free, posix_memalign, \
     aligned_alloc, memalign, valloc and pvalloc of the C library the process maps (or of a \
     static program itself) run BPF programs that aggregate in the kernel: per user stack \
     (the kernel's frame-pointer walk from the allocation's return, completed in user space \
     from a copy of the stack with the DWARF unwind tables) the allocations, bytes, frees and \
     temporary allocations, each block kept in a table until freed. Counts are exact for what \
     the probes see; nothing is sampled and nothing crosses a ring buffer.";

fn about(target: &str, out: &Outcome) -> About {
    let methodology = match out.mechanism.uprobes_used() {
        None => PRELOAD_METHOD,
        Some(_) => UPROBE_METHOD,
    };
    About {
        title: "Heap profile".into(),
        measures: format!(
            "Per call stack of `{target}`: allocations, bytes, what was still live at the \
             end (leaks), temporary allocations; the peak of live bytes and when; the live \
             heap over time beside RSS"
        ),
        methodology: methodology.into(),
        references: vec![
            "heaptrack: allocations, leaks, peak and temporary allocations per call stack".into(),
        ],
    }
}

/// One value as a metric (a count or a size, not a distribution); its one sample is kept so
/// `compare` shows both runs' values.
fn value(name: &str, unit: Unit, v: f64) -> Metric {
    let summary = Summary {
        n: 1,
        min: v,
        p5: v,
        median: v,
        mean: v,
        p95: v,
        p99: v,
        max: v,
        ..Summary::default()
    };
    Metric {
        samples: vec![v],
        ..Metric::new(name, unit, summary)
    }
}

/// The site rows, biggest bytes first, counters summed over the processes and over stacks
/// that read the same once named (an unrolled loop calls from several addresses of one line).
pub fn rows(out: &Outcome, names: &HashMap<usize, Named>) -> Vec<AllocSite> {
    let mut by: HashMap<(Option<String>, Vec<String>), AllocSite> = HashMap::new();
    let labels = images::labels(out);
    let replaced = images::replaced(out);
    for &(proc, i, c) in &out.counters {
        let live_at_end = !replaced.contains(&proc);
        let named = names.get(&i).cloned().unwrap_or_default();
        let key = if i == 0 || named.frames.is_empty() {
            vec![format!("#{i}")]
        } else {
            named.frames.clone()
        };
        // With several images (a wrapper and the program it execs) each keeps its rows.
        let image = images::label_of(out, &labels, proc);
        let row = by.entry((image.clone(), key)).or_insert_with(|| AllocSite {
            // Stack 0 is the lump of allocations whose stack was not kept (the preload
            // library's table full, or no room in the uprobe backend's stack map).
            site: match (i, image) {
                (0, None) => "(no stack kept)".into(),
                (0, Some(image)) => format!("{image}: (no stack kept)"),
                (_, None) => named.site,
                (_, Some(image)) => format!("{image}: {}", named.site),
            },
            stack: named.frames,
            ..AllocSite::default()
        });
        row.allocations += c.allocs;
        row.bytes += c.bytes;
        if live_at_end {
            row.leaked += c.allocs.saturating_sub(c.frees);
            row.leaked_bytes += c.bytes.saturating_sub(c.freed);
        }
        row.temporary += c.temps;
        row.mmaps += c.mmaps;
    }
    let mut rows: Vec<AllocSite> = by.into_values().filter(|r| r.allocations > 0).collect();
    rows.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.site.cmp(&b.site)));
    for (k, r) in rows.iter_mut().enumerate() {
        r.rank = k + 1;
    }
    rows
}

/// Folded stacks (root first), weighted by `weight`.
fn folded(rows: &[AllocSite], weight: impl Fn(&AllocSite) -> u64) -> String {
    let mut lines: Vec<String> = rows
        .iter()
        .filter(|r| weight(r) > 0)
        .map(|r| {
            let frames: Vec<String> = if r.stack.is_empty() {
                vec![r.site.clone()]
            } else {
                r.stack.iter().rev().map(|f| f.replace(';', ",")).collect()
            };
            format!("{} {}", frames.join(";"), weight(r))
        })
        .collect();
    lines.sort();
    lines.join("\n")
}

fn artifact(name: &str, media_type: &str, content: String) -> Artifact {
    Artifact {
        name: name.into(),
        media_type: media_type.into(),
        content,
    }
}

fn flame_artifacts(rows: &[AllocSite]) -> Vec<Artifact> {
    let bytes = folded(rows, |r| r.bytes);
    let counts = folded(rows, |r| r.allocations);
    let mut arts = vec![artifact("folded", "text/plain", bytes.clone())];
    let style = |count_name| flame::Style {
        count_name,
        factor: 1.0,
        off_cpu: false,
    };
    let empty = "no allocation was seen";
    if let Ok(svg) = flame::svg(&bytes, "Bytes allocated", style("bytes"), empty) {
        arts.push(artifact("flamegraph", "image/svg+xml", svg));
    }
    if let Ok(svg) = flame::svg(&counts, "Allocations", style("allocations"), empty) {
        arts.push(artifact("flamegraph (allocations)", "image/svg+xml", svg));
    }
    arts
}

fn series(name: &str, samples: &[Sample], y: impl Fn(&Sample) -> f64) -> Series {
    Series {
        name: name.into(),
        x_label: "seconds since start".into(),
        x_unit: Unit::Count,
        y_unit: Unit::Bytes,
        points: samples
            .iter()
            .filter_map(|s| {
                Some(SeriesPoint {
                    x: s.t_ns / 1e9,
                    summary: summarize(&[y(s)], 1).ok()?,
                    cycles: None,
                })
            })
            .collect(),
    }
}

/// Allocations per log2 size class over all processes: x is the class's lowest size in
/// bytes (class b holds sizes from 2^(b-1) to 2^b - 1; 0 B alone in class 0).
fn size_series(out: &Outcome) -> Series {
    let mut hist = [0u64; super::region::HIST];
    for p in &out.procs {
        for (h, v) in hist.iter_mut().zip(&p.hist) {
            *h += v;
        }
    }
    Series {
        name: "allocations".into(),
        x_label: "size (log2 class, from)".into(),
        x_unit: Unit::Bytes,
        y_unit: Unit::Count,
        points: hist
            .iter()
            .enumerate()
            .filter(|&(_, &n)| n > 0)
            .filter_map(|(b, &n)| {
                Some(SeriesPoint {
                    x: if b == 0 { 0.0 } else { 2f64.powi(b as i32 - 1) },
                    summary: summarize(&[n as f64], 1).ok()?,
                    cycles: None,
                })
            })
            .collect(),
    }
}

/// Run-wide totals: everything summed over the processes (what is live at the end over the
/// images that were not replaced by an exec: a replaced image's blocks went with its address
/// space), and the peak (`peak`: never below what is live at the end).
pub struct Totals {
    /// Allocations, bytes, leaked blocks and bytes, temporary allocations.
    pub allocs: u64,
    /// Bytes allocated.
    pub bytes: u64,
    /// Blocks live at the end.
    pub leaked: u64,
    /// Bytes live at the end.
    pub leaked_bytes: u64,
    /// Temporary allocations.
    pub temps: u64,
    /// Peak live bytes: never below any live value the run reports (`peak`).
    pub peak: u64,
    /// When, ns since the first image started.
    pub peak_after_ns: u64,
    /// The peak is the live bytes summed at the end (more than any one image held).
    pub peak_at_end: bool,
}

fn totals(out: &Outcome) -> Totals {
    let replaced = images::replaced(out);
    let at_end = || out.procs.iter().filter(|p| !replaced.contains(&p.index));
    let leaked_bytes = at_end().map(|p| p.heap.live).sum();
    let (peak, peak_after_ns, peak_at_end) = peak::peak(out, leaked_bytes);
    Totals {
        allocs: out.procs.iter().map(|p| p.heap.allocs).sum(),
        bytes: out.counters.iter().map(|c| c.2.bytes).sum(),
        leaked: at_end().map(|p| p.heap.live_count).sum(),
        leaked_bytes,
        temps: out.procs.iter().map(|p| p.heap.temps).sum(),
        peak,
        peak_after_ns,
        peak_at_end,
    }
}

/// The `alloc` result of `out`, its stacks named by `names`.
pub fn build(target: &str, out: &Outcome, names: &HashMap<usize, Named>) -> ExperimentResult {
    let rows = rows(out, names);
    let t = totals(out);
    let mut r = ExperimentResult::new(ALLOC_ID, about(target, out));
    r.metrics = vec![
        value("allocations", Unit::Count, t.allocs as f64),
        value("bytes allocated", Unit::Bytes, t.bytes as f64),
        value(PEAK_LIVE, Unit::Bytes, t.peak as f64),
        value(PEAK_AFTER, Unit::Ns, t.peak_after_ns as f64),
        value("live at end", Unit::Bytes, t.leaked_bytes as f64),
        value("blocks live at end", Unit::Count, t.leaked as f64),
        value("temporary allocations", Unit::Count, t.temps as f64),
        value("allocation sites", Unit::Count, rows.len() as f64),
    ];
    r.series = vec![
        series(LIVE_HEAP, &out.samples, |s| s.live),
        series("RSS", &out.samples, |s| s.rss),
        size_series(out),
    ];
    r.series.retain(|s| !s.points.is_empty());
    r.findings = findings::all(out, &rows, &t);
    let mut arts = vec![artifact(
        ALLOC_SITES,
        "application/json",
        serde_json::to_string(&rows).unwrap_or_else(|_| "[]".into()),
    )];
    arts.extend(flame_artifacts(&rows));
    r.artifacts = arts;
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::alloc::region::{Counters, Heap, Proc};

    fn outcome() -> (Outcome, HashMap<usize, Named>) {
        let c = |allocs, bytes, frees, freed, temps| Counters {
            allocs,
            bytes,
            frees,
            freed,
            temps,
            mmaps: 0,
        };
        let out = Outcome {
            procs: vec![Proc {
                pid: 7,
                heap: Heap {
                    allocs: 111,
                    live: 300,
                    live_count: 3,
                    peak: 5000,
                    peak_ns: 2_000_000,
                    ..Heap::default()
                },
                start_ns: 1_000_000,
                ..Proc::default()
            }],
            // Stacks 1 and 2 read the same once named (an unrolled loop): one row.
            counters: vec![
                (0, 1, c(5, 500, 4, 400, 4)),
                (0, 2, c(5, 500, 5, 500, 5)),
                (0, 3, c(101, 5000, 99, 4800, 0)),
            ],
            pid: 7,
            ..Outcome::default()
        };
        let named = |site: &str, frames: &[&str]| Named {
            site: site.into(),
            frames: frames.iter().map(|f| f.to_string()).collect(),
        };
        let names = HashMap::from([
            (1, named("f (a.c:3)", &["f (a.c:3)", "main (a.c:9)"])),
            (2, named("f (a.c:3)", &["f (a.c:3)", "main (a.c:9)"])),
            (
                3,
                named(
                    "g (a.c:5)",
                    &["operator new(unsigned long)", "g (a.c:5)", "main"],
                ),
            ),
        ]);
        (out, names)
    }

    #[test]
    fn stacks_that_read_the_same_are_one_row_biggest_bytes_first() {
        let (out, names) = outcome();
        let rows = rows(&out, &names);
        assert_eq!(rows.len(), 2);
        assert_eq!((rows[0].site.as_str(), rows[0].rank), ("g (a.c:5)", 1));
        assert_eq!((rows[0].leaked, rows[0].leaked_bytes), (2, 200));
        assert_eq!((rows[1].allocations, rows[1].bytes), (10, 1000));
        assert_eq!((rows[1].leaked, rows[1].temporary), (1, 9));
        // Folded stacks are root first, weighted by bytes.
        let f = folded(&rows, |r| r.bytes);
        assert!(
            f.contains("main;g (a.c:5);operator new(unsigned long) 5000"),
            "{f}"
        );
        assert!(f.contains("main (a.c:9);f (a.c:3) 1000"), "{f}");
    }

    #[test]
    fn the_result_says_where_the_bytes_leaks_and_peak_are_and_prices_them() {
        let (out, names) = outcome();
        let mut r = build("prog", &out, &names);
        let text = |k: &str| {
            r.findings
                .iter()
                .find(|f| f.key == k)
                .map(|f| f.text.clone())
                .unwrap_or_default()
        };
        assert!(text("top_site").starts_with("83% of allocated bytes come from g (a.c:5)"));
        assert!(text("leaks").contains("3 blocks (300 B) were still live at exit"));
        assert!(
            text("peak").contains("4.88 KiB live, 1.00 ms after"),
            "{}",
            text("peak")
        );
        priced(
            &mut r,
            Some((20.0, "cpu.ops \"malloc+free 64 B\"".into(), "B1".into())),
            None,
        );
        let p = r
            .findings
            .last()
            .map(|f| f.text.clone())
            .unwrap_or_default();
        assert!(p.contains("bench run B1: 111 allocations"), "{p}");
        assert!(p.contains("about 2.22 µs here"), "{p}");
    }
}
