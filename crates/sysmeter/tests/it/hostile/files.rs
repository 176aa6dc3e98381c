//! The cases of `hostile.rs` about files from elsewhere: records the store cannot hold or a
//! terminal must not see, and paths that are not regular files. Each refused file is
//! imported beside a good one, which must still be stored (2 runs after).

use super::setup::{mkfifo, special, v};
use super::{Case, Io};

const MAX: u64 = u64::MAX;

pub const FILES: &[Case] = &[
    // Records the store cannot hold, or a terminal must not see.
    corrupt!("huge-n", "nothing of it was stored", |d| d["results"][0]
        ["metrics"][0]["summary"]["n"] =
        MAX.into()),
    corrupt!("huge-elapsed", "nothing of it was stored", |d| d["results"]
        [0]["elapsed_ns"] =
        MAX.into()),
    corrupt!("huge-ops", "nothing of it was stored", |d| d["results"]
        [0]["metrics"][0]["ops_per_sample"] =
        MAX.into()),
    corrupt!(
        "huge-outliers",
        "nothing of it was stored",
        |d| d["results"][0]["metrics"][0]["summary"]["outliers"] = MAX.into()
    ),
    corrupt!("negative-n", "not a sysmeter run record", |d| d["results"]
        [0]["metrics"][0]["summary"]["n"] =
        (-1).into()),
    corrupt!("text-median", "not a sysmeter run record", |d| d["results"]
        [0]["metrics"][0]["summary"]["median"] =
        "fast".into()),
    corrupt!("huge-float", "not a sysmeter run record", |d| d["results"]
        [0]["metrics"][0]["summary"]["median"] =
        serde_json::Value::String("1e999".into())),
    corrupt!("osc-hostname", "nothing of it was stored", |d| d["host"]
        ["hostname"] =
        "evil\u{1b}]0;pwned\u{7}\u{1b}[2J".into()),
    corrupt!(
        "newline-hostname",
        "nothing of it was stored",
        |d| d["host"]["hostname"] = "a\nb".into()
    ),
    corrupt!("csi-id", "nothing of it was stored", |d| d["id"] =
        "run\u{1b}[2J".into()),
    corrupt!("c1-finding", "nothing of it was stored", |d| d["results"]
        [0]["findings"][0]["text"] =
        "fine\u{9b}31m".into()),
    corrupt!("bell-metric", "nothing of it was stored", |d| d["results"]
        [0]["metrics"][0]["name"] =
        "ns\u{7}".into()),
    corrupt!("newer-schema", "newer sysmeter", |d| d["schema"] =
        9999.into()),
    corrupt!("array", "not a sysmeter run record", |d| *d =
        serde_json::json!([1, 2])),
    corrupt!("no-results", "not a sysmeter run record", |d| {
        d.as_object_mut().map(|o| o.remove("results"));
    }),
    // Files that are not files.
    refused_file!("dev-zero", "a device, not a regular file", |c| Ok(
        c.import_beside_good("/dev/zero")
    )),
    refused_file!("symlink-to-dev-zero", "a device, not a regular file", |c| {
        let link = |p: &str| std::os::unix::fs::symlink("/dev/zero", p).expect("link");
        Ok(special(c, "zero-link", link))
    }),
    refused_file!("fifo-without-writer", "a FIFO, not a regular file", |c| Ok(
        special(c, "fifo", mkfifo)
    )),
    refused_file!("socket", "a socket, not a regular file", |c| Ok(
        c.import_beside_good(&c.path("sock"))
    )),
    refused_file!("directory", "a directory", |c| Ok(
        c.import_beside_good(&c.path(""))
    )),
    refused_file!("missing-file", "No such file", |c| Ok(
        c.import_beside_good(&c.path("nonexistent.json"))
    )),
    refused_file!("empty-file", "not a sysmeter run record", |c| {
        std::fs::write(c.path("empty.json"), "").expect("write");
        Ok(c.import_beside_good(&c.path("empty.json")))
    }),
    Case {
        name: "subnormal-median-renders",
        args: |c| {
            let tiny = c.edited("tiny.json", |d| {
                for m in d["results"][0]["metrics"]
                    .as_array_mut()
                    .into_iter()
                    .flatten()
                {
                    m["summary"]["median"] = 5e-324.into();
                }
            });
            let out = crate::support::stdout_of(
                super::sysmeter()
                    .args(["import", "--db"])
                    .args([&c.db(), &tiny]),
            );
            assert!(out.contains("1 run(s) imported"), "{out}");
            let id = "20261122T183242Z-f1e2";
            Ok(v(&[
                "report",
                id,
                "--db",
                &c.db(),
                "--html",
                &c.path("tiny.html"),
            ]))
        },
        code: 0,
        says: "",
        runs_after: 2,
        io: Io::Piped,
        after: super::nothing,
    },
];
