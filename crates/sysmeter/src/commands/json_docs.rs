//! docs/json-schema.md checked against the code: every example marked `<!-- example: KIND -->`
//! reads into the type the command writes and serialises back to the same document, and the
//! command's real output on the fixture run (a fleet built from it, for `fleet`) has exactly
//! the documented fields. Test-only.

use std::collections::BTreeSet;
use std::path::Path;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::history::listing_json;
use super::list::{ListEntry, entries};
use crate::model::RunRecord;
use crate::model::fixture::sample_run;
use crate::report::compare_text::{self, CompareDocument, CompareFormat};
use crate::report::fleet::{self, FleetDocument, tests::sample_fleet};
use crate::stats::compare::{CompareOptions, compare_runs};
use crate::store::RunListing;

/// The JSON examples of the schema page, by the kind named in their marker.
fn examples() -> Vec<(String, Value)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/json-schema.md");
    let doc = std::fs::read_to_string(&path).expect("docs/json-schema.md is readable");
    let mut out = Vec::new();
    let mut rest = doc.as_str();
    while let Some(i) = rest.find("<!-- example: ") {
        rest = &rest[i + "<!-- example: ".len()..];
        let kind = rest[..rest.find(" -->").expect("marker closes")].to_string();
        let start = rest
            .find("```json\n")
            .expect("a json block follows the marker")
            + 8;
        let len = rest[start..].find("\n```").expect("the json block closes");
        let value = serde_json::from_str(&rest[start..start + len])
            .unwrap_or_else(|e| panic!("the {kind} example is not JSON: {e}"));
        out.push((kind, value));
        rest = &rest[start + len..];
    }
    out
}

fn example(kind: &str) -> Value {
    examples()
        .into_iter()
        .find(|(k, _)| k == kind)
        .map(|(_, v)| v)
        .unwrap_or_else(|| panic!("docs/json-schema.md has no `example: {kind}`"))
}

/// Reads `doc` as `T` and writes it back: it must be the same document.
fn round_trips<T: Serialize + DeserializeOwned>(kind: &str, doc: &Value) {
    let typed: T = serde_json::from_value(doc.clone())
        .unwrap_or_else(|e| panic!("the {kind} example does not read as the code's type: {e}"));
    let back = serde_json::to_value(&typed).expect("serialises");
    assert_eq!(&back, doc, "the {kind} example changes on a round trip");
}

/// Every object key path in `v` (`results[].metrics[].summary.median`), arrays merged.
fn key_paths(v: &Value, prefix: &str, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(map) => {
            for (k, x) in map {
                let p = format!("{prefix}.{k}");
                out.insert(p.clone());
                key_paths(x, &p, out);
            }
        }
        Value::Array(items) => {
            for x in items {
                key_paths(x, &format!("{prefix}[]"), out);
            }
        }
        _ => {}
    }
}

fn paths(v: &Value) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    key_paths(v, "", &mut out);
    out
}

/// The documented fields must all exist in the real output, and the real output's fields
/// must all be documented wherever the example shows that object at all.
fn same_fields(kind: &str, documented: &Value, real: &Value) {
    let (d, r) = (paths(documented), paths(real));
    let undocumented: Vec<&String> = r
        .iter()
        .filter(|p| !d.contains(*p))
        .filter(|p| {
            p.rsplit_once('.').is_some_and(|(parent, _)| {
                d.contains(parent) || parent.is_empty() || parent == "[]"
            })
        })
        .collect();
    let missing: Vec<&String> = d.difference(&r).collect();
    assert!(
        undocumented.is_empty(),
        "{kind}: fields in the output missing from the example: {undocumented:?}"
    );
    assert!(
        missing.is_empty(),
        "{kind}: fields in the example the output lacks: {missing:?}"
    );
}

#[test]
fn the_run_example_is_a_run_record() {
    let doc = example("run");
    round_trips::<RunRecord>("run", &doc);
    // As rendered: with the run-to-run intervals (`stats::run_to_run`), here of this run only.
    let mut run = sample_run();
    crate::stats::run_to_run::annotate(&mut run, &[]);
    let real = serde_json::to_value(run).expect("serialises");
    same_fields("run", &doc, &real);
}

#[test]
fn the_compare_example_is_a_compare_document() {
    let doc = example("compare");
    round_trips::<CompareDocument>("compare", &doc);
    let a = sample_run();
    let mut b = sample_run();
    b.id = "20261123T090000Z-77aa".into();
    b.host.kernel = "6.9.0-12-generic".into();
    b.config.profile = "quick".into();
    b.results[0].metrics.remove(0);
    let cmp = compare_runs(&a, &b, &CompareOptions::default(), Some(0.05));
    let text = compare_text::render(&cmp, &a, &b, CompareFormat::Json, Default::default())
        .expect("renders");
    let real: Value = serde_json::from_str(&text).expect("compare writes JSON");
    same_fields("compare", &doc, &real);
}

#[test]
fn the_history_example_is_a_listing() {
    let doc = example("history");
    round_trips::<Vec<RunListing>>("history", &doc);
    let run = sample_run();
    let listing = RunListing {
        id: run.id,
        kind: "bench".into(),
        started_ns: run.started_ns,
        finished_ns: run.finished_ns,
        interrupted: false,
        hostname: run.host.hostname,
        experiments: 4,
        ok: 2,
        skipped: 1,
        failed: 1,
        tool_version: run.tool_version,
    };
    let real = Value::Array(vec![listing_json(&listing)]);
    same_fields("history", &doc, &real);
}

#[test]
fn the_list_example_is_the_experiment_list() {
    let doc = example("list");
    round_trips::<Vec<ListEntry>>("list", &doc);
    let real = serde_json::to_value(entries()).expect("serialises");
    same_fields("list", &doc, &real);
    // The documented entries are real experiments, as the code describes them.
    let listed: Vec<ListEntry> = serde_json::from_value(doc).expect("read above");
    for e in listed {
        assert!(
            entries().contains(&e),
            "{} is not listed as documented",
            e.id
        );
    }
}

#[test]
fn the_fleet_example_is_a_fleet_document() {
    let doc = example("fleet");
    round_trips::<FleetDocument>("fleet", &doc);
    let (view, hosts) = sample_fleet();
    let real = serde_json::to_value(fleet::document(&view, &hosts)).expect("serialises");
    same_fields("fleet", &doc, &real);
}

#[test]
fn every_output_has_an_example() {
    let kinds: BTreeSet<String> = examples().into_iter().map(|(k, _)| k).collect();
    for kind in ["run", "compare", "history", "list", "fleet"] {
        assert!(
            kinds.contains(kind),
            "no `example: {kind}` in docs/json-schema.md"
        );
    }
}
