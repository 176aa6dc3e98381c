//! What a `--db` value (or `SYSMETER_DB`) names: an SQLite file, or a PostgreSQL server when
//! it is a `postgres://` or `postgresql://` URL (the two schemes libpq accepts, in any case).
//!
//! A URL may carry a password (`postgres://user:secret@host/db` or `?password=secret`); it is
//! kept for connecting and removed from every text shown to people ([`PgUrl::shown`]).
//! Pure: no I/O, no database code.

use std::ffi::OsStr;
use std::fmt;
use std::path::PathBuf;

/// The database a command should use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DbTarget {
    /// An SQLite file (created if missing).
    File(PathBuf),
    /// A PostgreSQL server, shared by a fleet of machines.
    Postgres(PgUrl),
}

/// A PostgreSQL connection URL. `Debug` and [`PgUrl::shown`] never include the password.
#[derive(Clone, PartialEq, Eq)]
pub struct PgUrl {
    full: String,
    shown: String,
}

impl DbTarget {
    /// Classifies a `--db` value: a `postgres://` / `postgresql://` URL is a server, anything
    /// else (including a non-UTF-8 name) a file path. A file whose name really starts with
    /// `postgres://` can still be used as `./postgres://…`.
    pub fn parse(value: &OsStr) -> DbTarget {
        match value.to_str() {
            Some(text) if is_postgres_url(text) => DbTarget::Postgres(PgUrl::new(text)),
            _ => DbTarget::File(PathBuf::from(value)),
        }
    }
}

impl PgUrl {
    /// Wraps a URL (not validated here: the driver parses it when connecting).
    pub fn new(url: &str) -> PgUrl {
        PgUrl {
            full: url.to_string(),
            shown: redact(url),
        }
    }

    /// The URL as given, password included: only for connecting.
    pub fn as_str(&self) -> &str {
        &self.full
    }

    /// The URL without any password, for messages and listings.
    pub fn shown(&self) -> &str {
        &self.shown
    }
}

impl fmt::Debug for PgUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("PgUrl").field(&self.shown).finish()
    }
}

/// Whether `text` starts with a PostgreSQL URL scheme (schemes are case-insensitive).
fn is_postgres_url(text: &str) -> bool {
    ["postgres://", "postgresql://"].iter().any(|scheme| {
        text.get(..scheme.len())
            .is_some_and(|head| head.eq_ignore_ascii_case(scheme))
    })
}

/// `url` with the password of the user part and any `password=` query value removed.
fn redact(url: &str) -> String {
    let Some(scheme_end) = url.find("://").map(|i| i + 3) else {
        return url.to_string();
    };
    let (scheme, rest) = url.split_at(scheme_end);
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    // The host part cannot contain '@', so the last one ends the user part.
    let authority = match authority.rsplit_once('@') {
        Some((user, host)) => {
            let user = user.split_once(':').map_or(user, |(name, _password)| name);
            format!("{user}@{host}")
        }
        None => authority.to_string(),
    };
    let tail = match tail.split_once('?') {
        Some((path, query)) => {
            let params: Vec<&str> = query
                .split('&')
                .map(|p| {
                    if p.split('=').next() == Some("password") {
                        "password=***"
                    } else {
                        p
                    }
                })
                .collect();
            format!("{path}?{}", params.join("&"))
        }
        None => tail.to_string(),
    };
    format!("{scheme}{authority}{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(s: &str) -> DbTarget {
        DbTarget::parse(OsStr::new(s))
    }

    #[test]
    fn postgres_urls_are_servers_in_any_case() {
        for url in [
            "postgres://u@h/db",
            "postgresql://h:5433/db",
            "POSTGRES://h/db",
            "PostgreSQL://h",
        ] {
            assert!(matches!(target(url), DbTarget::Postgres(_)), "{url}");
        }
    }

    #[test]
    fn everything_else_is_a_file() {
        for path in [
            "sysmeter.db",
            "/var/lib/sysmeter.db",
            "postgres",
            "postgres:/h/db",
            "./postgres://h/db",
            "mysql://h/db",
            "",
        ] {
            assert_eq!(target(path), DbTarget::File(PathBuf::from(path)), "{path}");
        }
    }

    #[test]
    fn non_utf8_names_are_files() {
        use std::os::unix::ffi::OsStrExt;
        let name = OsStr::from_bytes(b"postgres://\xff");
        assert_eq!(DbTarget::parse(name), DbTarget::File(PathBuf::from(name)));
    }

    #[test]
    fn passwords_are_never_shown() {
        let cases = [
            ("postgres://u:secret@h:5432/db", "postgres://u@h:5432/db"),
            ("postgres://u:s:e@c@h/db", "postgres://u@h/db"),
            ("postgres://u@h/db", "postgres://u@h/db"),
            (
                "postgres://h/db?password=secret",
                "postgres://h/db?password=***",
            ),
            (
                "postgresql://u:x@h/db?sslmode=disable&password=y",
                "postgresql://u@h/db?sslmode=disable&password=***",
            ),
            ("postgres://:secret@h", "postgres://@h"),
            ("postgres://h", "postgres://h"),
        ];
        for (url, shown) in cases {
            let parsed = PgUrl::new(url);
            assert_eq!(parsed.shown(), shown, "{url}");
            assert_eq!(parsed.as_str(), url);
            let debug = format!("{parsed:?}");
            assert!(
                !debug.contains("secret") && !debug.contains(":x@"),
                "{debug}"
            );
        }
    }
}
