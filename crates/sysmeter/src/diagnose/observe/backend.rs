//! The one shape of a diagnosis's backends: each is described once ([`Backend`]: its name
//! on the command line, its help line, which one `auto` prefers and which it falls back
//! to; a diagnosis declares its enum and that description together with `backends!`), its
//! availability check answers `Result<_, Reason>` (one sentence with the fix), and
//! [`choose`] turns what `--backend` asked for ([`Request`]) into the backend that runs and
//! the "why this backend" line, written one way by [`line()`] for every diagnosis. The
//! command line's `--backend` values are derived from [`Backend::CHOICES`] (`cli/backend.rs`).
//!
//! Pure; depends on nothing.

use std::fmt;

/// Why a backend cannot run here: one sentence saying what is missing and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Reason(pub String);

impl Reason {
    /// The reason `what` with its fix, as one sentence: "what; fix".
    pub fn with_fix(what: impl fmt::Display, fix: impl fmt::Display) -> Reason {
        Reason(format!("{what}; {fix}"))
    }
}

/// `--backend NAME` asked for a backend that cannot run here.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--backend {backend} cannot run here: {reason}; use --backend {instead}")]
pub struct Unavailable<E: fmt::Display = Reason> {
    /// The backend asked for.
    pub backend: &'static str,
    /// Why it cannot run (its availability check's answer).
    pub reason: E,
    /// The backend `auto` would take instead.
    pub instead: &'static str,
}

/// The backends of one diagnosis, described once.
pub trait Backend: Copy + Eq + fmt::Debug + Send + Sync + 'static {
    /// What `auto` takes where its availability check passes.
    const PREFERRED: Self;
    /// What `auto` takes where it does not (checked, if at all, when it runs).
    const FALLBACK: Self;
    /// `auto` first, then every backend, in the order `--backend` lists them.
    const CHOICES: &'static [Request<Self>];
    /// What `auto` does, for `--help`.
    const AUTO_HELP: &'static str;
    /// Why `auto` took [`Backend::PREFERRED`], for the "backend:" line.
    const PREFERRED_BECAUSE: &'static str;
    /// The name on the command line and in the "backend:" line.
    fn name(self) -> &'static str;
    /// What it is and what it needs, for `--help`.
    fn help(self) -> &'static str;
}

/// Declares a diagnosis's backend enum and its [`Backend`] description at once: each
/// variant with its name (`"ptrace"`) and help line, in the order `--backend` lists them,
/// then `auto`'s help line, the backend it prefers with why, and the one it falls back to.
/// The enum derives `Debug, Clone, Copy, PartialEq, Eq` (what [`Backend`] needs); further
/// attributes on the enum and its variants are kept.
macro_rules! backends {
    (
        $(#[$meta:meta])*
        $vis:vis enum $enum:ident {
            $($(#[$variant_meta:meta])* $variant:ident = $name:literal, $help:literal;)+
        }
        auto $auto_help:literal:
            $preferred:ident because $because:literal, else $fallback:ident;
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        $vis enum $enum {
            $($(#[$variant_meta])* $variant,)+
        }

        impl $crate::diagnose::observe::backend::Backend for $enum {
            const PREFERRED: $enum = $enum::$preferred;
            const FALLBACK: $enum = $enum::$fallback;
            const CHOICES: &'static [$crate::diagnose::observe::backend::Request<$enum>] = &[
                $crate::diagnose::observe::backend::Request::Auto,
                $($crate::diagnose::observe::backend::Request::Only($enum::$variant),)+
            ];
            const AUTO_HELP: &'static str = $auto_help;
            const PREFERRED_BECAUSE: &'static str = $because;

            fn name(self) -> &'static str {
                match self {
                    $($enum::$variant => $name,)+
                }
            }

            fn help(self) -> &'static str {
                match self {
                    $($enum::$variant => $help,)+
                }
            }
        }
    };
}
pub(crate) use backends;

/// What `--backend` asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Request<B> {
    /// The preferred backend where it can run, else the fallback.
    #[default]
    Auto,
    /// This backend, or an error saying why it cannot run.
    Only(B),
}

/// The backend that runs, why, and what its availability check found (when it ran).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chosen<B, T> {
    /// The backend.
    pub backend: B,
    /// Why it was taken: the part of the "backend:" line in parentheses.
    pub because: String,
    /// The value of the preferred backend's check, when it ran and passed.
    pub checked: Option<T>,
}

impl<B: Backend, T> Chosen<B, T> {
    /// The "backend:" line of diagnosis `what` ("" for the command's only backend choice).
    pub fn line(&self, what: &str) -> String {
        line(what, self.backend.name(), &self.because)
    }
}

/// The one "why this backend" line: `[WHAT ]backend: NAME (BECAUSE)`.
pub fn line(what: &str, name: &str, because: &str) -> String {
    match what {
        "" => format!("backend: {name} ({because})"),
        _ => format!("{what} backend: {name} ({because})"),
    }
}

/// The backend for `request`. `check` is the preferred backend's availability check, run
/// only when that backend is asked for or `auto` considers it: its value is kept in
/// [`Chosen::checked`]; its error is the fallback's reason under `auto`, and an
/// [`Unavailable`] when the preferred backend was asked for by name.
pub fn choose<B: Backend, T, E: fmt::Display>(
    request: Request<B>,
    check: impl FnOnce() -> Result<T, E>,
) -> Result<Chosen<B, T>, Unavailable<E>> {
    let asked = |backend: B, checked| Chosen {
        backend,
        because: format!("chosen with --backend {}", backend.name()),
        checked,
    };
    match request {
        Request::Only(b) if b != B::PREFERRED => Ok(asked(b, None)),
        Request::Only(b) => match check() {
            Ok(t) => Ok(asked(b, Some(t))),
            Err(reason) => Err(Unavailable {
                backend: b.name(),
                reason,
                instead: B::FALLBACK.name(),
            }),
        },
        Request::Auto => Ok(match check() {
            Ok(t) => Chosen {
                backend: B::PREFERRED,
                because: B::PREFERRED_BECAUSE.to_string(),
                checked: Some(t),
            },
            Err(why) => Chosen {
                backend: B::FALLBACK,
                because: format!("{}: {why}", B::PREFERRED.name()),
                checked: None,
            },
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    backends! {
        enum Toy {
            Fast = "fast", "a fast toy";
            Slow = "slow", "a slow toy";
        }
        auto "fast where permitted, else slow":
            Fast because "permitted here", else Slow;
    }

    fn refused() -> Result<u8, Reason> {
        Err(Reason::with_fix("not root", "run as root"))
    }

    #[test]
    fn auto_takes_the_preferred_backend_where_its_check_passes() {
        let c = choose(Request::<Toy>::Auto, || Ok::<_, Reason>(7)).unwrap();
        assert_eq!((c.backend, c.checked), (Toy::Fast, Some(7)));
        assert_eq!(c.line("toy"), "toy backend: fast (permitted here)");
    }

    #[test]
    fn auto_falls_back_and_says_why() {
        let c = choose(Request::<Toy>::Auto, refused).unwrap();
        assert_eq!((c.backend, c.checked), (Toy::Slow, None));
        assert_eq!(c.line(""), "backend: slow (fast: not root; run as root)");
    }

    #[test]
    fn a_backend_asked_for_is_taken_or_refused_with_the_reason() {
        let slow = choose(Request::Only(Toy::Slow), refused).unwrap();
        assert_eq!(slow.line(""), "backend: slow (chosen with --backend slow)");
        let fast = choose(Request::Only(Toy::Fast), || Ok::<_, Reason>(1)).unwrap();
        assert_eq!(fast.because, "chosen with --backend fast");
        let no = choose(Request::Only(Toy::Fast), refused).unwrap_err();
        assert_eq!(
            no.to_string(),
            "--backend fast cannot run here: not root; run as root; use --backend slow"
        );
    }
}
