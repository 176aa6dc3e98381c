//! `sysmeter host`: the machine description.

use crate::cli::{HostArgs, SimpleFormat};
use crate::host::read_host;
use crate::report::host_text::render_host_text;

use super::Outcome;

/// Print the machine description.
pub fn host(args: &HostArgs) -> anyhow::Result<Outcome> {
    let h = read_host();
    match args.format {
        SimpleFormat::Json => println!("{}", serde_json::to_string_pretty(&h)?),
        SimpleFormat::Text => print!("{}", render_host_text(&h)),
    }
    Ok(Outcome::Success)
}
