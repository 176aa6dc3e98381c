//! What the cases of `hostile.rs` are made with: the case shapes (a file refused when
//! imported beside a good one, a corrupted record so refused, a fixed command line), placeholders, special files, and
//! processes that cannot be observed (a zombie, a kernel thread).

use super::Ctx;

pub fn v(items: &[&str]) -> Vec<String> {
    items.iter().map(|i| i.to_string()).collect()
}

/// A file refused when imported beside a good one (`args` makes the command line): exit
/// 2 saying `says`, the good one stored.
macro_rules! refused_file {
    ($name:literal, $says:literal, $args:expr) => {
        $crate::hostile::Case {
            name: $name,
            args: $args,
            code: 2,
            says: $says,
            runs_after: 2,
            io: $crate::hostile::Io::Piped,
            after: $crate::hostile::nothing,
        }
    };
}

/// A corrupted record imported beside a good one: exit 2, the good one stored.
macro_rules! corrupt {
    ($name:literal, $says:literal, |$d:ident| $edit:expr) => {
        refused_file!($name, $says, |c: &$crate::hostile::Ctx| {
            let bad = c.edited(concat!($name, ".json"), |$d| $edit);
            Ok(c.import_beside_good(&bad))
        })
    };
}

/// A record whose hostname is `$hostname`, which no store may hold: refused like [`corrupt`].
macro_rules! hostile_hostname {
    ($name:literal, $hostname:literal) => {
        corrupt!(
            $name,
            "nothing of it was stored",
            |d| d["host"]["hostname"] = $hostname.into()
        )
    };
}

/// A case with a fixed command line, its words split at spaces (`{db}`, `{dir}/NAME` and
/// `{typo}` filled in).
macro_rules! plain {
    ($name:literal, $args:literal, $code:literal, $says:literal, $runs:literal) => {
        plain!(
            $name,
            $args,
            $code,
            $says,
            $runs,
            $crate::hostile::Io::Piped
        )
    };
    ($name:literal, $args:literal, $code:literal, $says:literal, $runs:literal, $io:expr) => {
        $crate::hostile::Case {
            name: $name,
            args: |c: &$crate::hostile::Ctx| {
                let words: Vec<&str> = $args.split_whitespace().collect();
                Ok($crate::hostile::setup::fill(c, &words))
            },
            code: $code,
            says: $says,
            runs_after: $runs,
            io: $io,
            after: $crate::hostile::nothing,
        }
    };
}

/// A `-p` target that cannot be observed: `$pid` (`at_self`, `at_zombie`, `at_kthread`)
/// gives the command line for `$cmd`; exit 2 with `$says`, nothing stored.
macro_rules! refused_pid {
    ($name:literal, $pid:ident, $cmd:literal, $says:literal) => {
        $crate::hostile::Case {
            name: $name,
            args: |_| $crate::hostile::setup::$pid(&$cmd.split_whitespace().collect::<Vec<_>>()),
            code: 2,
            says: $says,
            runs_after: 1,
            io: $crate::hostile::Io::Piped,
            after: $crate::hostile::nothing,
        }
    };
}

/// `args` with `{db}`, `{typo}`, `{garbage}` and `{dir}/NAME` replaced.
pub fn fill(c: &Ctx, args: &[&str]) -> Vec<String> {
    let typo = format!("{}/x.db", super::s(&c.typo));
    args.iter()
        .map(|a| {
            a.replace("{db}", &c.db())
                .replace("{typo}", &typo)
                .replace("{garbage}", super::s(&c.garbage))
                .replace("{dir}", super::s(&c.dir))
        })
        .collect()
}

/// A file of `kind` made with mkfifo or a symlink, imported beside the good record.
pub fn special(c: &Ctx, name: &str, make: impl FnOnce(&str)) -> Vec<String> {
    let path = c.path(name);
    if std::fs::symlink_metadata(&path).is_err() {
        make(&path);
    }
    c.import_beside_good(&path)
}

pub fn mkfifo(path: &str) {
    let ok = std::process::Command::new("mkfifo").arg(path).status();
    assert!(ok.is_ok_and(|s| s.success()), "mkfifo {path}");
}

/// A zombie: a child of `sleep` (which never reaps) that has exited. The sleep is left to
/// end on its own; then init reaps both.
pub fn zombie() -> Result<String, String> {
    let sleeper = std::process::Command::new("sh")
        .args(["-c", "true & exec sleep 20"])
        .spawn()
        .map_err(|e| format!("cannot start sh: {e}"))?;
    let pid = sleeper.id();
    for _ in 0..200 {
        let children = format!("/proc/{pid}/task/{pid}/children");
        let text = std::fs::read_to_string(children).unwrap_or_default();
        if let Some(child) = text.split_whitespace().next() {
            let stat = std::fs::read_to_string(format!("/proc/{child}/stat")).unwrap_or_default();
            if stat
                .rsplit_once(')')
                .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
            {
                return Ok(child.to_string());
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    Err("no zombie appeared (no /proc/PID/task/TID/children here?)".into())
}

/// A kernel thread's PID, if this PID namespace shows one.
pub fn kernel_thread() -> Result<String, String> {
    let stat = std::fs::read_to_string("/proc/2/stat").unwrap_or_default();
    let flags: u64 = stat
        .rsplit_once(')')
        .and_then(|(_, r)| r.split_whitespace().nth(6)?.parse().ok())
        .unwrap_or(0);
    match flags & 0x0020_0000 != 0 {
        true => Ok("2".into()),
        false => Err("PID 2 is not a kernel thread in this PID namespace".into()),
    }
}

/// `COMMAND…` run by a shell that execs sysmeter with `-p $$`: sysmeter's own PID.
pub fn at_self(cmd: &[&str]) -> Result<Vec<String>, String> {
    let mut args = v(&["{self}"]);
    args.extend(v(cmd));
    args.extend(v(&["--no-store", "--duration", "1"]));
    Ok(args)
}

/// `COMMAND… -p PID` against a zombie.
pub fn at_zombie(cmd: &[&str]) -> Result<Vec<String>, String> {
    let mut args = v(cmd);
    args.extend(["--no-store".into(), "-p".into(), zombie()?]);
    Ok(args)
}

/// `COMMAND… -p PID` against a kernel thread.
pub fn at_kthread(cmd: &[&str]) -> Result<Vec<String>, String> {
    let mut args = v(cmd);
    args.extend(["--no-store".into(), "-p".into(), kernel_thread()?]);
    Ok(args)
}
