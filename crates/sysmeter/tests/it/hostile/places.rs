//! The cases of `hostile.rs` about places and processes: mistyped or foreign databases,
//! outputs that are no files, targets that cannot be observed, odd standard streams.

use super::setup::{at_kthread, at_zombie, mkfifo, v};
use super::{Case, Io};

pub const PLACES: &[Case] = &[
    // Databases that are mistyped, not databases, or not files.
    plain!("history-typo-db", ["history", "--db", "{typo}"], 0, "", 1),
    plain!(
        "show-typo-db",
        ["show", "latest", "--db", "{typo}"],
        2,
        "no run 'latest'",
        1
    ),
    plain!(
        "compare-typo-db",
        ["compare", "latest~1", "latest", "--db", "{typo}"],
        2,
        "",
        1
    ),
    plain!("fleet-typo-db", ["fleet", "--db", "{typo}"], 2, "", 1),
    plain!("export-typo-db", ["export", "--db", "{typo}"], 2, "", 1),
    plain!(
        "history-garbage-db",
        ["history", "--db", "{garbage}"],
        2,
        "",
        1
    ),
    plain!(
        "import-into-garbage",
        ["import", "--db", "{garbage}", "{dir}/node-1.json"],
        2,
        "",
        1
    ),
    plain!("db-is-a-directory", ["history", "--db", "{dir}"], 2, "", 1),
    // Outputs that cannot be written as files, checked before anything is measured.
    plain!(
        "out-socket",
        ["run", "--no-store", "--out", "{dir}/sock", "--", "true"],
        2,
        "is a socket",
        1
    ),
    plain!(
        "out-directory",
        ["run", "--no-store", "--out", "{dir}", "--", "true"],
        2,
        "is a directory",
        1
    ),
    plain!(
        "html-over-db",
        ["report", "latest", "--db", "{db}", "--html", "{db}"],
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
            Ok(v(&[
                "report",
                "latest",
                "--db",
                &c.db(),
                "--markdown",
                &fifo,
            ]))
        },
        code: 2,
        says: "no process reads",
        runs_after: 1,
        io: Io::Piped,
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
            Ok(v(&[
                "report",
                "latest",
                "--db",
                &c.db(),
                "--markdown",
                &c.path("r.md"),
            ]))
        },
        code: 0,
        says: "",
        runs_after: 1,
        io: Io::Piped,
    },
    // Targets that cannot be observed.
    plain!(
        "trace-self",
        ["{self}", "trace", "--no-store", "--duration", "1"],
        2,
        "sysmeter itself",
        1
    ),
    plain!(
        "calls-self",
        ["{self}", "calls", "--no-store", "--duration", "1"],
        2,
        "sysmeter itself",
        1
    ),
    plain!(
        "locks-self",
        ["{self}", "locks", "--no-store", "--duration", "1"],
        2,
        "sysmeter itself",
        1
    ),
    plain!(
        "profile-self",
        ["{self}", "profile", "--no-store", "--duration", "1"],
        2,
        "sysmeter itself",
        1
    ),
    plain!(
        "offcpu-self",
        [
            "{self}",
            "profile",
            "--off-cpu",
            "--no-store",
            "--duration",
            "1"
        ],
        2,
        "sysmeter itself",
        1
    ),
    plain!(
        "run-self",
        ["{self}", "run", "--no-store", "--duration", "1"],
        2,
        "sysmeter itself",
        1
    ),
    Case {
        name: "profile-zombie",
        args: |_| at_zombie(&["profile"]),
        code: 2,
        says: "already exited",
        runs_after: 1,
        io: Io::Piped,
    },
    Case {
        name: "locks-zombie",
        args: |_| at_zombie(&["locks"]),
        code: 2,
        says: "already exited",
        runs_after: 1,
        io: Io::Piped,
    },
    Case {
        name: "trace-zombie",
        args: |_| at_zombie(&["trace"]),
        code: 2,
        says: "already exited",
        runs_after: 1,
        io: Io::Piped,
    },
    Case {
        name: "run-zombie",
        args: |_| at_zombie(&["run"]),
        code: 2,
        says: "already exited",
        runs_after: 1,
        io: Io::Piped,
    },
    Case {
        name: "profile-kthread",
        args: |_| at_kthread(&["profile"]),
        code: 2,
        says: "kernel thread",
        runs_after: 1,
        io: Io::Piped,
    },
    Case {
        name: "calls-kthread",
        args: |_| at_kthread(&["calls"]),
        code: 2,
        says: "kernel thread",
        runs_after: 1,
        io: Io::Piped,
    },
    Case {
        name: "locks-kthread",
        args: |_| at_kthread(&["locks"]),
        code: 2,
        says: "kernel thread",
        runs_after: 1,
        io: Io::Piped,
    },
    // Standard streams: a dead log pipe, /dev/null opened read-write.
    Case {
        name: "import-dead-stderr",
        args: |c| Ok(c.import_beside_good(&c.path("nonexistent.json"))),
        code: 2,
        says: "",
        runs_after: 2,
        io: Io::DeadStderr,
    },
    plain!(
        "history-devnull-rw",
        ["history", "--db", "{db}"],
        0,
        "",
        1,
        Io::DevNullRw
    ),
    plain!(
        "show-devnull-rw",
        ["show", "latest", "--db", "{db}"],
        0,
        "",
        1,
        Io::DevNullRw
    ),
];
