//! Snapshot tests of every format on the fixed run, plus the properties a snapshot cannot
//! show (JSON round-trips, CSV row count, no ANSI escapes without colour).

use super::{Format, render, render_view};
use crate::model::RunRecord;
use crate::model::fixture::sample_run;

fn rendered(format: Format) -> String {
    render(&sample_run(), format, false).unwrap()
}

#[test]
fn fixture_is_deterministic() {
    assert_eq!(sample_run(), sample_run());
}

/// The complete tables (`--full`).
fn full_text(run: &RunRecord) -> String {
    render_view(run, Format::Text, false, true).unwrap()
}

#[test]
fn text_snapshot() {
    insta::assert_snapshot!("text", full_text(&sample_run()));
}

/// `test: "snapshot", format;` …: one test each, the snapshot of `rendered(format)` (the
/// `rendered` of the module that uses it).
macro_rules! snapshot_tests {
    ($($test:ident: $name:literal, $format:expr;)*) => {$(
        #[test]
        fn $test() {
            insta::assert_snapshot!($name, rendered($format));
        }
    )*};
}
pub(super) use snapshot_tests;

snapshot_tests! {
    concise_text_snapshot: "text_concise", Format::Text;
    json_snapshot: "json", Format::Json;
    csv_snapshot: "csv", Format::Csv;
    markdown_snapshot: "markdown", Format::Markdown;
}

#[test]
fn json_parses_back_to_the_same_record() {
    let back: RunRecord = serde_json::from_str(&rendered(Format::Json)).unwrap();
    assert_eq!(back, sample_run());
}

#[test]
fn csv_has_one_row_per_metric_point_and_unmeasured_experiment() {
    let run = sample_run();
    let out = rendered(Format::Csv);
    let mut reader = ::csv::Reader::from_reader(out.as_bytes());
    assert_eq!(reader.headers().unwrap().len(), super::csv::HEADER.len());
    let rows: Vec<::csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    // 3 metrics of os.syscall + 3 points of mem.latency + skipped + failed.
    assert_eq!(rows.len(), 8);
    assert!(
        rows.iter()
            .all(|r| r.len() == super::csv::HEADER.len() && r[0] == run.id)
    );
    let skipped: Vec<_> = rows.iter().filter(|r| &r[2] == "skipped").collect();
    assert_eq!(skipped.len(), 1);
    assert!(skipped[0].iter().skip(3).all(str::is_empty));
    let point = rows.iter().find(|r| &r[1] == "mem.latency").unwrap();
    assert_eq!((&point[3], &point[20]), ("load latency", "16384"));
}

#[test]
fn no_escapes_without_color_and_bold_with_it() {
    let run = sample_run();
    for format in [Format::Text, Format::Json, Format::Csv, Format::Markdown] {
        assert!(!render(&run, format, false).unwrap().contains('\x1b'));
    }
    assert!(
        render(&run, Format::Text, true)
            .unwrap()
            .contains("\x1b[1m")
    );
}

#[test]
fn text_shows_skip_failure_noise_and_units() {
    let out = full_text(&sample_run());
    for needle in [
        "== os.syscall — System call cost ==",
        "skipped: O_DIRECT is not supported on tmpfs (/tmp) — pass --dir",
        "failed: creating a pipe failed",
        "noisy (CV",
        "1 outlier",
        "started 2026-11-22T18:32:42Z",
        "~126 cyc",
        "16 KiB",
    ] {
        assert!(out.contains(needle), "missing {needle:?} in\n{out}");
    }
}

/// The fixture with the machine-state probe's records on os.syscall: a clock that moved,
/// core cycles and two rounds.
fn probed_run() -> RunRecord {
    let mut run = sample_run();
    let r = &mut run.results[0];
    r.machine = Some(crate::model::MachineState {
        core_ghz_start: 4.0,
        core_ghz_end: 3.0,
        throughput_start: 14.0,
        throughput_end: 14.0,
        syscall_ns_start: 160.0,
        syscall_ns_end: 210.0,
        steal_ns: 0,
        involuntary_switches: 0,
        runqueue_wait_ns: 0,
        stable: false,
        reason: Some("machine speed changed -25% during this experiment".into()),
        between: None,
        cache: None,
    });
    for m in &mut r.metrics {
        let mut c = m.summary;
        c.median *= 3.5;
        m.core_cycles = Some(c);
        m.rounds = Some(crate::model::RoundStats {
            medians: vec![m.summary.median, m.summary.median * 1.1],
            median: m.summary.median,
            cv: 0.067,
        });
    }
    run
}

#[test]
fn probed_results_show_both_cycle_kinds_round_spread_and_the_machine() {
    let run = probed_run();
    let text = full_text(&run);
    for want in [
        "TSC cycles",
        "core cycles",
        "median of rounds",
        "round CV",
        "6.7%",
        "machine UNSTABLE (3.50 GHz core clock): machine speed changed -25%",
    ] {
        assert!(text.contains(want), "text lacks {want:?}:\n{text}");
    }
    // The run without probe data keeps the old table.
    let plain = full_text(&sample_run());
    assert!(!plain.contains("core cycles") && !plain.contains("machine UNSTABLE"));
    let md = render(&run, Format::Markdown, false).unwrap();
    assert!(md.contains("| core cycles |") && md.contains("machine UNSTABLE"));
    let csv = render(&run, Format::Csv, false).unwrap();
    let mut reader = ::csv::Reader::from_reader(csv.as_bytes());
    let row = reader.records().next().unwrap().unwrap();
    assert_eq!(&row[24], "3.5");
    assert_eq!(&row[25], "false");
    assert!(!row[21].is_empty() && !row[23].is_empty());
}
