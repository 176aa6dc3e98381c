//! Snapshot and format tests of the OpenMetrics exposition on the fixture run.

use super::*;
use crate::model::fixture::sample_run;

#[test]
fn openmetrics_snapshot() {
    insta::assert_snapshot!("openmetrics", render(&sample_run()));
}

#[test]
fn label_values_are_escaped() {
    assert_eq!(escape_label(r#"a\b "q" c"#), r#"a\\b \"q\" c"#);
    assert_eq!(escape_label("two\nlines"), "two\\nlines");
    assert_eq!(
        escape_label(
            "two
lines"
        ),
        "two\\nlines"
    );
    let mut run = sample_run();
    run.host.hostname = "we\"ird\nhost".into();
    let out = render(&run);
    assert!(out.contains(r#"host="we\"ird\nhost""#), "{out}");
}

#[test]
fn every_line_is_metadata_or_a_well_formed_sample() {
    let out = render(&sample_run());
    assert!(out.ends_with("# EOF\n"));
    assert_eq!(out.matches("# EOF").count(), 1);
    let mut families = Vec::new();
    for line in out.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap();
            assert!(["gauge", "summary"].contains(&kind), "{line}");
            assert!(!families.contains(&name.to_string()), "family {name} twice");
            families.push(name.to_string());
            continue;
        }
        if line.starts_with('#') {
            assert!(line.starts_with("# HELP ") || line == "# EOF", "{line}");
            continue;
        }
        let name_end = line.find(['{', ' ']).unwrap();
        let name = &line[..name_end];
        assert!(name.starts_with("sysmeter_"), "{line}");
        assert!(
            name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
            "{line}"
        );
        // The sample belongs to the family declared last (families are contiguous).
        let family = families.last().unwrap();
        assert!(name.starts_with(family.as_str()), "{name} after {family}");
        let value = line.rsplit(' ').next().unwrap();
        assert!(value.parse::<f64>().is_ok() || value == "+Inf", "{line}");
    }
    assert!(families.contains(&"sysmeter_latency_seconds".to_string()));
    assert!(families.contains(&"sysmeter_curve_latency_seconds".to_string()));
}

#[test]
fn times_are_exported_in_seconds_with_the_median_as_quantile_half() {
    let run = sample_run();
    let null = &run.results[0].metrics[1];
    let out = render(&run);
    let line = out
        .lines()
        .find(|l| {
            l.starts_with("sysmeter_latency_seconds{")
                && l.contains("metric=\"null (getppid)\"")
                && l.contains("quantile=\"0.5\"")
        })
        .unwrap();
    let v: f64 = line.rsplit(' ').next().unwrap().parse().unwrap();
    assert!((v - null.summary.median * 1e-9).abs() < 1e-20, "{line}");
    let count = format!(
        "sysmeter_latency_seconds_count{{host=\"bench-01\",run=\"{}\",experiment=\"os.syscall\",metric=\"null (getppid)\"}} {}",
        run.id,
        number(null.summary.n as f64)
    );
    assert!(out.contains(&count), "{count}");
    assert_eq!(number(f64::INFINITY), "+Inf");
    assert_eq!(number(f64::NAN), "NaN");
    assert_eq!(number(16384.0), "16384");
    assert_eq!(scaled_number(51.3, -9), "5.13e-8");
    assert_eq!(scaled_number(-2000.0, -9), "-2e-6");
    assert_eq!(scaled_number(0.0, -9), "0");
}
