//! Programs the preload library could not enter, as a table (issue 42): a setuid program, a
//! static one, each launched directly and as a child; a child started by posix_spawn or
//! `env -i` with the environment cleared; a process that drops its privileges to nobody and
//! then execs (with and without closing its descriptors first). For `calls -e malloc,free`
//! and `alloc`, each case either counts the program's 1000 malloc and free pairs
//! (tests/fixtures/programs/calls_loop.c) exactly as a direct launch does (a setuid program
//! launched by `calls` through uprobes whose events open at its exec), or names it in
//! the first finding (the line under the report's title), or refuses with a sentence: never
//! "0 calls" in silence. The launch ways are tests/fixtures/programs/exec_ways.c. Needs
//! root (a setuid program of another user, dropping privileges) and a C compiler with a
//! static libc.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::Value;

use crate::alloc::sites;
use crate::calls::count_of;
use crate::exec_chains::{finding, per_image};
use crate::support::cmd::traced_json;
use crate::support::needs::build_fixture;
use crate::support::skip::Missing;
use crate::support::{compile_fixture, is_root, need, skip};

/// Turns of calls_loop in every case: this many malloc(64) and free.
const N: &str = "1000";

/// The programs of the cases: calls_loop, its static build, a setuid-to-nobody copy, and
/// exec_ways.
struct Progs {
    prog: String,
    stat: String,
    setuid: String,
    ways: String,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Tool {
    Calls,
    Alloc,
}

impl Tool {
    /// The sysmeter command of the tool.
    fn command(self) -> &'static str {
        match self {
            Tool::Calls => "calls",
            Tool::Alloc => "alloc",
        }
    }
}

/// What a case must give.
enum Expect {
    /// calls_loop's 1000 pairs counted, nothing said lost.
    Counted,
    /// Exit 0 and the first finding (`lost`) holds each phrase (a `{path}` replaced).
    Named(&'static [&'static str]),
    /// An error exit naming the phrase on stderr.
    Refused(&'static str),
}

struct Case {
    name: &'static str,
    /// The tools the case runs under, each giving what `expect` says.
    tools: &'static [Tool],
    follow: bool,
    argv: fn(&Progs) -> Vec<String>,
    expect: Expect,
}

fn v(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// Both tools: a case that must give the same under `calls` and `alloc`.
const BOTH: &[Tool] = &[Tool::Calls, Tool::Alloc];

/// The cases, one a row: name, tools, `-f`, the command, what it must give.
const CASES: &[Case] = &[
    Case {
        name: "setuid",
        tools: &[Tool::Calls],
        follow: false,
        argv: |p| v(&[&p.setuid, N, "0"]),
        expect: Expect::Counted,
    },
    Case {
        name: "setuid",
        tools: &[Tool::Alloc],
        follow: false,
        argv: |p| v(&[&p.setuid, N, "0"]),
        expect: Expect::Counted,
    },
    Case {
        name: "static",
        tools: &[Tool::Calls],
        follow: false,
        argv: |p| v(&[&p.stat, N, "0"]),
        expect: Expect::Refused("statically linked"),
    },
    Case {
        name: "static",
        tools: &[Tool::Alloc],
        follow: false,
        argv: |p| v(&[&p.stat, N, "0"]),
        expect: Expect::Counted,
    },
    Case {
        name: "setuid exec'd by sh",
        tools: BOTH,
        follow: false,
        argv: |p| v(&["sh", "-c", &format!("exec {} {N} 0", p.setuid)]),
        expect: Expect::Named(&["{setuid} (pid", "setuid or setgid"]),
    },
    Case {
        name: "static and setuid children",
        tools: BOTH,
        follow: true,
        argv: |p| v(&["sh", "-c", &format!("{} {N} 0; {} {N} 0", p.stat, p.setuid)]),
        expect: Expect::Named(&["{stat} (pid", "statically linked", "{setuid} (pid"]),
    },
    Case {
        name: "posix_spawn, empty environment",
        tools: BOTH,
        follow: true,
        argv: |p| v(&[&p.ways, "spawn", &p.prog, N]),
        expect: Expect::Counted,
    },
    Case {
        name: "posix_spawnp, empty environment",
        tools: &[Tool::Calls],
        follow: true,
        argv: |p| v(&[&p.ways, "spawnp", &p.prog, N]),
        expect: Expect::Counted,
    },
    Case {
        name: "execve, empty environment",
        tools: &[Tool::Calls],
        follow: false,
        argv: |p| v(&[&p.ways, "emptyenv", &p.prog, N]),
        expect: Expect::Counted,
    },
    Case {
        name: "env -i",
        tools: BOTH,
        follow: false,
        argv: |p| v(&["env", "-i", &p.prog, N, "0"]),
        expect: Expect::Counted,
    },
    Case {
        name: "privileges dropped, then exec",
        tools: BOTH,
        follow: false,
        argv: |p| v(&[&p.ways, "drop", &p.prog, N]),
        expect: Expect::Counted,
    },
    Case {
        name: "privileges dropped, descriptors closed",
        tools: BOTH,
        follow: false,
        argv: |p| v(&[&p.ways, "dropclose", &p.prog, N]),
        expect: Expect::Named(&["{prog} (pid", "after dropping privileges"]),
    },
];

fn text(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// The programs, in `dir` opened to every user (nobody runs calls_loop after dropping to it).
fn programs(dir: &Path) -> Result<Progs, Missing> {
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).expect("chmod dir");
    let prog = text(&compile_fixture("calls_loop", dir, &[])?);
    let flags = ["-O1", "-g", "-static"];
    let stat = text(&build_fixture(
        "cc",
        &flags,
        "calls_loop.c",
        dir.join("static"),
    )?);
    let ways = text(&compile_fixture("exec_ways", dir, &[])?);
    let setuid = dir.join("setuid");
    std::fs::copy(&prog, &setuid).expect("copy");
    std::os::unix::fs::chown(&setuid, Some(65534), None).expect("chown to nobody");
    std::fs::set_permissions(&setuid, std::fs::Permissions::from_mode(0o4755)).expect("chmod");
    Ok(Progs {
        prog,
        stat,
        setuid: text(&setuid),
        ways,
    })
}

/// Whether a `calls` run went through uprobes (its table says so in what it measures).
fn through_uprobes(run: &Value) -> bool {
    let measures = run["results"][0]["about"]["measures"].as_str();
    measures.is_some_and(|m| m.ends_with("(uprobes)"))
}

/// calls_loop's pairs as the run counted them: `calls`' per-image counts of calls_loop (in
/// process) or its call table (uprobes: the launched program alone, a copy of calls_loop);
/// `alloc`'s allocations at calls_loop's main.
fn counted(tool: Tool, run: &Value) -> String {
    match tool {
        Tool::Calls if through_uprobes(run) => {
            let n = |f| count_of(run, f).map_or(0, |c| c.0);
            format!(
                "[\"calls_loop: free {}, malloc {}\"]",
                n("free"),
                n("malloc")
            )
        }
        Tool::Calls => {
            let images = per_image(run);
            let of_prog: Vec<&String> = images
                .iter()
                .filter(|i| i.starts_with("calls_loop"))
                .collect();
            format!("{of_prog:?}")
        }
        Tool::Alloc => {
            let at_main = sites(run).into_iter().filter(|r| {
                let site = r["site"].as_str().unwrap_or("");
                site.contains("main (calls_loop.c:") || site == "main"
            });
            let n: u64 = at_main
                .map(|r| r["allocations"].as_u64().unwrap_or(0))
                .sum();
            format!("{n} allocations at calls_loop's main")
        }
    }
}

fn want_counted(tool: Tool) -> String {
    match tool {
        Tool::Calls => format!("[\"calls_loop: free {N}, malloc {N}\"]"),
        Tool::Alloc => format!("{N} allocations at calls_loop's main"),
    }
}

/// A case that must end in an error naming `phrase`.
fn refused(command: &str, args: &[&str], argv: &[&str], phrase: &str) -> Result<(), String> {
    let out = crate::support::sysmeter()
        .arg(command)
        .args(args)
        .arg("--")
        .args(argv)
        .output();
    let out = out.map_err(|e| e.to_string())?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    match out.status.code() {
        Some(0) | None => Err(format!("not refused: {stderr}")),
        Some(_) if stderr.contains("error: ") && stderr.contains(phrase) => Ok(()),
        Some(_) => Err(format!("no error naming {phrase:?}: {stderr}")),
    }
}

/// Runs one case under `tool`; `Err` says what went wrong.
fn check(case: &Case, tool: Tool, p: &Progs, dir: &Path) -> Result<(), String> {
    let argv = (case.argv)(p);
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let mut args = vec!["--no-store"];
    if tool == Tool::Calls {
        args.extend(["-e", "malloc,free"]);
    }
    if case.follow {
        args.push("-f");
    }
    let command = tool.command();
    if let Expect::Refused(phrase) = case.expect {
        return refused(command, &args, &argv, phrase);
    }
    let (run, out) = traced_json(command, &args, &argv, dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.code() != Some(0) {
        return Err(format!("exit {:?}: {stderr}", out.status.code()));
    }
    if stderr.contains("ld.so") {
        return Err(format!("the dynamic linker complained: {stderr}"));
    }
    let first = &run["results"][0]["findings"][0];
    match case.expect {
        Expect::Counted => {
            let got = counted(tool, &run);
            let lost = finding(&run, "lost");
            match (got == want_counted(tool), lost.is_empty()) {
                (true, true) => Ok(()),
                _ => Err(format!("counted {got}, lost {lost:?}")),
            }
        }
        Expect::Named(phrases) => {
            let said = first["text"].as_str().unwrap_or("");
            let fill = |ph: &str| {
                ph.replace("{setuid}", &p.setuid)
                    .replace("{stat}", &p.stat)
                    .replace("{prog}", &p.prog)
            };
            let missing: Vec<String> = phrases
                .iter()
                .map(|ph| fill(ph))
                .filter(|ph| !said.contains(ph.as_str()))
                .collect();
            match (first["key"] == "lost", missing.is_empty()) {
                (true, true) => Ok(()),
                _ => Err(format!("first finding {first} lacks {missing:?}")),
            }
        }
        Expect::Refused(_) => unreachable!("handled above"),
    }
}

#[test]
fn children_the_library_cannot_enter_are_counted_or_named_first() {
    if !is_root() {
        skip!(
            Root,
            "a setuid program of another user and dropping privileges need root"
        );
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let progs = need!(programs(dir.path()));
    let runs = CASES
        .iter()
        .flat_map(|case| case.tools.iter().map(move |&tool| (case, tool)));
    let failed: Vec<String> = runs
        .filter_map(|(case, tool)| {
            check(case, tool, &progs, dir.path())
                .err()
                .map(|e| format!("{}, {}: {e}", case.name, tool.command()))
        })
        .collect();
    assert!(
        failed.is_empty(),
        "{} case(s) failed:\n{}",
        failed.len(),
        failed.join("\n")
    );
}
