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
    hostile_hostname!("osc-hostname", "evil\u{1b}]0;pwned\u{7}\u{1b}[2J"),
    hostile_hostname!("newline-hostname", "a\nb"),
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
            // Rendered from the file: `import` refuses a value no chart can show.
            Ok(v(&["report", &tiny, "--html", &c.path("tiny.html")]))
        },
        code: 0,
        says: "",
        runs_after: 1,
        io: Io::Piped,
        after: super::nothing,
    },
    // Issue 47: what reached a terminal, a page or the retention before.
    hostile_hostname!("bidi-hostname", "good\u{202e}evil"),
    corrupt!(
        "huge-median",
        "beyond what a chart can show",
        |d| d["results"][0]["metrics"][0]["summary"]["median"] = 1.7e308.into()
    ),
    Case {
        name: "huge-median-page-says-it",
        args: |c| {
            let huge = c.edited("huge.json", |d| {
                d["results"][0]["metrics"][0]["summary"]["median"] = f64::MAX.into()
            });
            Ok(v(&["report", &huge, "--html", &c.path("huge.html")]))
        },
        code: 0,
        says: "",
        runs_after: 1,
        io: Io::Piped,
        after: |c| match std::fs::read_to_string(c.path("huge.html")) {
            Ok(page) if page.contains("Left out of the charts:") => Ok(()),
            _ => Err("the page does not say what it left out of the charts".into()),
        },
    },
    Case {
        name: "hostname-override-with-osc",
        args: |c| {
            let script = format!(
                "SYSMETER_HOSTNAME=\"$(printf 'x\\033]0;y\\007')\" exec \"$0\" history --db {}",
                c.db()
            );
            Ok(v(&["{sh}", &script]))
        },
        code: 2,
        says: "SYSMETER_HOSTNAME holds the character",
        runs_after: 1,
        io: Io::Piped,
        after: super::nothing,
    },
    Case {
        name: "future-dated-import-then-prune",
        args: |c| {
            let base = super::stored(&c.db());
            let host = super::host_of(&c.db(), &base[0].0);
            let future = c.edited("future.json", |d| {
                let ahead = 3 * 365 * 86_400 * 1_000_000_000i64;
                d["id"] = "20291124T000000Z-futr".into();
                d["host"]["hostname"] = host.into();
                d["started_ns"] = (d["started_ns"].as_i64().unwrap_or(0) + ahead).into();
                d["finished_ns"] = (d["finished_ns"].as_i64().unwrap_or(0) + ahead).into();
            });
            let db = c.db();
            let script = format!(
                "\"$0\" import --db {db} {future} >/dev/null && exec \"$0\" prune --keep 1 --db {db}"
            );
            Ok(v(&["{sh}", &script]))
        },
        code: 0,
        says: "deleted run 20291124T000000Z-futr",
        runs_after: 1,
        io: Io::Piped,
        after: super::nothing,
    },
];
