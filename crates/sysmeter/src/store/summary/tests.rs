//! A result stored as its summary and read back: statistics to `DIGITS` significant digits,
//! cycles rebuilt from their factor, series points with their median and interval, no
//! samples, the methodology left out; and damaged bytes refused.

use super::{DIGITS, decode, encode, medians};
use crate::model::fixture::sample_run;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= b.abs() * 10f64.powi(1 - DIGITS as i32)
}

#[test]
fn a_summary_keeps_what_reports_need_and_drops_the_samples() {
    let run = sample_run();
    let r = &run.results[0];
    assert!(!r.metrics[0].samples.is_empty(), "the fixture has samples");
    let back = decode(&encode(r).expect("encode")).expect("decode");
    assert_eq!(back.metrics.len(), r.metrics.len());
    for (a, b) in back.metrics.iter().zip(&r.metrics) {
        assert_eq!(
            (&a.name, a.unit, a.summary.n),
            (&b.name, b.unit, b.summary.n)
        );
        assert!(a.samples.is_empty());
        for (x, y) in [
            (a.summary.median, b.summary.median),
            (a.summary.ci95.0, b.summary.ci95.0),
            (a.summary.p99, b.summary.p99),
        ] {
            assert!(close(x, y), "{x} vs {y}");
        }
        match (&a.cycles, &b.cycles) {
            (Some(x), Some(y)) => assert!(close(x.median, y.median), "{x:?} vs {y:?}"),
            (None, None) => {}
            other => panic!("cycles not kept: {other:?}"),
        }
    }
    assert_eq!(back.findings.len(), r.findings.len());
    for (a, b) in back.findings.iter().zip(&r.findings) {
        assert_eq!((&a.key, &a.text), (&b.key, &b.text));
        assert!(a.value.zip(b.value).is_none_or(|(x, y)| close(x, y)));
    }
    assert_eq!(back.about.title, r.about.title);
    assert!(back.about.methodology.is_empty());
    assert_eq!(back.series.len(), r.series.len());
    let (names, units, values) = medians(r);
    assert_eq!(names.len(), r.metrics.len());
    assert_eq!(units[0], r.metrics[0].unit.as_str());
    assert_eq!(values[0], Some(r.metrics[0].summary.median));
}

#[test]
fn damaged_bytes_are_refused() {
    let e = decode(b"not compressed").expect_err("refused");
    assert!(e.contains("zlib"), "{e}");
}
