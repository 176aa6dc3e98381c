//! The probes of one counted function: a return probe and an entry probe at its file offset,
//! defined in the session's [`UprobeGroup`] (return first, so no entry is seen whose return
//! could be missed). Depends on `observe::uprobes`.

use std::path::Path;

use crate::diagnose::observe::uprobes::{Fires, UprobeGroup};

/// Defines the entry probe `name` and the return probe `name_ret` on `path` at `offset`;
/// returns their tracepoint ids `(entry, return)`.
pub fn define_pair(
    group: &mut UprobeGroup,
    name: &str,
    path: &Path,
    offset: u64,
) -> std::io::Result<(u64, u64)> {
    let ret = group.define(Fires::Return, &format!("{name}_ret"), (path, offset), "")?;
    let entry = group.define(Fires::Entry, name, (path, offset), "")?;
    Ok((entry.id, ret.id))
}
