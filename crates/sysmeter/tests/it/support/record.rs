//! Accessors of a run record in JSON: one experiment's result, a metric's median, an
//! artifact's text or JSON, the keys of the findings, what a finding says, the error of a failed result.

use serde_json::Value;

/// The result of experiment `id` in a run record (panics when it is missing).
pub fn result<'a>(run: &'a Value, id: &str) -> &'a Value {
    run["results"]
        .as_array()
        .and_then(|r| r.iter().find(|x| x["id"] == id))
        .unwrap_or_else(|| panic!("{id} missing from the run: {run}"))
}

/// The median of metric `name` of a result, if it has that metric.
pub fn median(result: &Value, name: &str) -> Option<f64> {
    result["metrics"]
        .as_array()?
        .iter()
        .find(|m| m["name"] == name)?["summary"]["median"]
        .as_f64()
}

/// The text of the artifact `name` of a result (panics naming the artifacts it has).
pub fn artifact<'a>(result: &'a Value, name: &str) -> &'a str {
    result["artifacts"]
        .as_array()
        .and_then(|a| a.iter().find(|x| x["name"] == name))
        .and_then(|x| x["content"].as_str())
        .unwrap_or_else(|| panic!("no {name} artifact in {}", result["artifacts"]))
}

/// The artifact `name` of a result, which must hold JSON, parsed.
pub fn artifact_json<T: serde::de::DeserializeOwned>(result: &Value, name: &str) -> T {
    let text = artifact(result, name);
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{name} is not JSON ({e}): {text}"))
}

/// Whether the metric `name` of a result is marked not a result (its `degenerate` verdict):
/// no finding quotes it (`Experiment::metric_findings`).
pub fn not_a_result(result: &Value, name: &str) -> bool {
    result["metrics"].as_array().is_some_and(|ms| {
        ms.iter()
            .any(|m| m["name"] == name && m["degenerate"].is_string())
    })
}

/// The finding `key` of a result, if it has one.
pub fn finding<'a>(result: &'a Value, key: &str) -> Option<&'a Value> {
    result["findings"]
        .as_array()?
        .iter()
        .find(|f| f["key"] == key)
}

/// Asserts that `finding` (one finding of a result, in JSON) says `part` in its text.
pub fn assert_says(finding: &Value, part: &str) {
    assert!(
        finding["text"].as_str().is_some_and(|t| t.contains(part)),
        "{finding}"
    );
}

/// The error of a result, which must have failed.
pub fn error_of(result: &Value) -> &str {
    assert_eq!(result["status"], "failed", "{result}");
    result["error"].as_str().unwrap_or("")
}

/// The keys of a result's findings, in order.
pub fn finding_keys(result: &Value) -> Vec<String> {
    result["findings"].as_array().map_or(vec![], |f| {
        f.iter()
            .filter_map(|x| x["key"].as_str().map(str::to_string))
            .collect()
    })
}
