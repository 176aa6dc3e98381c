//! speedscope export: the run's weighted stacks as speedscope's JSON file format
//! (<https://www.speedscope.app/file-format-schema.json>), which speedscope.app opens in the
//! user's browser without uploading it, as do the viewers built on it. One `sampled`
//! profile per measured quantity, all sharing one frame table: `profile` gives on-CPU
//! nanoseconds and, with `--off-cpu`/`--both`, off-CPU nanoseconds; `alloc` the bytes
//! allocated and the bytes still live at the end. Depends on `model`, serde_json and the
//! neutral `stacks` only.

use serde_json::{Value, json};

use super::ExportError;
use super::stacks::Stacks;
use super::stacks_of;
use crate::model::{RunKind, RunRecord};

/// The `$schema` every speedscope file names.
pub const SCHEMA: &str = "https://www.speedscope.app/file-format-schema.json";

/// The run as a speedscope JSON file.
pub fn encode(run: &RunRecord) -> Result<Vec<u8>, ExportError> {
    let profiles: &[(&str, &str)] = match run.kind {
        RunKind::Profile => &[("cpu", "on-CPU time"), ("off_cpu", "off-CPU time")],
        RunKind::Alloc => &[
            ("alloc_space", "bytes allocated"),
            ("inuse_space", "bytes live at the end"),
        ],
        _ => {
            return Err(ExportError::WrongKind {
                format: "speedscope",
                kind: run.kind.as_str().to_string(),
                fits: "profile and alloc",
            });
        }
    };
    let Some(stacks) = stacks_of::stacks(run) else {
        return Err(ExportError::Missing(format!(
            "run {} has no stacks",
            run.id
        )));
    };
    let stacks = stacks?;
    let file = file(&stacks, profiles, &run.id);
    serde_json::to_vec(&file)
        .map_err(|e| ExportError::Missing(format!("cannot write the speedscope file: {e}")))
}

/// The file: shared frames, then one sampled profile per value type of `wanted` the stacks
/// have (`(value type, title)`).
fn file(stacks: &Stacks, wanted: &[(&str, &str)], run_id: &str) -> Value {
    let frames: Vec<Value> = stacks
        .frames
        .iter()
        .map(|f| {
            let mut frame = json!({ "name": f.function });
            if let Some(file) = f.file.as_ref().or(f.module.as_ref()) {
                frame["file"] = json!(file);
            }
            if let Some(line) = f.line {
                frame["line"] = json!(line);
            }
            frame
        })
        .collect();
    let profiles: Vec<Value> = wanted
        .iter()
        .filter_map(|&(name, title)| Some(sampled(stacks, stacks.type_index(name)?, title)))
        .collect();
    json!({
        "$schema": SCHEMA,
        "name": format!("sysmeter run {run_id}"),
        "exporter": format!("sysmeter {}", env!("CARGO_PKG_VERSION")),
        "activeProfileIndex": 0,
        "shared": { "frames": frames },
        "profiles": profiles,
    })
}

/// One `sampled` profile of value `index`: stacks root first, as speedscope reads them,
/// weighted by that value; stacks of weight 0 left out.
fn sampled(stacks: &Stacks, index: usize, title: &str) -> Value {
    let unit = stacks.types[index].unit;
    let (mut samples, mut weights) = (Vec::new(), Vec::new());
    for s in &stacks.samples {
        let weight = s.values[index];
        if weight > 0 {
            samples.push(s.stack.iter().rev().copied().collect::<Vec<_>>());
            weights.push(weight);
        }
    }
    let total: i64 = weights.iter().sum();
    json!({
        "type": "sampled",
        "name": title,
        "unit": unit,
        "startValue": 0,
        "endValue": total,
        "samples": samples,
        "weights": weights,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::export::stacks::{Frame, ValueType};

    #[test]
    fn samples_are_root_first_and_zero_weights_left_out() {
        let vt = |name| ValueType {
            name,
            unit: "nanoseconds",
        };
        let mut stacks = Stacks::new(vec![vt("cpu"), vt("off_cpu")]);
        let (leaf, root) = (Frame::from_label("leaf (a.c:3)"), Frame::from_label("main"));
        stacks.add(&[leaf.clone(), root.clone()], vec![5, 0]);
        stacks.add(&[root], vec![0, 9]);
        let f = file(&stacks, &[("cpu", "on"), ("off_cpu", "off")], "r");
        assert_eq!(f["$schema"], SCHEMA);
        assert_eq!(f["shared"]["frames"][0]["line"], 3);
        assert_eq!(f["profiles"][0]["samples"], json!([[1, 0]]));
        assert_eq!(f["profiles"][0]["endValue"], 5);
        assert_eq!(f["profiles"][1]["weights"], json!([9]));
    }
}
