//! The cases of `hostile.rs` for the findings of issue 47's audit that need more than a
//! file (the others are in `files.rs`: a bidi hostname, a value past any chart, the hostname
//! override, a run dated years ahead): a bench killed with SIGKILL and then `prune --keep 1`
//! (the complete run stays `latest`; the killed one goes once a run of its host ended after
//! it), hostnames that act on a terminal already stored (by SQL: an older build, another
//! member of a shared store) printed by `history --all-hosts` and `fleet`, and the disk: a
//! full file system and an exhausted quota under the store, and `--out` on a full disk
//! (the run stored, the report on the command's stream, one sentence naming the disk).
//!
//! A full disk is a 1 MiB tmpfs (root); an exhausted quota is EDQUOT injected into the
//! writes by `strace` (this kernel's tmpfs and ext4 here have no quota support): either is
//! skipped, with its reason, where it cannot be had.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use super::setup::v;
use super::{Case, Ctx, Io, nothing, s};
use crate::support::full_disk::{fill, mount_small_tmpfs, strace_injects};
use crate::support::{json_out, sysmeter};

/// A 1 MiB tmpfs at `dir/NAME` (unmounted when the table is done).
fn small_fs(c: &Ctx, name: &str) -> Result<PathBuf, String> {
    let mnt = c.dir.join(name);
    mount_small_tmpfs(&mnt).map_err(|m| m.reason)?;
    c.kept.mount(mnt.clone());
    Ok(mnt)
}

/// A database holding one run on a 1 MiB tmpfs at `dir/NAME` that is then filled.
fn full_store(c: &Ctx, name: &str) -> Result<String, String> {
    let mnt = small_fs(c, name)?;
    let db = s(&mnt.join("runs.db")).to_string();
    let stored = sysmeter()
        .args(["import", "--db", &db, s(&c.good)])
        .output();
    assert!(
        stored.is_ok_and(|o| o.status.success()),
        "import before full"
    );
    fill(&mnt);
    Ok(db)
}

/// The stored runs of `db` (`history --format json`).
fn listed(db: &str) -> serde_json::Value {
    json_out(sysmeter().args(["history", "--format", "json", "--db", db]))
}

/// Starts a bench as the host of the stored run, SIGKILLs it once its first experiment is
/// stored, and gives the script that checks `prune --keep 1` keeps the complete run as
/// `latest`, imports a run of that host that ended after the killed one, and prunes again.
fn killed_bench_then_prune(c: &Ctx) -> Result<Vec<String>, String> {
    let db = c.db();
    let base = super::stored(&db)[0].0.clone();
    let host = super::host_of(&db, &base);
    let mut bench = crate::support::cmd::std_sysmeter()
        .env("SYSMETER_HOSTNAME", &host)
        .args([
            "bench",
            "--quick",
            "--rounds",
            "1",
            "--only",
            "cpu.loop,mem.latency",
        ])
        .args(["--db", &db])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| e.to_string())?;
    let until = Instant::now() + Duration::from_secs(120);
    loop {
        let runs = listed(&db);
        let started =
            runs.as_array().into_iter().flatten().any(|r| {
                r["id"] != base.as_str() && r["experiments"].as_u64().is_some_and(|n| n >= 1)
            });
        if started {
            break;
        }
        assert!(Instant::now() < until, "the bench stored nothing in 120 s");
        std::thread::sleep(Duration::from_millis(20));
    }
    bench.kill().expect("SIGKILL");
    bench.wait().expect("reap");
    let newer = c.edited("newer.json", |d| {
        d["id"] = "20261201T000000Z-nwr0".into();
        d["host"]["hostname"] = host.as_str().into();
    });
    let script = format!(
        "out=$(\"$0\" prune --keep 1 --db {db}) || exit 9
         case \"$out\" in *'deleted 0 run(s)'*) ;; *) echo \"error: $out\" >&2; exit 9;; esac
         \"$0\" show latest --format json --db {db} | grep -q {base} || exit 8
         \"$0\" import --db {db} {newer} >/dev/null || exit 7
         exec \"$0\" prune --keep 1 --db {db}"
    );
    Ok(v(&["{sh}", &script]))
}

/// Hostnames that act on a terminal, stored by SQL beside the run of the case's store.
fn hostile_hosts_stored(c: &Ctx) -> Result<(), String> {
    let db = c.db();
    let base = super::stored(&db)[0].0.clone();
    let conn = rusqlite::Connection::open(&db).map_err(|e| e.to_string())?;
    let hosts = [
        "evil\u{1b}]0;pwned\u{7}\u{1b}[2J",
        "red\u{9b}31m",
        "good\u{202e}evil",
    ];
    for (i, host) in hosts.iter().enumerate() {
        conn.execute(
            "INSERT INTO runs (id, schema, kind, started_ns, finished_ns, interrupted,
                               tool_version, hostname, host_json, config_json)
             SELECT ?1, schema, kind, started_ns + ?4, finished_ns + ?4, interrupted,
                    tool_version, ?2, json_set(host_json, '$.hostname', ?2), config_json
             FROM runs WHERE id = ?3",
            rusqlite::params![format!("hostile-{i}"), host, base, i as i64 + 1],
        )
        .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// A case with hostile hostnames stored, then `words` (`{db}` filled in): exit 0, saying
/// `says`, every character that acts shown escaped (`check_output`).
macro_rules! stored_hostile {
    ($name:literal, $words:literal, $says:literal) => {
        Case {
            name: $name,
            args: |c| {
                hostile_hosts_stored(c)?;
                let words: Vec<&str> = $words.split_whitespace().collect();
                Ok(super::setup::fill(c, &words))
            },
            code: 0,
            says: $says,
            runs_after: 4,
            io: Io::Piped,
            after: nothing,
        }
    };
}

pub const AUDIT: &[Case] = &[
    Case {
        name: "killed-bench-then-prune",
        args: killed_bench_then_prune,
        code: 0,
        says: "deleted 2 run(s)",
        runs_after: 1,
        io: Io::Piped,
        after: |c| match super::stored(&c.db()).first() {
            Some((id, true)) if id == "20261201T000000Z-nwr0" => Ok(()),
            other => Err(format!("the run kept is {other:?}")),
        },
    },
    stored_hostile!(
        "stored-hostile-hostnames-history",
        "history --all-hosts --db {db}",
        "good\\u202eevil"
    ),
    stored_hostile!(
        "stored-hostile-hostnames-fleet",
        "fleet --db {db}",
        "evil\\u001b]0;pwned"
    ),
    Case {
        name: "full-disk-under-the-store-import",
        args: |c| {
            let db = full_store(c, "full-import")?;
            Ok(v(&["import", "--db", &db, s(&c.template)]))
        },
        code: 1,
        says: "is full (",
        runs_after: 1,
        io: Io::Piped,
        after: nothing,
    },
    Case {
        name: "full-disk-under-the-store-history",
        args: |c| Ok(v(&["history", "--db", &full_store(c, "full-history")?])),
        code: 1,
        says: "free some space there, or pass --db PATH on another file system",
        runs_after: 1,
        io: Io::Piped,
        after: nothing,
    },
    Case {
        name: "quota-exhausted-under-the-store",
        args: |c| {
            strace_injects().map_err(|m| m.reason)?;
            // SQLite writes with pwrite64; so does the question sysmeter then asks the disk.
            let script = format!(
                "exec strace -f -qq -o /dev/null -e inject=pwrite64:error=EDQUOT \
                 \"$0\" import --db {} {}",
                c.db(),
                s(&c.good)
            );
            Ok(v(&["{sh}", &script]))
        },
        code: 1,
        says: "is exhausted; delete some of your files there or ask for a larger quota",
        runs_after: 1,
        io: Io::Piped,
        after: nothing,
    },
    Case {
        name: "out-on-a-full-disk-keeps-the-report",
        args: |c| {
            let mnt = small_fs(c, "full-out")?;
            fill(&mnt);
            let out = mnt.join("report.md");
            Ok(v(&[
                "run",
                "--db",
                &c.db(),
                "--format",
                "markdown",
                "--out",
                s(&out),
                "--",
                "true",
            ]))
        },
        code: 1,
        says: "is full (",
        runs_after: 2,
        io: Io::Piped,
        after: nothing,
    },
];
