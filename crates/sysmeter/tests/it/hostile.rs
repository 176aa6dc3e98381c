//! Hostile and careless input, table-driven through the binary (issue 29): files from other
//! machines that the store cannot hold or a terminal must not see, devices, FIFOs, sockets
//! and symlinks where a file is expected, mistyped databases, targets that cannot be
//! observed (sysmeter itself, a zombie, a kernel thread), dead and odd standard streams.
//! Each case gives its exit code and a phrase of its one `error:` sentence, and after
//! every case the state is checked: the store holds exactly the runs the case expects,
//! each one complete; the garbage file posing as a database is byte-for-byte unchanged;
//! no mistyped database path was created; no temporary output file is left; nothing
//! panicked or called itself a bug; and what a case checks beyond that (a server still
//! answering, a page's policy) holds. The cases are in `hostile/files.rs`,
//! `hostile/places.rs`, `hostile/neighbours.rs` (other users, processes that die while
//! observed, concurrent imports, a server with a dead log pipe, orchestrators' streams) and
//! `hostile/owners.rs` (whose test directories a bench may remove) and `hostile/audit.rs`
//! (issue 47's findings that need a killed bench, a store written by SQL, or a full disk).
//! Nothing any case prints holds a raw control or bidi character.

#[macro_use]
mod setup;
mod audit;
mod corpus;
mod files;
mod fuzz;
mod neighbours;
mod owners;
mod places;
mod render_fuzz;

use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::support::fleet::fleet_files;
use crate::support::{json_out, stdout_of, sysmeter};

/// The garbage file every case must leave untouched.
const GARBAGE: &[u8] = b"this is not an SQLite database\n";

/// How a case's standard streams are set up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Io {
    /// Pipes, read by the test.
    Piped,
    /// stderr is a pipe whose reader has gone (a dead log pipe).
    DeadStderr,
    /// stdout is `/dev/null` opened read-write (Python's `subprocess.DEVNULL`).
    DevNullRw,
}

/// One case: its command line (or why it cannot run here), exit code, a phrase of its
/// error (or, exiting 0, of its output; empty: none is read), how many runs the store holds
/// after it, and what else must hold after it (`after`; [`nothing`] for most).
pub struct Case {
    pub name: &'static str,
    pub args: fn(&Ctx) -> Result<Vec<String>, String>,
    pub code: i32,
    pub says: &'static str,
    pub runs_after: usize,
    pub io: Io,
    pub after: fn(&Ctx) -> Result<(), String>,
}

/// The `after` of a case that checks nothing beyond the common state.
pub fn nothing(_: &Ctx) -> Result<(), String> {
    Ok(())
}

/// What the cases work in: a directory, a store holding one run, a second run's file not
/// yet stored, a template record to corrupt, and processes to point `-p` at.
pub struct Ctx {
    pub dir: PathBuf,
    pub good: PathBuf,
    pub template: PathBuf,
    pub garbage: PathBuf,
    pub typo: PathBuf,
    base_db: PathBuf,
    db: PathBuf,
    _socket: std::os::unix::net::UnixListener,
    /// Processes and servers the cases started, ended when the table is done.
    pub kept: neighbours::Kept,
}

impl Ctx {
    fn new(dir: &Path) -> Ctx {
        let files = fleet_files(dir);
        let base_db = dir.join("base.db");
        let out = stdout_of(sysmeter().args(["import", "--db", s(&base_db), s(&files[0])]));
        assert!(out.contains("1 run(s) imported"), "{out}");
        let garbage = dir.join("garbage.db");
        std::fs::write(&garbage, GARBAGE).expect("write garbage");
        let socket = std::os::unix::net::UnixListener::bind(dir.join("sock")).expect("socket");
        Ctx {
            dir: dir.to_path_buf(),
            good: files[1].clone(),
            template: files[2].clone(),
            garbage,
            typo: dir.join("typo"),
            db: dir.join("case.db"),
            base_db,
            _socket: socket,
            kept: neighbours::Kept::default(),
        }
    }

    /// The database of the current case (a fresh copy of the one-run store).
    pub fn db(&self) -> String {
        s(&self.db).to_string()
    }

    /// A path in the case directory.
    pub fn path(&self, name: &str) -> String {
        s(&self.dir.join(name)).to_string()
    }

    /// `import --db DB BAD GOOD`: the bad file refused, the good one still imported.
    pub fn import_beside_good(&self, bad: &str) -> Vec<String> {
        let good = s(&self.good).to_string();
        vec!["import".into(), "--db".into(), self.db(), bad.into(), good]
    }

    /// The template record edited by `edit`, written as `name`.
    pub fn edited(&self, name: &str, edit: impl FnOnce(&mut serde_json::Value)) -> String {
        let text = std::fs::read_to_string(&self.template).expect("read template");
        let mut doc: serde_json::Value = serde_json::from_str(&text).expect("json");
        edit(&mut doc);
        let path = self.dir.join(name);
        std::fs::write(&path, doc.to_string()).expect("write edited record");
        s(&path).to_string()
    }
}

pub fn s(p: &Path) -> &str {
    p.to_str().expect("temp paths are UTF-8")
}

/// Runs `args` with the streams of `io`; (exit code, stdout, stderr).
fn run(args: &[String], io: Io) -> (Option<i32>, String, String) {
    let bin = assert_cmd::cargo::cargo_bin("sysmeter");
    let mut cmd = match args.first().map(String::as_str) {
        // `-p $$` of a shell that then execs sysmeter: the PID is sysmeter's own.
        Some("{self}") => {
            let mut c = Command::new("sh");
            c.arg("-c").arg("exec \"$0\" \"$@\" -p $$").arg(&bin);
            c.args(&args[1..]);
            c
        }
        // A shell script (`$0` is sysmeter), for several sysmeters at once.
        Some("{sh}") => {
            let mut c = Command::new("sh");
            c.arg("-c").args(&args[1..2]).arg(&bin);
            c
        }
        // As user nobody, through a copy of sysmeter any user may run (`args[1]`).
        Some("{nobody}") => {
            let mut c = Command::new("setpriv");
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"]);
            c.args(&args[1..]);
            c
        }
        _ => {
            let mut c = Command::new(&bin);
            c.args(args);
            c
        }
    };
    cmd.env_remove("SYSMETER_DB").env("NO_COLOR", "1");
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    match io {
        Io::Piped => {}
        Io::DeadStderr => {
            let (reader, writer) = std::io::pipe().expect("pipe");
            drop(reader);
            cmd.stderr(writer);
        }
        Io::DevNullRw => {
            let null = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open("/dev/null");
            cmd.stdout(null.expect("open /dev/null"));
        }
    }
    let mut child = cmd.spawn().expect("start sysmeter");
    let (mut out, mut err) = (String::new(), String::new());
    if let Some(mut o) = child.stdout.take() {
        o.read_to_string(&mut out).expect("read stdout");
    }
    if let Some(mut e) = child.stderr.take() {
        e.read_to_string(&mut err).expect("read stderr");
    }
    let status = child.wait().expect("wait sysmeter");
    (status.code(), out, err)
}

/// The runs of `db` as (id, complete) pairs.
fn stored(db: &str) -> Vec<(String, bool)> {
    let listed = json_out(sysmeter().args(["history", "--format", "json", "--db", db]));
    let runs = listed.as_array().expect("runs").iter();
    runs.map(|r| {
        let complete = r["finished_ns"].is_i64() && r["interrupted"] == false;
        (r["id"].as_str().expect("id").to_string(), complete)
    })
    .collect()
}

/// The hostname of run `id` in `db`.
fn host_of(db: &str, id: &str) -> String {
    let run = json_out(sysmeter().args(["show", id, "--format", "json", "--db", db]));
    run["host"]["hostname"]
        .as_str()
        .expect("hostname")
        .to_string()
}

/// The exit code, and the one error sentence (or, for a success, the phrase of its output).
fn check_output(case: &Case, args: &[String], code: Option<i32>, (out, err): (&str, &str)) {
    let name = case.name;
    assert_eq!(
        code,
        Some(case.code),
        "{name}: {args:?}\nstdout: {out}\nstderr: {err}"
    );
    let acting = (out.chars().chain(err.chars())).find(|c| sysmeter::model::visible::acts(*c));
    assert_eq!(acting, None, "{name}: a raw control or bidi character");
    if case.io == Io::Piped && case.code != 0 {
        let errors = err.lines().filter(|l| l.starts_with("error:")).count();
        assert_eq!(errors, 1, "{name}: one error sentence: {err}");
        assert!(err.contains(case.says), "{name}: {err}");
    } else if case.code == 0 {
        let said = out.contains(case.says) || err.contains(case.says);
        assert!(said, "{name}: does not say {:?}: {out}\n{err}", case.says);
    }
}

/// What must hold after every case (see the module documentation).
fn check_state(ctx: &Ctx, case: &Case, err: &str) {
    let name = case.name;
    let runs = stored(&ctx.db());
    assert_eq!(
        runs.len(),
        case.runs_after,
        "{name}: runs stored after: {runs:?}"
    );
    assert!(
        runs.iter().all(|r| r.1),
        "{name}: an incomplete run: {runs:?}"
    );
    let garbage = std::fs::read(&ctx.garbage).expect("read garbage");
    assert_eq!(
        garbage, GARBAGE,
        "{name}: the garbage 'database' was changed"
    );
    assert!(
        !ctx.typo.exists(),
        "{name}: a mistyped --db path was created"
    );
    let temps = std::fs::read_dir(&ctx.dir).expect("list").flatten();
    let left: Vec<_> = temps
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".sysmeter-out-"))
        .collect();
    assert!(left.is_empty(), "{name}: temporary outputs left: {left:?}");
    for bad in ["panicked", "this is a bug", "RUST_BACKTRACE"] {
        assert!(!err.contains(bad), "{name}: {err}");
    }
    let mode = std::fs::metadata(&ctx.db).expect("db").mode() & 0o777;
    assert_eq!(
        mode & 0o077,
        0,
        "{name}: the database is readable by others ({mode:o})"
    );
}

#[test]
fn hostile_and_careless_input_is_refused_and_loses_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ctx = Ctx::new(dir.path());
    let mut ran = 0;
    let cases = files::FILES
        .iter()
        .chain(places::PLACES)
        .chain(neighbours::NEIGHBOURS)
        .chain(owners::OWNERS)
        .chain(audit::AUDIT);
    for case in cases {
        std::fs::copy(&ctx.base_db, &ctx.db).expect("fresh copy of the store");
        let args = match (case.args)(&ctx) {
            Ok(args) => args,
            Err(why) => {
                println!("skipped: {}: {why}", case.name);
                continue;
            }
        };
        let (code, out, err) = run(&args, case.io);
        check_output(case, &args, code, (&out, &err));
        check_state(&ctx, case, &err);
        if let Err(why) = (case.after)(&ctx) {
            panic!("{}: {why}\nstdout: {out}\nstderr: {err}", case.name);
        }
        ran += 1;
    }
    println!(
        "{ran} of {} cases ran",
        files::FILES.len()
            + places::PLACES.len()
            + neighbours::NEIGHBOURS.len()
            + owners::OWNERS.len()
            + audit::AUDIT.len()
    );
    assert!(ran >= 40, "only {ran} cases could run here");
}
