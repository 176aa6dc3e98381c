//! `sysmeter list`: the groups and experiments, one line each.

use crate::cli::{ListArgs, SimpleFormat};
use crate::experiments::{GROUPS, all};

use std::fmt::Write;

use super::{Outcome, emit};

/// Print the experiment list.
pub fn list(args: &ListArgs) -> anyhow::Result<Outcome> {
    let exps = all();
    let mut out = String::new();
    match args.format {
        SimpleFormat::Json => {
            let v: Vec<serde_json::Value> = exps
                .iter()
                .map(|e| {
                    let a = e.about();
                    serde_json::json!({
                        "id": e.id(),
                        "group": e.id().split('.').next(),
                        "title": a.title,
                        "measures": a.measures,
                    })
                })
                .collect();
            writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
        }
        SimpleFormat::Text => {
            for (group, about) in GROUPS {
                writeln!(out, "{group} — {about}")?;
                for e in exps
                    .iter()
                    .filter(|e| e.id().split('.').next() == Some(group))
                {
                    writeln!(out, "  {:<12} {}", e.id(), e.about().title)?;
                }
            }
            writeln!(
                out,
                "\nRun `sysmeter bench GROUP…` or `sysmeter bench --only ID`."
            )?;
        }
    }
    emit(&out)?;
    Ok(Outcome::Success)
}
