//! The cases of `hostile.rs` about the neighbours of a sysmeter: another user running it
//! (the tracers say it is a permission problem, exit 2), a process that dies while observed
//! (every diagnosis stops with it and says so; `attach_end.rs` times each one), two imports
//! into one database at once, a server whose log pipe has no reader (it must go on
//! answering), a record whose flame graph carries a script (the page's policy stays), and a
//! bench started the way orchestrators start programs (stdout a read-write /dev/null).

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;

use super::setup::v;
use super::{Case, Ctx, Io, nothing, s};
use crate::support::cmd::quick_bench;
use crate::support::serve::Serve;
use crate::support::{is_root, sysmeter};

/// What the cases started and the table ends when it is done: targets that outlive their
/// case, the server, and small file systems mounted for a case (`audit.rs`).
#[derive(Default)]
pub struct Kept {
    children: Mutex<Vec<Child>>,
    server: Mutex<Option<Serve>>,
    mounts: Mutex<Vec<std::path::PathBuf>>,
}

impl Kept {
    /// Keeps `child` running until the table is done.
    pub fn child(&self, child: Child) {
        if let Ok(mut kept) = self.children.lock() {
            kept.push(child);
        }
    }

    /// Unmounts `path` when the table is done, however it ends.
    pub fn mount(&self, path: std::path::PathBuf) {
        if let Ok(mut kept) = self.mounts.lock() {
            kept.push(path);
        }
    }
}

impl Drop for Kept {
    fn drop(&mut self) {
        let children = self.children.get_mut().map(std::mem::take);
        for mut child in children.unwrap_or_default() {
            let _ = child.kill();
            let _ = child.wait();
        }
        for path in self
            .mounts
            .get_mut()
            .map(std::mem::take)
            .unwrap_or_default()
        {
            let _ = Command::new("umount").arg("-l").arg(&path).status();
        }
    }
}

/// A copy of sysmeter that user nobody may run (the case directory opened for traversal).
fn public_binary(c: &Ctx) -> Result<String, String> {
    let setpriv = Command::new("setpriv").arg("--version").output().is_ok();
    if !is_root() || !setpriv {
        return Err("running as another user needs root and setpriv (util-linux)".into());
    }
    let dir = c.dir.join("public");
    let bin = dir.join("sysmeter");
    if !bin.exists() {
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        std::fs::copy(assert_cmd::cargo::cargo_bin("sysmeter"), &bin).map_err(|e| e.to_string())?;
        for (p, mode) in [(&c.dir, 0o711), (&dir, 0o755), (&bin, 0o755)] {
            let perms = std::fs::Permissions::from_mode(mode);
            std::fs::set_permissions(p, perms).map_err(|e| e.to_string())?;
        }
    }
    Ok(s(&bin).to_string())
}

/// `sysmeter COMMAND…` as user nobody.
fn as_nobody(c: &Ctx, cmd: &str) -> Result<Vec<String>, String> {
    let mut args = v(&["{nobody}", &public_binary(c)?]);
    args.extend(cmd.split_whitespace().map(String::from));
    Ok(args)
}

/// A `sleep 1` whose parent (`sleep 300`) never reaps it, so it ends as a zombie that keeps
/// its /proc entry; its PID.
fn dying_target(c: &Ctx) -> Result<String, String> {
    let mut parent = Command::new("sh")
        .args(["-c", "sleep 1 & echo $!; exec sleep 300"])
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start sh: {e}"))?;
    let mut line = String::new();
    if let Some(out) = parent.stdout.take() {
        let _ = BufReader::new(out).read_line(&mut line);
    }
    c.kept.child(parent);
    Ok(line.trim().to_string())
}

/// `sysmeter COMMAND… --duration 120 -p PID` of a process that ends after 1 s, when this
/// machine lets `need` run.
fn at_dying(
    c: &Ctx,
    cmd: &str,
    need: Result<(), crate::support::skip::Missing>,
) -> Result<Vec<String>, String> {
    need.map_err(|m| m.reason)?;
    let mut args: Vec<String> = cmd.split_whitespace().map(String::from).collect();
    args.extend(v(&[
        "--no-store",
        "--duration",
        "120",
        "-p",
        &dying_target(c)?,
    ]));
    Ok(args)
}

/// A target that dies while `$cmd` observes it: exit 0, the sentence that it ended.
macro_rules! target_dies {
    ($name:literal, $cmd:literal, $need:expr) => {
        Case {
            name: $name,
            args: |c| at_dying(c, $cmd, $need),
            code: 0,
            says: "observing stopped with it",
            runs_after: 1,
            io: Io::Piped,
            after: nothing,
        }
    };
}

/// Two imports of the same two records into one database at once (the second file is
/// written here): both succeed, each run stored once.
fn imports_at_once(c: &Ctx) -> Result<Vec<String>, String> {
    let other = c.edited("other-run.json", |d| {
        d["id"] = "20261123T000000Z-0th3".into()
    });
    let (db, good) = (c.db(), s(&c.good).to_string());
    let script = format!(
        "\"$0\" import --db {db} {good} {other} >/dev/null & a=$!; \
         \"$0\" import --db {db} {other} {good} >/dev/null; b=$?; wait $a; exit $(($? | b))"
    );
    Ok(v(&["{sh}", &script]))
}

/// A bench of `net.rtt` against a server whose stderr is a pipe without a reader, started
/// once for the table.
fn bench_against_dead_log(c: &Ctx, token: &str) -> Result<Vec<String>, String> {
    let mut server = c.kept.server.lock().map_err(|e| e.to_string())?;
    let server = server.get_or_insert_with(|| {
        Serve::start_with_dead_stderr(&["--bind", "127.0.0.1:0", "--token", "s3cret"])
    });
    let addr = server.addr.to_string();
    let mut args = quick_bench("net.rtt");
    args.extend(v(&["--remote", &addr, "--token", token]));
    Ok(args)
}

/// The server of [`bench_against_dead_log`] still runs and answers a bench.
fn server_still_answers(c: &Ctx) -> Result<(), String> {
    let mut server = c.kept.server.lock().map_err(|e| e.to_string())?;
    let server = server.as_mut().ok_or("no server was started")?;
    if !server.alive() {
        return Err("the server died".into());
    }
    let addr = server.addr.to_string();
    let ok = sysmeter()
        .args(quick_bench("net.rtt"))
        .args(["--remote", &addr, "--token", "s3cret"])
        .output()
        .map_err(|e| e.to_string())?;
    match ok.status.success() && server.alive() {
        true => Ok(()),
        false => Err(format!(
            "the server no longer answers: {}",
            String::from_utf8_lossy(&ok.stderr)
        )),
    }
}

/// A record whose flame graph runs a script and fetches from the network, rendered to HTML.
fn hostile_flame_page(c: &Ctx) -> Result<Vec<String>, String> {
    let svg = "<svg xmlns=\"http://www.w3.org/2000/svg\"><script>fetch('http://192.0.2.1/')\
               </script><image href=\"http://192.0.2.1/x.png\"/></svg>";
    let record = c.edited("flame.json", |d| {
        d["results"][0]["artifacts"] = serde_json::json!([
            {"name": "flamegraph", "media_type": "image/svg+xml", "content": svg}
        ]);
    });
    Ok(v(&["report", &record, "--html", &c.path("flame.html")]))
}

/// The page of [`hostile_flame_page`] keeps its policy: nothing loads from the network.
fn page_keeps_its_policy(c: &Ctx) -> Result<(), String> {
    let page = std::fs::read_to_string(c.path("flame.html")).map_err(|e| e.to_string())?;
    let policy = page.contains("Content-Security-Policy") && page.contains("default-src 'none'");
    match policy && page.contains("<iframe class=\"flame\"") {
        true => Ok(()),
        false => Err("the page has no Content-Security-Policy or no flame graph frame".into()),
    }
}

use crate::support::needs::{off_cpu, perf, tracepoints};

pub const NEIGHBOURS: &[Case] = &[
    Case {
        name: "locks-unprivileged",
        args: |c| as_nobody(c, "locks --no-store -- /bin/true"),
        code: 2,
        says: "root",
        runs_after: 1,
        io: Io::Piped,
        after: nothing,
    },
    Case {
        name: "calls-unprivileged",
        args: |c| as_nobody(c, "calls --backend uprobe --no-store -- /bin/true"),
        code: 2,
        says: "run as root",
        runs_after: 1,
        io: Io::Piped,
        after: nothing,
    },
    target_dies!("run-target-dies", "run", Ok(())),
    target_dies!("trace-target-dies", "trace", tracepoints()),
    target_dies!("locks-target-dies", "locks --backend perf", tracepoints()),
    target_dies!("profile-target-dies", "profile", perf()),
    target_dies!(
        "offcpu-target-dies",
        "profile --off-cpu --backend perf",
        off_cpu()
    ),
    Case {
        name: "imports-at-once",
        args: imports_at_once,
        code: 0,
        says: "",
        runs_after: 3,
        io: Io::Piped,
        after: nothing,
    },
    Case {
        name: "serve-dead-log-answers",
        args: |c| bench_against_dead_log(c, "s3cret"),
        code: 0,
        says: "",
        runs_after: 1,
        io: Io::Piped,
        after: server_still_answers,
    },
    Case {
        name: "serve-dead-log-refuses-a-wrong-token",
        args: |c| bench_against_dead_log(c, "wrong"),
        code: 1,
        says: "wrong token",
        runs_after: 1,
        io: Io::Piped,
        after: server_still_answers,
    },
    Case {
        name: "html-hostile-flame-graph",
        args: hostile_flame_page,
        code: 0,
        says: "",
        runs_after: 1,
        io: Io::Piped,
        after: page_keeps_its_policy,
    },
    Case {
        name: "bench-devnull-rw",
        args: |_| Ok(quick_bench("os.syscall")),
        code: 0,
        says: "",
        runs_after: 1,
        io: Io::DevNullRw,
        after: nothing,
    },
];
