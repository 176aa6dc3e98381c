//! `sysmeter compare A B`: load two runs (from the store or from JSON files), compare every
//! shared metric (`stats::compare`), print the result (`report::compare_text`) and turn a
//! regression under `--fail-above` into exit status 1.

use std::io::Read;
use std::path::Path;

use super::{Outcome, Stream, UsageError, emit, open_store};
use crate::cli::CompareArgs;
use crate::model::{RunRecord, SCHEMA_VERSION};
use crate::report::compare_text;
use crate::stats::compare::{CompareOptions, compare_runs};
use crate::store::{Store, StoreError};

/// Compare two runs.
pub fn compare(args: &CompareArgs) -> anyhow::Result<Outcome> {
    if args.a == "-" && args.b == "-" {
        return Err(UsageError(
            "A and B cannot both be `-` (standard input holds one run); save one to a file".into(),
        )
        .into());
    }
    let mut store = None;
    let a = load(&args.a, args, &mut store)?;
    let b = load(&args.b, args, &mut store)?;
    let opts = CompareOptions {
        threshold: args.threshold,
        seed: args.seed,
        ..CompareOptions::default()
    };
    let cmp = compare_runs(&a, &b, &opts, args.fail_above);
    if cmp.metrics.is_empty() && args.fail_above.is_some() {
        return Err(UsageError(format!(
            "runs {} and {} share no metric, so --fail-above cannot check anything; compare \
             runs of the same experiments",
            a.id, b.id
        ))
        .into());
    }
    let text = compare_text::render(&cmp, &a, &b, args.format, Stream::Stdout.color())?;
    emit(&text)?;
    let regressions = cmp.regressions().count();
    if regressions > 0 {
        eprintln!(
            "regression: {regressions} metric(s) slower than --fail-above {} with significance",
            crate::model::units::percent(args.fail_above.unwrap_or_default())
        );
        return Ok(Outcome::Code(1));
    }
    Ok(Outcome::Success)
}

/// Whether a run argument names a JSON file rather than a stored run.
fn is_file_argument(reference: &str) -> bool {
    reference == "-" || reference.ends_with(".json") || reference.contains('/')
}

/// Loads `reference` from a JSON file or the store (opened on first use).
fn load(
    reference: &str,
    args: &CompareArgs,
    store: &mut Option<Store>,
) -> anyhow::Result<RunRecord> {
    if is_file_argument(reference) {
        return load_file(reference);
    }
    let store = match store {
        Some(s) => s,
        None => store.insert(open_store(&args.db)?),
    };
    store.load_run(reference).map_err(|e| match e {
        // A bare file name looks like a run reference; say how to name the file instead.
        StoreError::RunNotFound { .. } if Path::new(reference).is_file() => UsageError(format!(
            "{e}; to compare the file {reference}, write ./{reference}"
        ))
        .into(),
        e => e.into(),
    })
}

/// Reads a run record written by `--format json` from `path` (`-`: standard input).
fn load_file(path: &str) -> anyhow::Result<RunRecord> {
    let fix = "give a run id, or a file written by `sysmeter show RUN --format json`";
    let mut text = String::new();
    let read = if path == "-" {
        std::io::stdin().read_to_string(&mut text).map(|_| ())
    } else {
        std::fs::read_to_string(path).map(|t| text = t)
    };
    read.map_err(|e| UsageError(format!("cannot read {path}: {e}; {fix}")))?;
    let run: RunRecord = serde_json::from_str(&text)
        .map_err(|e| UsageError(format!("{path} is not a sysmeter run record ({e}); {fix}")))?;
    if run.schema > SCHEMA_VERSION {
        return Err(UsageError(format!(
            "{path} was written by a newer sysmeter (schema {}, this build knows {SCHEMA_VERSION}); \
             upgrade sysmeter",
            run.schema
        ))
        .into());
    }
    Ok(run)
}

#[cfg(test)]
mod tests {
    use super::is_file_argument;

    #[test]
    fn files_are_told_from_run_references() {
        for file in ["-", "base.json", "./base", "/tmp/x", "runs/a.JSON.json"] {
            assert!(is_file_argument(file), "{file}");
        }
        for run in ["latest", "latest~1", "20261122T183242Z-3f9a", "2026"] {
            assert!(!is_file_argument(run), "{run}");
        }
    }
}
