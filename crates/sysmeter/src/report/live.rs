//! What `sysmeter live` serves of a [`LiveView`]: the page (`templates/live.html`: one file,
//! inline CSS and JS, no CDN, so it works offline; it polls `/api/snapshot` once a second
//! and writes every text with `textContent`, never as HTML), the JSON of the view, and the
//! view's counters in the OpenMetrics text format for `/metrics` (the same subset
//! `report::openmetrics` uses: parses as Prometheus 0.0.4 and OpenMetrics 1.0).
//!
//! Pure: strings from the view; no I/O. Depends on `model::live`.

use std::fmt::Write;

use crate::model::live::LiveView;

/// The live page.
pub const PAGE: &str = include_str!("../../templates/live.html");

/// The view as JSON.
pub fn json(view: &LiveView) -> String {
    serde_json::to_string(view).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
}

/// A label value with `\`, `"` and newlines escaped.
fn label(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// The counters of `view` (its window's threads and system calls, and the samples since
/// the start), ending with `# EOF`.
pub fn metrics(view: &LiveView) -> String {
    let mut out = String::new();
    let family = |out: &mut String, name: &str, kind: &str, help: &str| {
        let _ = writeln!(out, "# TYPE {name} {kind}\n# HELP {name} {help}");
    };
    family(
        &mut out,
        "sysmeter_live_cpu_samples",
        "counter",
        "CPU-clock samples of the observed program since observing began.",
    );
    let _ = writeln!(
        out,
        "sysmeter_live_cpu_samples_total {}",
        view.samples_total
    );
    family(
        &mut out,
        "sysmeter_live_thread_cpu_share",
        "gauge",
        "Share of the window each thread spent on a CPU.",
    );
    for t in &view.threads {
        let _ = writeln!(
            out,
            "sysmeter_live_thread_cpu_share{{tid=\"{}\",name=\"{}\"}} {}",
            t.tid,
            label(&t.name),
            t.cpu_share
        );
    }
    family(
        &mut out,
        "sysmeter_live_syscalls",
        "gauge",
        "System calls of the observed program in the window, by call.",
    );
    for s in &view.syscalls {
        let _ = writeln!(
            out,
            "sysmeter_live_syscalls{{call=\"{}\"}} {}",
            label(&s.name),
            s.count
        );
    }
    out.push_str("# EOF\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::live::{CountRow, ThreadRow};

    #[test]
    fn the_page_loads_nothing_from_elsewhere() {
        for bad in ["<script src", "<link", "http://", "https://", "@import"] {
            let lower = PAGE.to_lowercase();
            // The SVG namespace is a name, not a load.
            let rest = lower.replace("http://www.w3.org/2000/svg", "");
            assert!(!rest.contains(bad), "the page holds {bad}");
        }
        assert!(!PAGE.contains("innerHTML"), "text is written as text");
    }

    #[test]
    fn metrics_escape_labels_and_end_with_eof() {
        let view = LiveView {
            samples_total: 12,
            threads: vec![ThreadRow {
                tid: 3,
                name: "a\"b\\".into(),
                cpu_share: 0.5,
                ..ThreadRow::default()
            }],
            syscalls: vec![CountRow {
                name: "read".into(),
                count: 9,
            }],
            ..LiveView::default()
        };
        let text = metrics(&view);
        assert!(text.contains("sysmeter_live_cpu_samples_total 12"));
        assert!(text.contains(r#"name="a\"b\\""#), "{text}");
        assert!(text.contains(r#"sysmeter_live_syscalls{call="read"} 9"#));
        assert!(text.ends_with("# EOF\n"));
    }
}
