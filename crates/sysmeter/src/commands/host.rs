//! `sysmeter host`: the machine description.

use crate::cli::{HostArgs, SimpleFormat};
use crate::host::read_host;
use crate::report::host_text::render_host_text;

use super::{Outcome, emit};

/// Print the machine description.
pub fn host(args: &HostArgs) -> anyhow::Result<Outcome> {
    let h = read_host();
    match args.format {
        SimpleFormat::Json => emit(&format!("{}\n", serde_json::to_string_pretty(&h)?))?,
        SimpleFormat::Text => emit(&render_host_text(&h))?,
    }
    Ok(Outcome::Success)
}
