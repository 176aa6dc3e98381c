//! `sysmeter man`: one manual page, sysmeter(1), generated from the clap definitions: the
//! usual sections of the top-level command, then a COMMANDS section with every subcommand's
//! synopsis, description and options, then exit status, environment and files. The
//! committed docs/sysmeter.1 is this output; a test fails when it is stale.
//!
//! clap_mangen renders one page per command with `.SH` headings; the subcommand parts are
//! rendered by it and demoted under `.SS` here, so their formatting stays clap_mangen's.

use anyhow::Context;
use clap::CommandFactory;
use clap_mangen::Man;
use clap_mangen::roff::{Roff, bold, roman};

use super::{Outcome, emit};
use crate::cli::{Cli, ManArgs};

/// Print the man page (roff) on stdout.
pub fn man(_args: &ManArgs) -> anyhow::Result<Outcome> {
    let page = man_page().context("rendering the man page")?;
    emit(&String::from_utf8_lossy(&page))?;
    Ok(Outcome::Success)
}

/// The whole page as roff.
pub fn man_page() -> std::io::Result<Vec<u8>> {
    let mut cmd = Cli::command();
    cmd.build();
    let top = Man::new(cmd.clone());
    let mut out = Vec::new();
    top.render_title(&mut out)?;
    top.render_name_section(&mut out)?;
    top.render_synopsis_section(&mut out)?;
    top.render_description_section(&mut out)?;
    top.render_options_section(&mut out)?;
    out.extend(b".SH COMMANDS\n");
    for sub in cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
    {
        subcommand(&mut out, sub)?;
    }
    closing_sections().to_writer(&mut out)?;
    top.render_version_section(&mut out)?;
    Ok(single_preamble(&out))
}

/// Whether `line` is part of the preamble roff puts before every rendered piece (it defines
/// the `Aq` string for groff and other troffs).
fn is_preamble(line: &str) -> bool {
    line.starts_with(".ie \\n(.g .ds Aq") || line.starts_with(".el .ds Aq")
}

/// The page with the preamble only at its top.
fn single_preamble(page: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(page);
    let mut out = String::new();
    for (i, line) in text.lines().enumerate() {
        if i < 2 || !is_preamble(line) {
            out.push_str(line);
            out.push('\n');
        }
    }
    out.into_bytes()
}

/// One subcommand under `.SS sysmeter NAME`: description, synopsis, options, extra help.
fn subcommand(out: &mut Vec<u8>, sub: &clap::Command) -> std::io::Result<()> {
    let name = sub
        .get_bin_name()
        .map_or_else(|| format!("sysmeter {}", sub.get_name()), str::to_string);
    let mut head = Roff::new();
    head.control("SS", [name.as_str()]);
    if let Some(about) = sub.get_long_about().or_else(|| sub.get_about()) {
        head.text([roman(about.to_string())]);
    }
    head.to_writer(out)?;
    let man = Man::new(sub.clone());
    let mut parts = Vec::new();
    man.render_synopsis_section(&mut parts)?;
    if sub.get_arguments().any(|a| !a.is_hide_set()) {
        man.render_options_section(&mut parts)?;
    }
    out.extend(body(&parts, ".PP").into_bytes());
    if sub.get_after_long_help().is_some() || sub.get_after_help().is_some() {
        // The extra help is laid out in columns for the terminal: keep its lines (no fill).
        let mut extra = Vec::new();
        man.render_extra_section(&mut extra)?;
        out.extend(format!(".PP\n.nf\n{}.fi\n", body(&extra, "")).into_bytes());
    }
    Ok(())
}

/// The roff of a part rendered by clap_mangen, ready to sit inside the page: its `.SH`
/// headings (SYNOPSIS, OPTIONS, EXTRA), which would repeat for every subcommand, become
/// `heading` (a paragraph break, or nothing); the preamble is dropped.
fn body(roff: &[u8], heading: &str) -> String {
    let text = String::from_utf8_lossy(roff);
    let mut out = String::new();
    for line in text.lines() {
        let replaced = if line.starts_with(".SH ") {
            heading
        } else if is_preamble(line) {
            ""
        } else {
            line
        };
        if !replaced.is_empty() {
            out.push_str(replaced);
            out.push('\n');
        }
    }
    out
}

/// The EXIT STATUS, ENVIRONMENT and FILES sections of the man page.
fn closing_sections() -> Roff {
    let mut r = Roff::new();
    tagged_section(
        &mut r,
        "EXIT STATUS",
        &[
            ("0", "success."),
            (
                "1",
                "a measurement failed, a result could not be stored, the database is unreadable or \
                 of a newer schema, or compare --fail-above found a regression.",
            ),
            (
                "2",
                "usage error: unknown flag or subcommand, unknown experiment, unknown or ambiguous \
                 run reference, unreadable input file.",
            ),
            (
                "130",
                "interrupted by Ctrl-C (finished experiments are kept).",
            ),
        ],
    );
    tagged_section(
        &mut r,
        "ENVIRONMENT",
        &[
            ("SYSMETER_DB", "database file used when --db is not given."),
            (
                "NO_COLOR",
                "when set and not empty, no ANSI colour or bold is written.",
            ),
            (
                "XDG_DATA_HOME",
                "the default database is $XDG_DATA_HOME/sysmeter/sysmeter.db.",
            ),
        ],
    );
    tagged_section(
        &mut r,
        "FILES",
        &[(
            "~/.local/share/sysmeter/sysmeter.db",
            "the default SQLite database of runs, when XDG_DATA_HOME is not set.",
        )],
    );
    r
}

/// A section `title` of tagged paragraphs: each name in bold, its meaning below it.
fn tagged_section(r: &mut Roff, title: &str, items: &[(&str, &str)]) {
    r.control("SH", [title]);
    for &(name, meaning) in items {
        r.control("TP", []);
        r.text([bold(name)]);
        r.text([roman(meaning)]);
    }
}
