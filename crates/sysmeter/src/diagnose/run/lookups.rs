//! Path lookups of a launched command, traced without stopping it: the `%file` system calls
//! through the tracepoint rings, the paths through uprobes on the C library. The tracer is
//! `trace`'s, handed in by the command as an
//! [`observe::lookups::StartLookups`](crate::diagnose::observe::lookups::StartLookups) (a
//! diagnosis never imports another); what it found arrives as a
//! [`LookupSummary`] of metric rows, findings and the paths artifact. Needs tracepoint
//! privileges and tracefs (the paths: root); otherwise the reason is reported instead, in
//! one line. Pure.

use crate::diagnose::observe::lookups::{LookupRow, LookupSummary};
use crate::model::{Artifact, Finding};

/// What was traced, or why nothing was.
#[derive(Debug, Clone)]
pub enum LookupCount {
    /// What the trace of the path-taking calls found.
    Traced(Box<LookupSummary>),
    /// Why the calls could not be traced.
    Unavailable(String),
}

/// The metric rows (name, unit, value, note) of a traced run.
pub fn metric_rows(l: &LookupCount) -> Vec<LookupRow> {
    match l {
        LookupCount::Traced(s) => s.rows.clone(),
        LookupCount::Unavailable(_) => Vec::new(),
    }
}

/// The findings about lookups.
pub fn findings(l: &LookupCount) -> Vec<Finding> {
    match l {
        LookupCount::Traced(s) => s.findings.clone(),
        LookupCount::Unavailable(why) => {
            let text = format!(
                "path lookups were not traced: {why}; sysmeter trace --backend ptrace counts them"
            );
            vec![Finding::new("lookups_not_counted", text, None)]
        }
    }
}

/// The `lookups` artifact (the most looked-up paths), when paths were read.
pub fn artifact(l: &LookupCount) -> Option<Artifact> {
    match l {
        LookupCount::Traced(s) => s.artifact.clone(),
        LookupCount::Unavailable(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_untraced_run_says_why_in_one_finding_and_has_no_rows() {
        let u = LookupCount::Unavailable("no tracefs".into());
        let f = findings(&u);
        assert_eq!((f.len(), f[0].key.as_str()), (1, "lookups_not_counted"));
        assert!(f[0].text.contains("no tracefs") && !f[0].text.contains('\n'));
        assert!(metric_rows(&u).is_empty() && artifact(&u).is_none());
    }

    #[test]
    fn a_traced_run_passes_the_summary_through() {
        let s = LookupSummary {
            rows: vec![(
                "path lookups",
                crate::model::Unit::Count,
                3.0,
                String::new(),
            )],
            findings: vec![Finding::new("lookups", "3 lookups".into(), Some(3.0))],
            artifact: None,
        };
        let l = LookupCount::Traced(Box::new(s));
        assert_eq!(metric_rows(&l).len(), 1);
        assert_eq!(findings(&l)[0].key, "lookups");
    }
}
