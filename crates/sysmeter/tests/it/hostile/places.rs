//! The cases of `hostile.rs` about places and processes: mistyped or foreign databases,
//! outputs that are no files, targets that cannot be observed, odd standard streams.

use super::setup::{mkfifo, v};
use super::{Case, Ctx, Io};

/// `report latest --db DB --markdown PATH`.
fn markdown_of_latest(c: &Ctx, path: &str) -> Vec<String> {
    v(&["report", "latest", "--db", &c.db(), "--markdown", path])
}

pub const PLACES: &[Case] = &[
    // Databases that are mistyped, not databases, or not files. A file at --db that is no
    // sysmeter database is a storage failure (exit 1): SQLite cannot tell a foreign file
    // from a damaged database, and a damaged one is not the user's input.
    plain!("history-typo-db", "history --db {typo}", 0, "", 1),
    plain!(
        "show-typo-db",
        "show latest --db {typo}",
        2,
        "no run 'latest'",
        1
    ),
    plain!(
        "compare-typo-db",
        "compare latest~1 latest --db {typo}",
        2,
        "",
        1
    ),
    plain!("fleet-typo-db", "fleet --db {typo}", 2, "", 1),
    plain!("export-typo-db", "export --db {typo}", 2, "", 1),
    plain!(
        "history-garbage-db",
        "history --db {garbage}",
        1,
        "not a sysmeter database",
        1
    ),
    plain!(
        "import-into-garbage",
        "import --db {garbage} {dir}/node-1.json",
        1,
        "",
        1
    ),
    plain!(
        "db-is-a-directory",
        "history --db {dir}",
        1,
        "it is a directory",
        1
    ),
    // Outputs that cannot be written as files, checked before anything is measured.
    plain!(
        "out-socket",
        "run --no-store --out {dir}/sock -- true",
        2,
        "is a socket",
        1
    ),
    plain!(
        "out-directory",
        "run --no-store --out {dir} -- true",
        2,
        "is a directory",
        1
    ),
    plain!(
        "html-over-db",
        "report latest --db {db} --html {db}",
        2,
        "",
        1
    ),
    Case {
        name: "markdown-fifo-without-reader",
        args: |c| {
            let fifo = c.path("out-fifo");
            if std::fs::symlink_metadata(&fifo).is_err() {
                mkfifo(&fifo);
            }
            Ok(markdown_of_latest(c, &fifo))
        },
        code: 2,
        says: "no process reads",
        runs_after: 1,
        io: Io::Piped,
        after: super::nothing,
    },
    Case {
        name: "stale-temp-output-removed",
        args: |c| {
            let stale = c.path(".sysmeter-out-stale1");
            std::fs::write(&stale, "").expect("write");
            let ok = std::process::Command::new("touch")
                .args(["-d", "2 hours ago", &stale])
                .status();
            assert!(ok.is_ok_and(|s| s.success()), "touch -d");
            Ok(markdown_of_latest(c, &c.path("r.md")))
        },
        code: 0,
        says: "",
        runs_after: 1,
        io: Io::Piped,
        after: super::nothing,
    },
    // Targets that cannot be observed.
    refused_pid!("trace-self", at_self, "trace", "sysmeter itself"),
    refused_pid!("calls-self", at_self, "calls", "sysmeter itself"),
    refused_pid!("locks-self", at_self, "locks", "sysmeter itself"),
    refused_pid!("profile-self", at_self, "profile", "sysmeter itself"),
    refused_pid!(
        "offcpu-self",
        at_self,
        "profile --off-cpu",
        "sysmeter itself"
    ),
    refused_pid!("run-self", at_self, "run", "sysmeter itself"),
    refused_pid!("profile-zombie", at_zombie, "profile", "already exited"),
    refused_pid!("locks-zombie", at_zombie, "locks", "already exited"),
    refused_pid!("trace-zombie", at_zombie, "trace", "already exited"),
    refused_pid!("run-zombie", at_zombie, "run", "already exited"),
    refused_pid!("profile-kthread", at_kthread, "profile", "kernel thread"),
    refused_pid!("calls-kthread", at_kthread, "calls", "kernel thread"),
    refused_pid!("locks-kthread", at_kthread, "locks", "kernel thread"),
    // Standard streams: a dead log pipe, /dev/null opened read-write.
    Case {
        name: "import-dead-stderr",
        args: |c| Ok(c.import_beside_good(&c.path("nonexistent.json"))),
        code: 2,
        says: "",
        runs_after: 2,
        io: Io::DeadStderr,
        after: super::nothing,
    },
    plain!(
        "history-devnull-rw",
        "history --db {db}",
        0,
        "",
        1,
        Io::DevNullRw
    ),
    plain!(
        "show-devnull-rw",
        "show latest --db {db}",
        0,
        "",
        1,
        Io::DevNullRw
    ),
];
