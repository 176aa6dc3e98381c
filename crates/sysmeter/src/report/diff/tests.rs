//! The pages of a comparison of diagnosis runs: verdicts lead, figures come from the
//! comparison, the differential flame graph holds both colours where functions changed.

use super::{Sides, html, render};
use crate::model::fixture::profile_round;
use crate::model::tally::Tally;
use crate::report::compare_text::CompareFormat;
use crate::stats::diff::{DiagDiff, diff};

fn tally(counts: &[(&str, f64)]) -> Tally {
    profile_round(counts.iter().map(|(k, n)| (k.to_string(), *n)))
}

fn compared() -> (DiagDiff, Sides) {
    let a = tally(&[
        ("main;grows", 1000.0),
        ("main;shrinks", 1000.0),
        ("main;same", 1000.0),
    ]);
    let b = tally(&[
        ("main;grows", 2000.0),
        ("main;shrinks", 500.0),
        ("main;same", 1010.0),
    ]);
    let sides = Sides {
        a: vec!["run-a".into()],
        b: vec!["run-b".into()],
        kind: "profile".into(),
    };
    (diff(&[a], &[b], None), sides)
}

#[test]
fn text_and_markdown_lead_with_the_verdicts() {
    let (d, sides) = compared();
    let text = render(&d, &sides, CompareFormat::Text, None);
    assert!(text.contains("per run of the command"), "{text}");
    let own = text
        .split("CPU samples per function (self)")
        .nth(1)
        .unwrap();
    let rows: Vec<&str> = own
        .lines()
        .filter(|l| l.contains("grows") || l.contains("same"))
        .collect();
    assert!(
        rows[0].contains("grew") && rows[0].contains("grows"),
        "{own}"
    );
    assert!(own.contains("shrank"), "{own}");
    assert!(
        own.lines()
            .any(|l| l.contains("no change") && l.contains("same")),
        "{own}"
    );
    let md = render(&d, &sides, CompareFormat::Markdown, None);
    assert!(
        md.contains("| grew | grows | 1000 | 2000 | +1000 (+100%)"),
        "{md}"
    );
}

/// The element of the JSON array `list` whose `field` is `value`.
fn with<'a>(list: &'a serde_json::Value, field: &str, value: &str) -> &'a serde_json::Value {
    let mut all = list.as_array().unwrap().iter();
    all.find(|e| e[field] == value).unwrap()
}

#[test]
fn json_holds_every_key_with_its_interval() {
    let (d, sides) = compared();
    let json: serde_json::Value =
        serde_json::from_str(&render(&d, &sides, CompareFormat::Json, None)).unwrap();
    assert_eq!(json["kind"], "profile");
    let own = with(&json["tables"], "name", "CPU samples per function (self)");
    let grows = with(&own["keys"], "key", "grows");
    assert_eq!(grows["verdict"], "grew");
    assert_eq!(grows["change"], 1000.0);
    assert!(grows["interval"]["low"].as_f64().unwrap() > 0.0);
    assert_eq!(grows["interval"]["basis"], "samples");
}

#[test]
fn the_flame_graph_is_red_where_a_function_grew_and_blue_where_it_shrank() {
    let (d, sides) = compared();
    let page = html::render(&d, &sides);
    let svg = page.split("<svg").nth(1).unwrap();
    let frame = |name: &str| {
        let at = svg.find(&format!("<title>{name}:")).unwrap();
        svg[at..]
            .split("fill=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap()
            .to_string()
    };
    assert!(frame("grows").starts_with("hsl(0,"), "{}", frame("grows"));
    assert!(
        frame("shrinks").starts_with("hsl(220,"),
        "{}",
        frame("shrinks")
    );
    assert_eq!(frame("same"), "#ddd");
    // main grew inclusively (it holds `grows`) but not by itself: grey, not red.
    let main = svg.find("<title>main</title>").unwrap();
    let main = svg[main..].split("</g>").next().unwrap();
    assert!(main.contains("fill=\"#ddd\""), "{main}");
    assert!(page.contains("<tr class=\"grew\">"));
}
