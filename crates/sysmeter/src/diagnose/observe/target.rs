//! What a diagnosis looks at: a command to launch or a running process to attach to
//! ([`Target`]), and the one program resolver ([`resolve_program`]) that turns the command's
//! name into the file `execve` runs, like a shell does. Shared by `run`, `trace`, `profile`
//! and `scale`, which differ only in what they observe.
//!
//! Plain data and a PATH lookup: depends on nothing else in sysmeter.

use std::ffi::{OsStr, OsString};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// What to diagnose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// Start this command: argv, `argv[0]` included (the program as the user wrote it).
    Launch(Vec<OsString>),
    /// Attach to (or watch) this running process.
    Attach(i32),
}

impl Target {
    /// The pid of an attached process.
    pub fn pid(&self) -> Option<i32> {
        match self {
            Target::Attach(pid) => Some(*pid),
            Target::Launch(_) => None,
        }
    }

    /// The command line, or `PID n`, for titles.
    pub fn text(&self) -> String {
        match self {
            Target::Launch(argv) => argv
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join(" "),
            Target::Attach(pid) => format!("PID {pid}"),
        }
    }

    /// The command line, or `pid n`: how profiles and `locks` name their target.
    pub fn describe(&self) -> String {
        match self {
            Target::Launch(_) => self.text(),
            Target::Attach(pid) => format!("pid {pid}"),
        }
    }

    /// The argv of a launched command.
    pub fn argv(&self) -> Option<&[OsString]> {
        match self {
            Target::Launch(argv) => Some(argv),
            Target::Attach(_) => None,
        }
    }
}

/// Why [`resolve_program`] found no program to run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unresolved {
    /// No such file (a path), or not in any PATH directory (a name).
    #[error("not found")]
    NotFound,
    /// A path naming a file that is not an executable regular file.
    #[error("not executable")]
    NotExecutable(PathBuf),
}

impl Unresolved {
    /// The shell's exit code of a command that cannot be started: 127 not found, 126 not
    /// executable. The one mapping of a launch failure to an exit code (`run`, `trace`,
    /// `calls`, `alloc`, `profile` and `locks` all end through it).
    pub fn exit_code(&self) -> u8 {
        match self {
            Unresolved::NotFound => 127,
            Unresolved::NotExecutable(_) => 126,
        }
    }

    /// What an `execve` (or a spawn) that failed with `error` says of the program: no such
    /// file is "not found", any other refusal "not executable" (as a shell reads it).
    pub fn of_exec_error(error: &std::io::Error, program: &Path) -> Unresolved {
        match error.kind() {
            std::io::ErrorKind::NotFound => Unresolved::NotFound,
            _ => Unresolved::NotExecutable(program.to_path_buf()),
        }
    }
}

fn executable(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Resolves a command name like a shell (`execvp`): a name with a `/` is a path, any other
/// is looked up in `$PATH` (default `/usr/local/bin:/usr/bin:/bin`). The result is an
/// existing regular file that is executable by someone.
pub fn resolve_program(name: &OsStr) -> Result<PathBuf, Unresolved> {
    if name.as_encoded_bytes().contains(&b'/') {
        let p = PathBuf::from(name);
        return match p.exists() {
            true if executable(&p) => Ok(p),
            true => Err(Unresolved::NotExecutable(p)),
            false => Err(Unresolved::NotFound),
        };
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| executable(p))
        .ok_or(Unresolved::NotFound)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_found_on_path_and_paths_are_checked() {
        let sh = resolve_program(OsStr::new("sh")).expect("sh on PATH");
        assert!(sh.is_absolute() || sh.components().count() > 1);
        assert_eq!(
            resolve_program(OsStr::new("/bin/sh")),
            Ok(PathBuf::from("/bin/sh"))
        );
        assert_eq!(
            resolve_program(OsStr::new("no-such-program-sysmeter")),
            Err(Unresolved::NotFound)
        );
        assert_eq!(
            resolve_program(OsStr::new("/no/such/program")),
            Err(Unresolved::NotFound)
        );
        let plain = std::env::temp_dir().join(format!("sysmeter-target-{}", std::process::id()));
        std::fs::write(&plain, "not a program").expect("temp file");
        let got = resolve_program(plain.as_os_str());
        let _ = std::fs::remove_file(&plain);
        assert_eq!(got, Err(Unresolved::NotExecutable(plain)));
    }

    #[test]
    fn targets_say_what_they_name() {
        let launch = Target::Launch(vec!["ls".into()]);
        assert_eq!(launch.pid(), None);
        assert_eq!(launch.argv().map(<[OsString]>::len), Some(1));
        assert_eq!(Target::Attach(7).pid(), Some(7));
        assert_eq!(Target::Attach(7).argv(), None);
    }
}
