//! What runs a script: the `#!` chain from a file to the ELF program the kernel finally
//! starts (an interpreter, `#!/usr/bin/env NAME` with NAME resolved on `PATH` as env does,
//! an interpreter that is itself a script, up to the kernel's own four levels). Wrappers
//! start most interpreters and tools (pyenv and rbenv shims, npm bins, `#!/bin/sh … exec`),
//! and a script is not "statically linked": whether the preload library can enter it is
//! whether it can enter the program at the end of the chain.
//!
//! Depends on the sibling `target` (the `PATH` lookup); reads the first line of each file.

use std::ffi::OsStr;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::target::resolve_program;

/// The kernel's limit on nested interpreters (`BINPRM_MAX_RECURSION`).
const MAX_LEVELS: usize = 4;

/// A file and the programs that run it: the scripts of the chain (none for an ELF program)
/// and the file the kernel ends up executing (the file itself when it is no script, or when
/// the chain cannot be followed: its interpreter is missing or too deep).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chain {
    /// The scripts of the chain, the file first.
    pub via: Vec<PathBuf>,
    /// The ELF program (or the file itself) the kernel executes.
    pub program: PathBuf,
}

/// The `#!` line of `path`: the interpreter and its one optional argument (the kernel passes
/// the rest of the line as one word), or `None` when `path` is no script.
fn shebang(path: &Path) -> Option<(String, Option<String>)> {
    let mut head = [0u8; 256];
    let mut f = std::fs::File::open(path).ok()?;
    let n = f.read(&mut head).ok()?;
    let line = head[..n].strip_prefix(b"#!")?;
    let end = line.iter().position(|&b| b == b'\n').unwrap_or(line.len());
    let line = String::from_utf8_lossy(&line[..end]).trim().to_string();
    let (interp, arg) = match line.split_once([' ', '\t']) {
        Some((i, a)) => (i.to_string(), Some(a.trim().to_string())),
        None => (line, None),
    };
    (!interp.is_empty()).then_some((interp, arg.filter(|a| !a.is_empty())))
}

/// The program `env ARG` runs: the first word of ARG that is neither an option (`-S`, `-i`,
/// `-u NAME` is rare in a `#!` line and not followed) nor an assignment, looked up on `PATH`.
fn env_target(arg: &str) -> Option<PathBuf> {
    let name = arg
        .split_whitespace()
        .find(|w| !w.starts_with('-') && !w.contains('='))?;
    resolve_program(OsStr::new(name)).ok()
}

/// The chain from `path` to the program the kernel executes for it.
pub fn chain(path: &Path) -> Chain {
    let mut via = Vec::new();
    let mut at = path.to_path_buf();
    for _ in 0..MAX_LEVELS {
        let Some((interp, arg)) = shebang(&at) else {
            return Chain { via, program: at };
        };
        let interp = PathBuf::from(interp);
        let next = match (interp.file_name(), arg) {
            (Some(n), Some(arg)) if n == "env" => env_target(&arg),
            _ => Some(interp),
        };
        let Some(next) = next.filter(|p| p.is_file()) else {
            break;
        };
        via.push(at);
        at = next;
    }
    // Not followed to its end: the file itself, as the kernel would fail on it.
    Chain {
        via: Vec::new(),
        program: path.to_path_buf(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn script(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).expect("write the script");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        p
    }

    #[test]
    fn scripts_are_followed_to_the_program_that_runs_them() {
        let dir = tempfile::tempdir().expect("tempdir");
        let sh = script(dir.path(), "a", "#!/bin/sh\nexec true\n");
        assert_eq!(chain(&sh).program, PathBuf::from("/bin/sh"));
        assert_eq!(chain(&sh).via, std::slice::from_ref(&sh));
        let env = script(dir.path(), "b", "#!/usr/bin/env  sh \necho\n");
        let found = resolve_program(OsStr::new("sh")).expect("sh on PATH");
        assert_eq!(chain(&env).program, found);
        let two = script(dir.path(), "c", &format!("#!{}\n", sh.display()));
        assert_eq!(chain(&two).via, [two.clone(), sh]);
        assert_eq!(chain(Path::new("/bin/sh")).via, Vec::<PathBuf>::new());
    }

    #[test]
    fn a_chain_that_cannot_be_followed_ends_at_the_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let gone = script(dir.path(), "a", "#!/no/such/interpreter\n");
        assert_eq!(chain(&gone).program, gone);
        let unknown = script(dir.path(), "b", "#!/usr/bin/env no-such-program-sysmeter\n");
        assert_eq!(chain(&unknown).program, unknown);
        let mut last = script(dir.path(), "s0", "#!/bin/sh\n");
        for i in 1..=MAX_LEVELS {
            last = script(
                dir.path(),
                &format!("s{i}"),
                &format!("#!{}\n", last.display()),
            );
        }
        assert_eq!(chain(&last).program, last, "deeper than the kernel follows");
    }
}
