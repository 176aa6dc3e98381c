//! The one way a file named on the command line is written (`--out`, `--html`,
//! `--markdown`, `--flamegraph`, `--folded`): [`OutFile::open`] before anything is measured,
//! [`OutFile::write`] at the end. The rule, whatever the command:
//!
//! - `-` is stdout (through `console::out`, so a closed pipe ends it quietly);
//! - a character or block device, a FIFO or a socket is written straight into — never
//!   replaced (`--out /dev/stdout` as root once replaced the system's symlink with a file);
//! - a regular file, or a path where none exists yet, is written atomically: a temporary file
//!   in the *target's* directory (symlinks resolved first, so the link stays and its target is
//!   updated), given the existing file's mode and owner, then renamed over it. When the owner
//!   cannot be kept (not root) or the file has other hard links, it is rewritten in place;
//! - a directory, or the database being written (or its -wal/-shm), is refused: exit 2.
//!
//! A bad path is a usage error at open, before a long measurement. A full disk or an
//! exhausted quota, at open or at the end, is named as such (`full_disk`) and is no usage
//! error (exit 1); a measuring command that meets it at the end still has its report
//! (`commands::output`).

use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::full_disk::{self, NoRoom};
use super::{UsageError, console};

/// The name prefix of the temporary files written beside an output.
const TEMP_PREFIX: &str = ".sysmeter-out-";

/// How long an unlocked temp file must have been left alone before it is removed (one being
/// created right now is locked within microseconds; this leaves a wide margin).
const TEMP_AGE: std::time::Duration = std::time::Duration::from_secs(60);

/// A new temporary output in `dir`, 0666 before the umask like any newly created file, and
/// locked until it is renamed or removed: a temp file whose lock is free was left by a
/// sysmeter that was killed before it could rename or remove it.
fn locked_temp(dir: &Path) -> std::io::Result<tempfile::NamedTempFile> {
    let tmp = tempfile::Builder::new()
        .prefix(TEMP_PREFIX)
        .permissions(std::fs::Permissions::from_mode(0o666))
        .tempfile_in(dir)?;
    tmp.as_file().lock()?;
    Ok(tmp)
}

/// A new locked temporary output in the directory of `target` (after removing the ones a
/// killed sysmeter left there); the error with that directory.
fn temp_beside(target: &Path) -> Result<tempfile::NamedTempFile, (std::io::Error, PathBuf)> {
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    remove_abandoned_temps(&dir);
    locked_temp(&dir).map_err(|e| (e, dir))
}

/// Removes the temporary outputs in `dir` that a killed sysmeter of this user left behind:
/// regular files named [`TEMP_PREFIX`]…, owned by us, unchanged for [`TEMP_AGE`], whose lock
/// no live process holds. Housekeeping: any error leaves things as they are.
fn remove_abandoned_temps(dir: &Path) {
    let me = crate::host::ownership::my_uid();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if !entry.file_name().to_string_lossy().starts_with(TEMP_PREFIX) {
            continue;
        }
        let Ok(meta) = entry.metadata() else {
            continue;
        };
        let old = meta
            .modified()
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age >= TEMP_AGE);
        if !meta.is_file() || Some(meta.uid()) != me || !old {
            continue;
        }
        if crate::host::ownership::lock_is_free(&entry.path()) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// FIFO `path` opened for writing now, while its reader is there, and held to the end: a
/// blocking open with no reader would wait forever, and a probe closed again would hand
/// the reader its end of file. `Err(None)`: no process reads it (the non-blocking open
/// fails with ENXIO); the blocking open that follows returns at once, and once it holds the
/// FIFO the probe can close without the reader seeing an end.
fn hold_fifo(path: &Path) -> Result<std::fs::File, Option<String>> {
    use std::os::unix::fs::OpenOptionsExt;
    let why = |e: std::io::Error| format!("cannot open FIFO {}: {e}", path.display());
    let probe = OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path);
    let _probe = match probe {
        Err(e) if e.raw_os_error() == Some(libc::ENXIO) => return Err(None),
        other => other.map_err(|e| Some(why(e)))?,
    };
    OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(|e| Some(why(e)))
}

/// The refusal of a FIFO that nobody reads.
fn no_reader(flag: &str, path: &Path) -> String {
    format!(
        "{flag} {} is a FIFO that no process reads, so writing it would wait forever; start \
         its reader first (e.g. `cat {} &`)",
        path.display(),
        path.display()
    )
}

/// How many symlinks are followed before giving up (as the kernel's ELOOP limit).
const MAX_LINKS: usize = 40;

/// An output opened (checked) before the command measures anything.
#[derive(Debug)]
pub struct OutFile {
    shown: PathBuf,
    flag: &'static str,
    kind: Kind,
}

#[derive(Debug)]
enum Kind {
    Stdout,
    /// A device: opened for writing at the end, never replaced.
    Special(PathBuf),
    /// A FIFO, held open from the start (see [`hold_fifo`]).
    Fifo(std::fs::File),
    /// A regular file (or none yet) at `target`, with a temp file ready in its directory.
    Regular {
        target: PathBuf,
        tmp: tempfile::NamedTempFile,
        existing: Option<Box<std::fs::Metadata>>,
    },
}

impl OutFile {
    /// Checks `path` (given by `flag`) and prepares its write. `protect` are files that must
    /// never be overwritten (the database of this command).
    pub fn open(path: &Path, flag: &'static str, protect: &[PathBuf]) -> anyhow::Result<OutFile> {
        let usage = |why: String| anyhow::Error::new(UsageError(why));
        let fail = |e: std::io::Error| {
            // tempfile's errors name its random file; say the OS error alone.
            let e = e
                .raw_os_error()
                .map_or(e, std::io::Error::from_raw_os_error);
            usage(format!(
                "cannot write {flag} {}: {e}; choose a path in a writable directory",
                path.display()
            ))
        };
        let out = |kind| OutFile {
            shown: path.to_path_buf(),
            flag,
            kind,
        };
        if path == Path::new("-") {
            return Ok(out(Kind::Stdout));
        }
        // What is there, with every link followed by the kernel: /dev/stdout and the
        // /proc/self/fd links it points to name a pipe or terminal no path can resolve to.
        let existing = std::fs::metadata(path).ok();
        if let Some(m) = &existing {
            refuse_protected(m, path, flag, protect)?;
            if m.is_dir() {
                return Err(usage(format!(
                    "{flag} {} is a directory; give a file name",
                    path.display()
                )));
            }
            if m.file_type().is_socket() {
                return Err(usage(format!(
                    "{flag} {} is a socket, which cannot be written like a file; give a file name",
                    path.display()
                )));
            }
            if m.file_type().is_fifo() {
                let held =
                    hold_fifo(path).map_err(|e| usage(e.unwrap_or(no_reader(flag, path))))?;
                return Ok(out(Kind::Fifo(held)));
            }
            if !m.is_file() {
                return Ok(out(Kind::Special(path.to_path_buf())));
            }
        }
        let target = resolve(path).map_err(fail)?;
        let tmp = temp_beside(&target).map_err(|(e, dir)| match NoRoom::of_io(&e) {
            Some(no_room) => no_room_error(flag, path, no_room, &dir),
            None => fail(e),
        })?;
        Ok(out(Kind::Regular {
            target,
            tmp,
            existing: existing.map(Box::new),
        }))
    }

    /// Whether this output is stdout (`-`).
    pub fn is_stdout(&self) -> bool {
        matches!(self.kind, Kind::Stdout)
    }

    /// The path as the user gave it.
    pub fn path(&self) -> &Path {
        &self.shown
    }

    /// Writes `text` by the rule in the module documentation, every character that would act
    /// instead of showing escaped (`model::visible`: an HTML page, a Markdown file or folded
    /// stacks carry no control or bidi character from a store, a record or a program).
    pub fn write(self, text: &str) -> anyhow::Result<()> {
        let text = crate::model::visible::visible(text);
        match self.kind {
            Kind::Stdout => console::out(&text),
            _ => self.write_bytes(text.as_bytes()),
        }
    }

    /// Writes `bytes` as they are by the same rule: a binary format (`export --format pprof`).
    pub fn write_bytes(self, bytes: &[u8]) -> anyhow::Result<()> {
        let near = match &self.kind {
            Kind::Regular { target, .. } => target.clone(),
            _ => self.shown.clone(),
        };
        let fail = |e: std::io::Error| match NoRoom::of_io(&e) {
            Some(no_room) => {
                let dir = full_disk::existing_dir(&near).unwrap_or_else(|| near.clone());
                no_room_error(self.flag, &self.shown, no_room, &dir)
            }
            None => anyhow::anyhow!("cannot write {} {}: {e}", self.flag, self.shown.display()),
        };
        match self.kind {
            Kind::Stdout => console::out_bytes(bytes),
            Kind::Special(target) => OpenOptions::new()
                .write(true)
                .open(&target)
                .and_then(|mut f| f.write_all(bytes))
                .map_err(fail),
            Kind::Fifo(mut held) => held.write_all(bytes).map_err(fail),
            Kind::Regular {
                target,
                tmp,
                existing,
            } => replace(&target, tmp, existing.as_deref(), bytes).map_err(fail),
        }
    }
}

/// The one sentence of output `path` (given by `flag`) that found no room in `dir`: no
/// usage error, since the path is right and the room is not.
fn no_room_error(flag: &str, path: &Path, no_room: NoRoom, dir: &Path) -> anyhow::Error {
    anyhow::anyhow!(full_disk::sentence(
        &format!("cannot write {flag} {}", path.display()),
        no_room,
        dir,
        &format!("write {flag} to another file system"),
    ))
}

/// Writes the temp file and renames it over `target`, keeping the old file's mode and owner;
/// rewrites in place when those cannot be kept by a rename.
fn replace(
    target: &Path,
    mut tmp: tempfile::NamedTempFile,
    existing: Option<&std::fs::Metadata>,
    bytes: &[u8],
) -> std::io::Result<()> {
    if let Some(m) = existing {
        let kept = m.nlink() == 1
            && std::os::unix::fs::fchown(tmp.as_file(), Some(m.uid()), Some(m.gid())).is_ok();
        if !kept {
            drop(tmp);
            return in_place(target, bytes);
        }
        tmp.as_file().set_permissions(m.permissions())?;
    }
    // Written through the file itself: tempfile's own writer wraps the OS error in one
    // that names its random file, which would hide a full disk from `NoRoom::of_io`.
    tmp.as_file_mut().write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(target).map_err(|e| e.error)?;
    Ok(())
}

fn in_place(target: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut f = OpenOptions::new().write(true).truncate(true).open(target)?;
    f.write_all(bytes)?;
    f.sync_all()
}

/// `path` with every symlink of its last component followed (a dangling link resolves to
/// where the file will be created). Links in the directories above are left to the kernel.
fn resolve(path: &Path) -> std::io::Result<PathBuf> {
    let mut p = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let link = std::fs::read_link(&p)?;
                p = match p.parent() {
                    Some(dir) => dir.join(link),
                    None => link,
                };
            }
            _ => return Ok(p),
        }
    }
    Err(std::io::Error::other("too many levels of symbolic links"))
}

/// Refuses an output that is the database (or its -wal/-shm) by inode, not by name.
fn refuse_protected(
    m: &std::fs::Metadata,
    path: &Path,
    flag: &str,
    protect: &[PathBuf],
) -> anyhow::Result<()> {
    for db in protect {
        for suffix in ["", "-wal", "-shm"] {
            let mut name = db.clone().into_os_string();
            name.push(suffix);
            let same =
                std::fs::metadata(&name).is_ok_and(|d| d.dev() == m.dev() && d.ino() == m.ino());
            if same {
                return Err(UsageError(format!(
                    "{flag} {} is the database {}; write the output to another file",
                    path.display(),
                    Path::new(&name).display()
                ))
                .into());
            }
        }
    }
    Ok(())
}

/// Opens an optional output (`None` when the flag was not given).
pub fn open_opt(
    path: Option<&Path>,
    flag: &'static str,
    protect: &[PathBuf],
) -> anyhow::Result<Option<OutFile>> {
    path.map(|p| OutFile::open(p, flag, protect)).transpose()
}

#[cfg(test)]
mod temp_tests {
    use super::*;

    #[test]
    fn only_old_unlocked_temps_of_ours_are_removed() {
        let dir = tempfile::tempdir().expect("dir");
        let file = |name: &str, age_s: u64| {
            let p = dir.path().join(name);
            let f = std::fs::File::create(&p).expect("create");
            let then = std::time::SystemTime::now() - std::time::Duration::from_secs(age_s);
            f.set_modified(then).expect("set mtime");
            (p, f)
        };
        let (abandoned, _) = file(".sysmeter-out-dead", 3600);
        let (held, held_file) = file(".sysmeter-out-live", 3600);
        held_file.lock().expect("lock");
        let (fresh, _) = file(".sysmeter-out-new", 0);
        let (other, _) = file("report.html", 3600);
        remove_abandoned_temps(dir.path());
        assert!(!abandoned.exists(), "a killed sysmeter's temp goes");
        assert!(held.exists() && fresh.exists() && other.exists());
        drop(held_file);
    }
}
