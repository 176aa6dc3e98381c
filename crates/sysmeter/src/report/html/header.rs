//! The top of the HTML report: the run (id, kind, times, profile, pinning, calibration) and
//! the machine description (the same sections as `sysmeter host`, plus its warnings).
//!
//! Pure: built from a [`RunRecord`]; reuses `host_text` for the machine rows and
//! `model::units` for numbers, so the page says what the terminal says.

use super::rich::rich;
use crate::model::units;
use crate::model::{Calibration, RunRecord};
use crate::report::host_text::host_sections;
use crate::report::text::timestamp;

/// A labelled value.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyValue {
    /// Label (empty for a note).
    pub key: String,
    /// Value, as HTML (escaped; backtick spans as code).
    pub value_html: String,
}

fn kv(key: impl Into<String>, value: impl AsRef<str>) -> KeyValue {
    KeyValue {
        key: key.into(),
        value_html: rich(value.as_ref()),
    }
}

/// A titled group of rows.
#[derive(Debug, Clone, PartialEq)]
pub struct SectionView {
    /// Title.
    pub title: String,
    /// Rows.
    pub rows: Vec<KeyValue>,
    /// Spans two columns of the card grid (long values such as capability details).
    pub wide: bool,
}

/// Values longer than this make a card span two grid columns.
const WIDE_VALUE_CHARS: usize = 60;

/// The run and its machine.
#[derive(Debug, Clone, PartialEq)]
pub struct HeaderView {
    /// Run id.
    pub id: String,
    /// One line: host · CPU · arch · kernel · OS.
    pub headline: String,
    /// `true` when the run was stopped early.
    pub interrupted: bool,
    /// For a run whose process died: what it is and what is missing.
    pub incomplete: Option<String>,
    /// The run's facts (kind, times, profile, calibration).
    pub run: Vec<KeyValue>,
    /// Machine description groups.
    pub host: Vec<SectionView>,
    /// Noise warnings about the machine.
    pub warnings: Vec<String>,
}

/// The header of `run`.
pub fn header(run: &RunRecord) -> HeaderView {
    let h = &run.host;
    let mut headline = vec![h.hostname.clone(), h.cpu.model.clone(), h.arch.clone()];
    if !h.kernel.is_empty() {
        headline.push(format!("Linux {}", h.kernel));
    }
    headline.push(h.os.clone());
    if let Some(v) = &h.virtualization {
        headline.push(format!("virtualized ({v})"));
    }
    headline.retain(|part| !part.is_empty());
    let host = host_sections(h)
        .into_iter()
        .map(|(title, rows)| SectionView {
            title: title.to_string(),
            wide: rows
                .iter()
                .any(|(_, v)| v.chars().count() > WIDE_VALUE_CHARS),
            rows: rows.into_iter().map(|(k, v)| kv(k, v)).collect(),
        })
        .collect();
    HeaderView {
        id: run.id.clone(),
        headline: headline.join(" · "),
        interrupted: run.interrupted,
        incomplete: crate::report::text::incomplete_line(run),
        run: run_rows(run),
        host,
        warnings: h.warnings.clone(),
    }
}

fn run_rows(run: &RunRecord) -> Vec<KeyValue> {
    let c = &run.config;
    let mut rows = vec![
        kv("kind", run.kind.as_str()),
        kv("started", timestamp(run.started_ns)),
    ];
    if let Some((word, ns)) = crate::report::format::wall_time(run) {
        rows.push(kv(word, units::duration_ns(ns)));
    }
    rows.push(kv("sysmeter", run.tool_version.clone()));
    if !c.profile.is_empty() {
        rows.push(kv("profile", c.profile.clone()));
    }
    if !c.selected.is_empty() {
        rows.push(kv("selected", c.selected.join(", ")));
    }
    let pinned = c.cpu.map_or_else(
        || "not pinned".to_string(),
        |n| format!("pinned to CPU {n}"),
    );
    rows.push(kv("measuring thread", pinned));
    if c.target_ci_width > 0.0 {
        let width = units::percent(c.target_ci_width);
        let target = format!("within-run 95% CI of the median narrower than {width} of it");
        rows.push(kv("target", target));
    }
    rows.push(kv("bootstrap seed", c.seed.to_string()));
    if let Some(basis) = crate::report::format::intervals_basis(run) {
        rows.push(kv("intervals", basis));
        rows.push(kv("reading them", crate::report::format::INTERVALS_LEGEND));
    }
    if let Some(cal) = &c.calibration {
        rows.extend(calibration_rows(cal));
    }
    rows
}

fn calibration_rows(cal: &Calibration) -> Vec<KeyValue> {
    let mut rows = vec![
        kv("clock", cal.clock.clone()),
        kv("timer overhead", units::duration_ns(cal.timer_overhead_ns)),
        kv(
            "timer granularity",
            units::duration_ns(cal.timer_granularity_ns),
        ),
        kv("loop overhead", units::duration_ns(cal.loop_overhead_ns)),
        kv("shortest sample", units::duration_ns(cal.min_sample_ns)),
    ];
    if let Some(ghz) = cal.tsc_ghz {
        let source = cal.tsc_source.as_deref().unwrap_or("TSC");
        let value = format!(
            "{} GHz ({source}); the cycles columns are ticks of this counter",
            units::sig3(ghz)
        );
        rows.push(kv("time-stamp counter", value));
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::fixture::sample_run;

    #[test]
    fn header_names_run_machine_and_calibration() {
        let h = header(&sample_run());
        assert_eq!(h.id, "20261122T183242Z-3f9a");
        assert!(h.headline.starts_with("bench-01 · AMD EPYC 7B13"));
        assert!(h.headline.contains("virtualized (KVM)"));
        let value = |k: &str| {
            h.run
                .iter()
                .find(|r| r.key == k)
                .map(|r| r.value_html.clone())
        };
        assert_eq!(value("started").as_deref(), Some("2026-11-22T18:32:42Z"));
        assert_eq!(value("took").as_deref(), Some("41.3 s"));
        assert_eq!(
            value("measuring thread").as_deref(),
            Some("pinned to CPU 1")
        );
        assert!(value("time-stamp counter").is_some_and(|v| v.starts_with("2.45 GHz")));
        let titles: Vec<&str> = h.host.iter().map(|s| s.title.as_str()).collect();
        assert!(
            titles.starts_with(&["CPU", "Caches", "Memory"]),
            "{titles:?}"
        );
        assert_eq!(h.warnings.len(), 1);
    }
}
