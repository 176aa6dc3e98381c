//! Bandwidth by working-set size: `mem.bandwidth` names its metrics like
//! `read, L1 (16 KiB), 1 thread` or `copy, DRAM (128 MiB each), 2 threads`. Those that parse
//! become one line chart per thread count with a line per kernel (read, write, copy, …) over
//! the size, the cache level named at each size. Names that do not parse are left to the
//! generic bar chart, so a renamed metric degrades to bars instead of disappearing.
//!
//! Pure; depends on `model` and the chart types.

use std::collections::BTreeMap;

use super::axis::ScaleMode;
use super::xy::{Line, Marker, Point, XyChart};
use crate::model::{Metric, Unit};

/// The parts of a bandwidth metric name.
#[derive(Debug, Clone, PartialEq)]
pub struct BandwidthName {
    /// Access kernel: `read`, `write`, `copy`, `nt-write`.
    pub kernel: String,
    /// Level the size was chosen for: `L1`, `DRAM`.
    pub level: String,
    /// Working-set size per thread, bytes.
    pub size_bytes: f64,
    /// Threads running the kernel at once.
    pub threads: u32,
}

/// Parses `kernel, LEVEL (SIZE[ each]), N thread[s]`; `None` for anything else.
pub fn parse(name: &str) -> Option<BandwidthName> {
    let mut parts = name.split(", ");
    let (kernel, level_part, threads_part) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || kernel.trim().is_empty() {
        return None;
    }
    let (level, rest) = level_part.split_once(" (")?;
    let size = rest.strip_suffix(')')?;
    let size = size.strip_suffix(" each").unwrap_or(size);
    let (count, word) = threads_part.split_once(' ')?;
    if !word.starts_with("thread") {
        return None;
    }
    Some(BandwidthName {
        kernel: kernel.trim().to_string(),
        level: level.trim().to_string(),
        size_bytes: parse_size(size)?,
        threads: count.parse().ok().filter(|n| *n > 0)?,
    })
}

/// `16 KiB`, `256 MiB`, `512 B` as bytes.
fn parse_size(text: &str) -> Option<f64> {
    let (number, unit) = text.trim().split_once(' ')?;
    let number: f64 = number
        .parse()
        .ok()
        .filter(|n: &f64| n.is_finite() && *n > 0.0)?;
    let power = match unit {
        "B" => 0,
        "KiB" => 1,
        "MiB" => 2,
        "GiB" => 3,
        "TiB" => 4,
        _ => return None,
    };
    Some(number * 1024f64.powi(power))
}

/// The charts (thread count, chart) and the names of the metrics they show. Nothing when
/// fewer than two rate metrics parse.
pub fn charts(title: &str, metrics: &[Metric]) -> (Vec<(u32, XyChart)>, Vec<String>) {
    let parsed: Vec<(BandwidthName, &Metric)> = metrics
        .iter()
        .filter(|m| m.unit == Unit::BytesPerSec)
        .filter_map(|m| parse(&m.name).map(|p| (p, m)))
        .collect();
    if parsed.len() < 2 {
        return (Vec::new(), Vec::new());
    }
    let mut by_threads: BTreeMap<u32, Vec<&(BandwidthName, &Metric)>> = BTreeMap::new();
    for entry in &parsed {
        by_threads.entry(entry.0.threads).or_default().push(entry);
    }
    let charts = by_threads
        .into_iter()
        .map(|(threads, entries)| (threads, chart(title, threads, &entries)))
        .collect();
    let used = parsed.iter().map(|(_, m)| m.name.clone()).collect();
    (charts, used)
}

/// One thread count's chart: a line per kernel, in the order kernels first appear.
fn chart(title: &str, threads: u32, entries: &[&(BandwidthName, &Metric)]) -> XyChart {
    let mut lines: Vec<Line> = Vec::new();
    let mut markers: Vec<Marker> = Vec::new();
    for (name, metric) in entries {
        let s = &metric.summary;
        let point = Point {
            x: name.size_bytes,
            y: s.median,
            lo: s.ci95.0,
            hi: s.ci95.1,
        };
        match lines.iter_mut().find(|l| l.name == name.kernel) {
            Some(line) => line.points.push(point),
            None => lines.push(Line {
                name: name.kernel.clone(),
                points: vec![point],
            }),
        }
        if !markers.iter().any(|m| m.x == name.size_bytes) {
            markers.push(Marker {
                x: name.size_bytes,
                label: name.level.clone(),
                detected: false,
            });
        }
    }
    for line in &mut lines {
        line.points.sort_by(|a, b| a.x.total_cmp(&b.x));
    }
    let (per_thread, together) = if threads > 1 {
        (" per thread", format!(", all {threads} threads together"))
    } else {
        ("", String::new())
    };
    XyChart {
        title: format!("{title}: bandwidth by working-set size{per_thread}, {threads} thread(s)"),
        x_label: format!("working set{per_thread}"),
        x_unit: Unit::Bytes,
        x_mode: ScaleMode::Log,
        y_label: format!("bandwidth{together}"),
        y_unit: Unit::BytesPerSec,
        y_mode: ScaleMode::Linear,
        lines,
        markers,
        levels: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::charts::tests::{bandwidth_metrics, metric};

    #[test]
    fn names_parse_defensively() {
        let p = parse("copy, DRAM (128 MiB each), 2 threads");
        assert_eq!(
            p,
            Some(BandwidthName {
                kernel: "copy".into(),
                level: "DRAM".into(),
                size_bytes: 128.0 * 1024.0 * 1024.0,
                threads: 2,
            })
        );
        assert_eq!(
            parse("read, L1 (16 KiB), 1 thread").map(|p| p.size_bytes),
            Some(16384.0)
        );
        for bad in [
            "read",
            "read, L1, 1 thread",
            "read, L1 (16 KB), 1 thread",
            "read, L1 (16 KiB), one thread",
            "read, L1 (16 KiB), 0 threads",
            "read, L1 (16 KiB), 1 thread, extra",
            ", L1 (16 KiB), 1 thread",
        ] {
            assert_eq!(parse(bad), None, "{bad}");
        }
        assert_eq!(parse_size("2 TiB"), Some(2.0 * 1024f64.powi(4)));
    }

    #[test]
    fn one_chart_per_thread_count_with_a_line_per_kernel() {
        let mut metrics = bandwidth_metrics();
        metrics.push(metric("odd one", Unit::BytesPerSec, 1e9));
        metrics.push(metric("read, L1 (16 KiB), 1 thread as ns", Unit::Ns, 1.0));
        let (found, used) = charts("mem.bandwidth", &metrics);
        assert_eq!(used.len(), 4);
        assert_eq!(found.len(), 2);
        let (threads, one) = &found[0];
        assert_eq!(*threads, 1);
        assert_eq!(one.lines.len(), 2);
        let xs: Vec<f64> = one.lines[0].points.iter().map(|p| p.x).collect();
        assert_eq!(xs, [16384.0, 262_144.0], "sorted by size");
        assert_eq!(one.markers.len(), 2);
        assert_eq!(charts("t", &metrics[4..]).0.len(), 0);
    }
}
