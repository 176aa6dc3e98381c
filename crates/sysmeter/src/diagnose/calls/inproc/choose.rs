//! Which backend a `calls` run uses, and why: the in-process library for a launched,
//! dynamically linked, non-setuid program (or a script that such a program runs, followed
//! through its `#!` chain) whose functions are named without an object; uprobes otherwise
//! (`-p PID`, OBJECT:NAME, static programs — no dynamic linker to load the library — and
//! setuid programs, for which the dynamic linker ignores LD_PRELOAD).
//!
//! Depends on `diagnose::observe` (the target, the one backend shape) and the sibling
//! `select`.

use std::path::Path;

use super::super::select::Pattern;
use crate::diagnose::observe::backend::{Chosen, Reason, Request, Unavailable};
use crate::diagnose::observe::{self, target::Target};

observe::backend::backends! {
    /// The backend of a run (`--backend`; `auto` takes the in-process library where it can
    /// work).
    pub enum Backend {
        /// The preload library (GOT patching in the process).
        InProcess = "inproc",
            "A preloaded library patches the program's GOT and counts in the process";
        /// Uprobes through the kernel.
        Uprobe = "uprobe", "Uprobes on the PLT stubs or the library's definitions (root)";
    }
    auto "The in-process library where it works, else uprobes":
        InProcess because "a preloaded library counts the program's calls in the process",
        else Uprobe;
}

/// Why the in-process backend cannot trace this run, if it cannot.
pub fn why_not(target: &Target, program: &Path, patterns: &[Pattern]) -> Option<Reason> {
    in_process_impossible(target, program, patterns).map(Reason)
}

fn in_process_impossible(target: &Target, program: &Path, patterns: &[Pattern]) -> Option<String> {
    if let Target::Attach(pid) = target {
        return Some(format!("-p {pid} attaches to a running process"));
    }
    if let Some(p) = patterns.iter().find(|p| p.object.is_some()) {
        return Some(format!(
            "{}:{} names a library's own definition (all its callers)",
            p.object.as_deref().unwrap_or_default(),
            p.glob
        ));
    }
    crate::diagnose::observe::inject::cannot_preload(program)
}

/// The backend of a run and what its availability check found: `why_not` is why the
/// in-process library cannot trace this run ([`why_not`]).
pub fn backend(
    wanted: Request<Backend>,
    why_not: Option<Reason>,
) -> Result<Chosen<Backend, ()>, Unavailable> {
    observe::backend::choose(wanted, || why_not.map_or(Ok(()), Err))
}

/// The comma-separated globs the library matches the program's imports against.
pub fn globs(patterns: &[Pattern]) -> String {
    let all: Vec<&str> = patterns.iter().map(|p| p.glob.as_str()).collect();
    all.join(",")
}

/// A usage error when no function the program imports matches the patterns (the same
/// sentence as the uprobe backend's, naming what it imports); a script passes.
pub fn check_imports(program: &Path, patterns: &[Pattern]) -> Result<(), super::super::CallsError> {
    if !crate::diagnose::observe::script::chain(program)
        .via
        .is_empty()
    {
        // A script: what it ends up running is known only when it execs it.
        return Ok(());
    }
    let image = crate::diagnose::observe::elf::read(program)?;
    let mut imports: Vec<&str> = image.plt.iter().map(|(n, _)| n.as_str()).collect();
    if imports.iter().any(|n| {
        patterns
            .iter()
            .any(|p| super::super::select::glob_match(&p.glob, n))
    }) {
        return Ok(());
    }
    imports.sort_unstable();
    imports.dedup();
    let hint = if imports.is_empty() {
        "it calls no shared library through a PLT".to_string()
    } else {
        format!("it imports: {}", imports.join(", "))
    };
    Err(super::super::CallsError::NothingMatches {
        object: program.display().to_string(),
        patterns: globs(patterns),
        hint,
    })
}
