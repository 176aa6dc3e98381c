//! `sysmeter compare A B`: load two runs — or two sets of runs, `A1,A2,A3 B1,B2,B3` — from
//! the store or from JSON files, compare every shared metric (`stats::compare`), print the
//! result (`report::compare_text`) and turn a regression under `--fail-above` into exit
//! status 1.

mod diag;

use std::io::IsTerminal;
use std::path::Path;

use super::infile::read_record;
use super::outfile::OutFile;
use super::run_history::load_history;
use super::{Outcome, Stream, UsageError, console, emit, open_pages, open_store_to_read};
use crate::cli::CompareArgs;
use crate::model::RunRecord;
use crate::report::compare_text::{self, CompareFormat, TextLayout};
use crate::stats::compare::{CompareOptions, compare_sets};
use crate::store::{Store, StoreError};

/// Compare two runs, or two sets of runs.
pub fn compare(args: &CompareArgs) -> anyhow::Result<Outcome> {
    let (refs_a, refs_b) = (split_set(&args.a, "A")?, split_set(&args.b, "B")?);
    check_stdin(&refs_a, &refs_b)?;
    // Output files are checked before the runs are loaded, by the one output rule.
    let (html, markdown) = open_pages(&args.pages)?;
    let to_stdout = [&html, &markdown]
        .iter()
        .any(|o| o.as_ref().is_some_and(OutFile::is_stdout));
    let mut store = None;
    let (a, b) = load_sides(&refs_a, &refs_b, args, &mut store)?;
    if diag::is_diagnosis(&a, &b) {
        return diag::compare(&a, &b, args, (html, markdown));
    }
    let opts = options(args);
    let (side_a, side_b): (Vec<&RunRecord>, Vec<&RunRecord>) =
        (a.iter().collect(), b.iter().collect());
    let history = match (&store, args.no_history) {
        (Some(store), false) => side_history(store, &side_a, &side_b),
        _ => Vec::new(),
    };
    let history: Vec<&RunRecord> = history.iter().collect();
    let cmp = compare_sets(&side_a, &side_b, &history, &opts, args.fail_above);
    let (first_a, first_b) = (&a[0], &b[0]);
    if cmp.metrics.is_empty() && args.fail_above.is_some() {
        return Err(UsageError(format!(
            "runs {} and {} share no metric, so --fail-above cannot check anything; compare \
             runs of the same experiments",
            first_a.id, first_b.id
        ))
        .into());
    }
    if let Some(out) = html {
        let page = compare_text::html::render(&cmp, first_a, first_b)?;
        write(out, &page, "HTML comparison")?;
    }
    if let Some(out) = markdown {
        let layout = TextLayout::default();
        let text = compare_text::render(&cmp, first_a, first_b, CompareFormat::Markdown, layout)?;
        write(out, &text, "Markdown comparison")?;
    }
    if !to_stdout {
        let layout = TextLayout {
            color: Stream::Stdout.color(),
            width: (!args.full).then(terminal_width).flatten(),
        };
        let text = compare_text::render(&cmp, first_a, first_b, args.format, layout)?;
        emit(&text)?;
    }
    let regressions = cmp.regressions().count();
    if regressions > 0 {
        super::console::errln(format!(
            "regression: {regressions} metric(s) slower than --fail-above {} with significance",
            crate::model::units::percent(args.fail_above.unwrap_or_default())
        ));
        return Ok(Outcome::Code(1));
    }
    Ok(Outcome::Success)
}

/// The statistical options of a comparison of bench runs.
fn options(args: &CompareArgs) -> CompareOptions {
    CompareOptions {
        threshold: args.threshold,
        seed: args.seed,
        ..CompareOptions::default()
    }
}

/// The stored runs that tell the between-run noise of each side that is one run, other than
/// the runs compared (`run_history::load_history`, the one rule for a host's runs).
fn side_history(store: &Store, a: &[&RunRecord], b: &[&RunRecord]) -> Vec<RunRecord> {
    let single: Vec<&RunRecord> = [a, b]
        .into_iter()
        .filter_map(|side| match side {
            [run] => Some(*run),
            _ => None,
        })
        .collect();
    let compared: Vec<&str> = a.iter().chain(b).map(|r| r.id.as_str()).collect();
    load_history(store, &single, &compared, None)
}

/// The columns the text may take: `$COLUMNS` when it holds a usable width (40 or more); else,
/// on a terminal, 100 (wide enough for the table's columns, short enough for a split
/// terminal); else (a pipe or a file) no limit, so that each row stays one line for `grep`.
fn terminal_width() -> Option<usize> {
    let columns = std::env::var("COLUMNS").ok();
    let set = columns
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|c| *c >= 40);
    set.or_else(|| std::io::stdout().is_terminal().then_some(100))
}

/// Writes `content` to `out` and, for a file, says so on stderr.
fn write(out: OutFile, content: &str, what: &str) -> anyhow::Result<()> {
    let (stdout, path) = (out.is_stdout(), out.path().to_path_buf());
    out.write(content)?;
    if !stdout {
        console::errln(format!("wrote the {what} to {}", path.display()));
    }
    Ok(())
}

/// The run references of one side: a comma-separated list (one reference is a set of one).
fn split_set(arg: &str, side: &str) -> Result<Vec<String>, UsageError> {
    let refs: Vec<String> = arg.split(',').map(|r| r.trim().to_string()).collect();
    if refs.iter().any(String::is_empty) {
        return Err(UsageError(format!(
            "{side} `{arg}` has an empty run reference; write one run, or runs separated by \
             single commas such as A1,A2,A3"
        )));
    }
    Ok(refs)
}

/// Standard input holds one run: it may be one side on its own, never part of a set, and
/// not both sides.
fn check_stdin(a: &[String], b: &[String]) -> Result<(), UsageError> {
    let stdin = |side: &[String]| side.iter().filter(|r| *r == "-").count();
    if stdin(a) + stdin(b) > 1 {
        return Err(UsageError(
            "A and B cannot both be `-` (standard input holds one run); save one to a file".into(),
        ));
    }
    if stdin(a) + stdin(b) == 1 && (a.len() > 1 || b.len() > 1) {
        return Err(UsageError(
            "`-` (standard input) cannot be used when comparing sets of runs; save that run to \
             a file and list the file in the set"
                .into(),
        ));
    }
    Ok(())
}

/// Loads every run of a side; the same run twice in a set is refused (it would fake
/// agreement between runs).
fn load_set(
    refs: &[String],
    side: &str,
    args: &CompareArgs,
    store: &mut Option<Store>,
) -> anyhow::Result<Vec<RunRecord>> {
    let mut runs: Vec<RunRecord> = Vec::with_capacity(refs.len());
    for reference in refs {
        let run = load(reference, args, store)?;
        if runs.iter().any(|r| r.id == run.id) {
            return Err(UsageError(format!(
                "run {} appears twice in set {side} ({reference}); list each run once",
                run.id
            ))
            .into());
        }
        runs.push(run);
    }
    Ok(runs)
}

/// The runs of both sides, all of one kind ([`check_kinds`]).
fn load_sides(
    refs_a: &[String],
    refs_b: &[String],
    args: &CompareArgs,
    store: &mut Option<Store>,
) -> anyhow::Result<(Vec<RunRecord>, Vec<RunRecord>)> {
    let a = load_set(refs_a, "A", args, store)?;
    let b = load_set(refs_b, "B", args, store)?;
    check_kinds(&a, &b)?;
    Ok((a, b))
}

/// Every run compared is of one kind: a `scale` run and a `locks` run share no metric, and
/// comparing them would report "0 slower, 0 faster, 0 no change" as if nothing changed.
fn check_kinds(a: &[RunRecord], b: &[RunRecord]) -> Result<(), UsageError> {
    let first = a.first().or(b.first());
    let Some(first) = first else {
        return Ok(());
    };
    let other = a.iter().chain(b).find(|r| r.kind != first.kind);
    match other {
        None => Ok(()),
        Some(other) => {
            let kind = first.kind.as_str();
            Err(UsageError(format!(
                "run {} is a {kind} run and run {} a {} run: compare needs runs of one kind; \
                 name two runs of the same kind, e.g. `sysmeter compare latest:{kind}~1 \
                 latest:{kind}`",
                first.id,
                other.id,
                other.kind.as_str()
            )))
        }
    }
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
        None => store.insert(open_store_to_read(&args.pages.db)?),
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
    read_record(
        path,
        "give a run id, or a file written by `sysmeter show RUN --format json`",
    )
}

#[cfg(test)]
mod tests {
    use super::{check_kinds, check_stdin, is_file_argument, split_set};
    use crate::model::RunKind;
    use crate::model::fixture::sample_run;

    #[test]
    fn files_are_told_from_run_references() {
        for file in ["-", "base.json", "./base", "/tmp/x", "runs/a.JSON.json"] {
            assert!(is_file_argument(file), "{file}");
        }
        for run in ["latest", "latest~1", "20261122T183242Z-3f9a", "2026"] {
            assert!(!is_file_argument(run), "{run}");
        }
    }

    #[test]
    fn sets_are_comma_lists_and_stdin_is_never_in_one() {
        assert_eq!(split_set("a", "A").unwrap(), ["a"]);
        assert_eq!(split_set("a1,a2, a3", "A").unwrap(), ["a1", "a2", "a3"]);
        let e = split_set("a1,,a3", "A").unwrap_err().to_string();
        assert!(e.contains("empty run reference"), "{e}");
        assert!(split_set("a1,", "B").is_err());
        let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert!(check_stdin(&v(&["-"]), &v(&["b"])).is_ok());
        assert!(check_stdin(&v(&["a1", "a2"]), &v(&["b1", "b2"])).is_ok());
        assert!(check_stdin(&v(&["-"]), &v(&["-"])).is_err());
        let e = check_stdin(&v(&["-"]), &v(&["b1", "b2"]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("sets of runs"), "{e}");
        assert!(check_stdin(&v(&["a1", "-"]), &v(&["b"])).is_err());
    }

    #[test]
    fn runs_of_two_kinds_are_refused_with_the_fix() {
        let bench = sample_run();
        let mut scale = sample_run();
        scale.id = "20261123T090000Z-5ca1".into();
        scale.kind = RunKind::Scale;
        let one = std::slice::from_ref(&bench);
        assert!(check_kinds(one, one).is_ok());
        let e = check_kinds(&[scale], one).unwrap_err().to_string();
        assert_eq!(
            e,
            "run 20261123T090000Z-5ca1 is a scale run and run 20261122T183242Z-3f9a a bench \
             run: compare needs runs of one kind; name two runs of the same kind, e.g. \
             `sysmeter compare latest:scale~1 latest:scale`"
        );
    }
}
