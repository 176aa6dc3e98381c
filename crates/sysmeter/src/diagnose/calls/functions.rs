//! `calls --functions`: exact call counts of a program's own functions per caller → callee
//! edge, with self and inclusive time, for programs built with `-finstrument-functions`.
//! The in-process backend's preload library defines `__cyg_profile_func_enter` and
//! `__cyg_profile_func_exit`, to which the program's undefined references bind; its hooks
//! keep a calling-context tree per thread in the run's shared region
//! (`inproc::funcs_region`). Here: the refusal of a program that was not built for it
//! ([`check`]), the hooks' calibration ([`calibration`]), names for the addresses
//! ([`names`]), the gprof views ([`graph`]) and the result ([`record`]).
//!
//! Depends on `model`, `diagnose::observe` and the sibling `inproc`; never on another
//! diagnosis.

pub mod calibration;
pub mod graph;
pub mod names;
pub mod record;

use std::path::Path;

use crate::diagnose::observe::elf;

const ENTER: &str = "__cyg_profile_func_enter";
const EXIT: &str = "__cyg_profile_func_exit";

/// Why `program` cannot be measured with `--functions` (one sentence with the fix), if it
/// cannot.
pub fn check(program: &Path) -> Option<String> {
    let shown = program.display();
    let image = match elf::read(program) {
        Ok(image) => image,
        Err(e) => return Some(format!("{e}; --functions needs the program itself")),
    };
    let imports = |n: &str| image.undefined.iter().any(|u| u == n);
    if imports(ENTER) && imports(EXIT) {
        return None;
    }
    let named = std::fs::read(program)
        .map(|b| b.windows(ENTER.len()).any(|w| w == ENTER.as_bytes()))
        .unwrap_or(false);
    if named || image.defined.iter().any(|d| d.name == ENTER) {
        return Some(format!(
            "{shown} defines {ENTER} itself, so its calls never reach sysmeter's hooks: \
             remove its own definitions of the hooks (see docs/calls.md)"
        ));
    }
    if ["mcount", "_mcount", "__fentry__"]
        .iter()
        .any(|n| imports(n))
    {
        return Some(format!(
            "{shown} was built with -pg, whose mcount hook sees function entries but not \
             their returns: rebuild it with -finstrument-functions (see docs/calls.md)"
        ));
    }
    Some(format!(
        "{shown} has no {ENTER} reference: rebuild it with -finstrument-functions (see \
         docs/calls.md)"
    ))
}
