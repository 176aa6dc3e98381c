//! `sysmeter host`: the machine description.

use crate::cli::{HostArgs, SimpleFormat};
use crate::host::HostInfo; // TEMP until read_host lands

use super::Outcome;

/// Print the machine description.
pub fn host(args: &HostArgs) -> anyhow::Result<Outcome> {
    let h = HostInfo::default();
    match args.format {
        SimpleFormat::Json => println!("{}", serde_json::to_string_pretty(&h)?),
        SimpleFormat::Text => println!("{h:?}"),
    }
    Ok(Outcome::Success)
}
