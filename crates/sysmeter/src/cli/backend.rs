//! The one `--backend` value of every diagnosis that has a choice (`trace`, `calls`,
//! `profile --off-cpu`, `locks`, `alloc`): clap's values are derived from the diagnosis's own
//! description of its backends (`diagnose::observe::backend::Backend`: `auto` and each
//! backend's name and help line), so a backend added there appears here, in `--help`, the
//! man page and the completions without another enum.

use clap::ValueEnum;
use clap::builder::PossibleValue;

use crate::diagnose::observe::backend::{Backend, Request};

impl<B: Backend> ValueEnum for Request<B> {
    fn value_variants<'a>() -> &'a [Self] {
        B::CHOICES
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(match self {
            Request::Auto => PossibleValue::new("auto").help(B::AUTO_HELP),
            Request::Only(b) => PossibleValue::new(b.name()).help(b.help()),
        })
    }
}
