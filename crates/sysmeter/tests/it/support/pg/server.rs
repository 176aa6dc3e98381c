//! A PostgreSQL database of its own for one test (RAII: removed on drop).
//!
//! Where the server comes from:
//! - `SYSMETER_TEST_PG` set (a connection URL): that server. Each test gets a fresh schema,
//!   selected with `?options=-csearch_path%3D<schema>` in the URL it hands out, and dropped
//!   afterwards. An unreachable configured server fails the test: it was asked for.
//! - else, when the server binaries are installed (`/usr/lib/postgresql/<N>/bin`, or
//!   `initdb` and `pg_ctl` on PATH): a private server started for the test in a temp
//!   directory, on 127.0.0.1 at a free port (`initdb -A trust`, `pg_ctl start -w`), as the
//!   `postgres` user when we are root (PostgreSQL refuses to run as root), else as
//!   ourselves; stopped (`pg_ctl stop -m immediate`) and deleted on drop. It also gets a
//!   fresh schema, so both ways run the same code.
//! - else: a reason, which the test reports with `skip!` (capability `postgres`).

use std::fs;
use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use postgres::{Client, NoTls};

use crate::support::is_root;

/// A fresh, empty schema on a PostgreSQL server; dropped (and a private server stopped) on drop.
pub struct TestDb {
    /// Connection URL that puts everything in this test's schema.
    pub url: String,
    /// URL of the server without the schema option, for administration.
    admin_url: String,
    schema: String,
    /// Declared last: dropped after the schema is removed.
    _server: Option<PrivateServer>,
}

impl TestDb {
    /// A database for the test, or why there can be none here.
    pub fn new() -> Result<TestDb, String> {
        let (admin_url, server) = match std::env::var("SYSMETER_TEST_PG") {
            Ok(url) if !url.is_empty() => (url, None),
            _ => {
                let server = PrivateServer::start()?;
                (server.url(), Some(server))
            }
        };
        let schema = format!(
            "sysmeter_test_{}_{:08x}",
            std::process::id(),
            fastrand::u32(..)
        );
        admin(&admin_url)
            .batch_execute(&format!("CREATE SCHEMA {schema}"))
            .unwrap_or_else(|e| panic!("cannot create schema {schema} on {admin_url}: {e}"));
        let separator = if admin_url.contains('?') { '&' } else { '?' };
        Ok(TestDb {
            url: format!("{admin_url}{separator}options=-csearch_path%3D{schema}"),
            admin_url,
            schema,
            _server: server,
        })
    }

    /// A client connected to this test's schema.
    pub fn client(&self) -> Client {
        Client::connect(&self.url, NoTls)
            .unwrap_or_else(|e| panic!("cannot connect to {}: {e}", self.url))
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        // Best effort: a private server is deleted anyway, and a failure here must not hide
        // the test's own panic.
        if let Ok(mut c) = Client::connect(&self.admin_url, NoTls) {
            let _ = c.batch_execute(&format!("DROP SCHEMA IF EXISTS {} CASCADE", self.schema));
        }
    }
}

fn admin(url: &str) -> Client {
    Client::connect(url, NoTls).unwrap_or_else(|e| {
        panic!("cannot connect to PostgreSQL at {url} (SYSMETER_TEST_PG or the test server): {e}")
    })
}

/// A PostgreSQL server of our own in a temp directory.
struct PrivateServer {
    bin: PathBuf,
    dir: tempfile::TempDir,
    port: u16,
    /// uid and gid to run the server as (the `postgres` user when we are root).
    user: Option<(u32, u32)>,
}

impl PrivateServer {
    fn start() -> Result<PrivateServer, String> {
        let bin = server_bin_dir().ok_or(
            "no PostgreSQL server binaries (initdb, pg_ctl); install the postgresql package \
             or set SYSMETER_TEST_PG to a server URL",
        )?;
        let user = if is_root() {
            Some(postgres_user().ok_or(
                "running as root and there is no `postgres` user to run the test server as; \
                 set SYSMETER_TEST_PG to a server URL",
            )?)
        } else {
            None
        };
        let dir = tempfile::tempdir().expect("tempdir for the test server");
        if let Some((uid, gid)) = user {
            std::os::unix::fs::chown(dir.path(), Some(uid), Some(gid)).expect("chown temp dir");
        }
        let mut server = PrivateServer {
            bin,
            dir,
            port: 0,
            user,
        };
        let init = server.run_on_data(
            "initdb",
            &[
                "-A".as_ref(),
                "trust".as_ref(),
                "-U".as_ref(),
                "postgres".as_ref(),
                "-E".as_ref(),
                "UTF8".as_ref(),
                "--no-locale".as_ref(),
                "--no-sync".as_ref(),
            ],
        );
        assert!(init.status.success(), "initdb failed:\n{}", text(&init));
        // A free port can be taken between our probe and the server's bind: try a few.
        for _ in 0..3 {
            server.port = free_port();
            if server.pg_ctl_start() {
                return Ok(server);
            }
        }
        let log = fs::read_to_string(server.dir.path().join("log")).unwrap_or_default();
        panic!("the test PostgreSQL server did not start; its log:\n{log}");
    }

    fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    fn pg_ctl_start(&self) -> bool {
        let log = self.dir.path().join("log");
        // fsync off: the tests check behaviour, not durability, and share 2 CPUs.
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
            self.port,
            self.dir.path().display()
        );
        let out = self.run_on_data(
            "pg_ctl",
            &[
                "-l".as_ref(),
                log.as_os_str(),
                "-w".as_ref(),
                "-t".as_ref(),
                "60".as_ref(),
                "-o".as_ref(),
                options.as_ref(),
                "start".as_ref(),
            ],
        );
        out.status.success()
    }

    /// [`Self::run`] of a binary that works on the data directory: `-D DATA ARGS`.
    fn run_on_data(&self, program: &str, args: &[&std::ffi::OsStr]) -> Output {
        let data = self.data_dir();
        let args = [&["-D".as_ref(), data.as_os_str()], args].concat();
        self.run(program, &args)
    }

    /// Runs a server binary as the server's user, in the temp directory (the `postgres`
    /// user may not be allowed into our working directory).
    fn run(&self, program: &str, args: &[&std::ffi::OsStr]) -> Output {
        let mut cmd = Command::new(self.bin.join(program));
        cmd.args(args).current_dir(self.dir.path());
        if let Some((uid, gid)) = self.user {
            cmd.uid(uid).gid(gid);
        }
        cmd.output()
            .unwrap_or_else(|e| panic!("cannot run {program}: {e}"))
    }
}

impl Drop for PrivateServer {
    fn drop(&mut self) {
        let _ = self.run_on_data(
            "pg_ctl",
            &[
                "-m".as_ref(),
                "immediate".as_ref(),
                "-w".as_ref(),
                "stop".as_ref(),
            ],
        );
        // The TempDir removes the files (root may delete the postgres user's files).
    }
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The directory holding `initdb` and `pg_ctl`: the newest Debian
/// `/usr/lib/postgresql/<N>/bin`, else the one on PATH.
fn server_bin_dir() -> Option<PathBuf> {
    let has_tools = |d: &Path| d.join("initdb").is_file() && d.join("pg_ctl").is_file();
    let mut debian: Vec<(u32, PathBuf)> = fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let version = e.file_name().to_str()?.parse().ok()?;
            Some((version, e.path().join("bin")))
        })
        .filter(|(_, d)| has_tools(d))
        .collect();
    debian.sort();
    if let Some((_, dir)) = debian.pop() {
        return Some(dir);
    }
    std::env::split_paths(&std::env::var_os("PATH")?).find(|d| has_tools(d))
}

/// uid and gid of the `postgres` user, from /etc/passwd.
fn postgres_user() -> Option<(u32, u32)> {
    let passwd = fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|line| {
        let fields: Vec<&str> = line.split(':').collect();
        match fields.as_slice() {
            ["postgres", _, uid, gid, ..] => Some((uid.parse().ok()?, gid.parse().ok()?)),
            _ => None,
        }
    })
}

/// A TCP port on 127.0.0.1 that was free a moment ago.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port on 127.0.0.1")
}
