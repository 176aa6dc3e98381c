//! Programs started through wrappers, in process (issue 42): `calls -e malloc,free` and
//! `alloc` through a `#!/bin/sh` wrapper that execs the program and through a two-level shim
//! chain (`#!/usr/bin/env sh` script → `#!/bin/sh` script → program) count the program as a
//! direct launch does, each image apart and named; a program that closes every descriptor
//! and then execs another still has the exec'd image counted, with nothing on its stderr;
//! `-f -- sh -c` with a static and a setuid child names both in the first finding while
//! counting the dynamic one. Fixtures: tests/fixtures/programs/calls_loop.c, the scripts are
//! written by the tests. Need a C compiler (`cc`, static libc for `-static`); the setuid
//! child needs root (to give the file to another user).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::Value;

use crate::alloc::{alloc, metric, site};
use crate::support::cmd::{calls_ok, traced_json};
use crate::support::needs::build_fixture;
use crate::support::skip::Missing;
use crate::support::{compile_fixture, is_root, need, skip};

fn text(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

fn script(dir: &Path, name: &str, body: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, body).expect("write the script");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    text(&p)
}

/// The program, a `#!/bin/sh` wrapper that execs it, and a shim chain: an `env sh` script
/// that execs the wrapper (as pyenv's shims exec `pyenv exec`).
fn wrappers(dir: &Path) -> Result<(String, String, String), Missing> {
    let prog = text(&compile_fixture("calls_loop", dir, &[])?);
    let wrap = script(dir, "wrap", &format!("#!/bin/sh\nexec {prog} \"$@\"\n"));
    let shim = script(
        dir,
        "shim",
        &format!("#!/usr/bin/env sh\nexec {wrap} \"$@\"\n"),
    );
    Ok((prog, wrap, shim))
}

pub(crate) fn finding(run: &Value, key: &str) -> String {
    let f = crate::support::finding(&run["results"][0], key);
    f.map_or(String::new(), |f| f["text"].as_str().unwrap_or("").into())
}

/// The per-thread counts of `calls`' in-process run, as "program: counts" (pids left out),
/// in the order the threads were counted.
pub(crate) fn per_image(run: &Value) -> Vec<String> {
    let all = finding(run, "per_thread");
    let list = all.split_once("): ").map_or("", |(_, l)| l);
    list.trim_end_matches('.')
        .split("; ")
        .filter_map(|e| {
            let (head, counts) = e.split_once(": ")?;
            Some(format!("{}: {counts}", head.split(' ').next()?))
        })
        .collect()
}

fn calls(cmd: &[&str], dir: &Path, follow: bool) -> (Value, String) {
    let mut args = vec!["--no-store", "-e", "malloc,free"];
    if follow {
        args.push("-f");
    }
    let (run, out) = calls_ok(&[], &args, cmd, dir);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(stderr.contains("backend: inproc"), "{stderr}");
    (run, stderr)
}

#[test]
fn calls_through_a_wrapper_and_a_shim_chain_count_what_a_direct_launch_counts() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (prog, wrap, shim) = need!(wrappers(dir.path()));
    let (direct, _) = calls(&[&prog, "1000", "0"], dir.path(), false);
    let direct = per_image(&direct);
    assert_eq!(direct, ["calls_loop: free 1000, malloc 1000"]);
    for via in [wrap, shim] {
        let (run, _) = calls(&[&via, "1000", "0"], dir.path(), false);
        let images = per_image(&run);
        let program: Vec<&String> = images
            .iter()
            .filter(|i| i.starts_with("calls_loop"))
            .collect();
        assert_eq!(program, [&direct[0]], "{via}: {images:?}");
        // The shell that ran the script is counted apart and named.
        assert!(images.iter().any(|i| i.starts_with("sh:")), "{images:?}");
    }
}

#[test]
fn alloc_through_a_wrapper_and_a_shim_chain_counts_what_a_direct_launch_counts() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (prog, wrap, shim) = need!(wrappers(dir.path()));
    let (direct, _) = alloc(&[], &[&prog, "1000", "0"], dir.path());
    let (want, _) = site(&direct, "main (calls_loop.c:");
    assert_eq!((want.0, want.1), (1000, 64_000));
    for via in [wrap, shim] {
        let (run, _) = alloc(&[], &[&via, "1000", "0"], dir.path());
        let (got, _) = site(&run, "calls_loop: main (calls_loop.c:");
        assert_eq!(got, want, "{via}");
        let images = finding(&run, "images");
        assert!(
            images.contains("sh ") && images.contains("calls_loop 1000"),
            "{images}"
        );
        assert!(
            metric(&run, "peak live") >= metric(&run, "live at end"),
            "{run:#}"
        );
        assert!(finding(&run, "lost").is_empty(), "{run:#}");
    }
}

#[test]
fn an_image_execd_after_closing_every_descriptor_is_counted_quietly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let prog = text(&need!(compile_fixture("calls_loop", dir.path(), &[])));
    let cmd = [prog.as_str(), "1000", "0", "closeexec", prog.as_str()];
    let (run, stderr) = calls(&cmd, dir.path(), false);
    let each = "calls_loop: free 1000, malloc 1000";
    assert_eq!(per_image(&run), [each, each], "{run:#}");
    assert!(
        !stderr.contains("ld.so") && !stderr.contains("ERROR"),
        "{stderr}"
    );
    let (run, stderr) = alloc(&[], &cmd, dir.path());
    let (second, _) = site(&run, "calls_loop #2: main (calls_loop.c:");
    assert_eq!((second.0, second.1), (1000, 64_000));
    assert!(
        finding(&run, "stacks").contains("Nothing was lost"),
        "{run:#}"
    );
    assert!(
        !stderr.contains("ld.so") && !stderr.contains("ERROR"),
        "{stderr}"
    );
}

/// `dir/static` (calls_loop linked statically) and, as root, `dir/setuid` (calls_loop
/// owned by `nobody`, setuid); `None` for the setuid one without root.
fn children(dir: &Path, prog: &str) -> Result<(String, Option<String>), Missing> {
    let flags = ["-O1", "-static"];
    let stat = build_fixture("cc", &flags, "calls_loop.c", dir.join("static"))?;
    if !is_root() {
        return Ok((text(&stat), None));
    }
    let setuid = dir.join("setuid");
    std::fs::copy(prog, &setuid).expect("copy");
    std::os::unix::fs::chown(&setuid, Some(65534), None).expect("chown to nobody");
    std::fs::set_permissions(&setuid, std::fs::Permissions::from_mode(0o4755)).expect("chmod");
    Ok((text(&stat), Some(text(&setuid))))
}

#[test]
fn children_the_library_cannot_enter_are_named_first_and_the_others_counted() {
    let dir = tempfile::tempdir().expect("tempdir");
    let prog = text(&need!(compile_fixture("calls_loop", dir.path(), &[])));
    let (stat, setuid) = need!(children(dir.path(), &prog));
    let Some(setuid) = setuid else {
        skip!(Root, "making a setuid program of another user needs root");
    };
    let line = format!("{stat} 100 0; {setuid} 100 0; {prog} 100 0");
    let cmd = ["sh", "-c", line.as_str()];
    let (run, _) = calls(&cmd, dir.path(), true);
    let first = run["results"][0]["findings"][0].clone();
    let said = first["text"].as_str().unwrap_or("");
    assert_eq!(first["key"], "lost", "{run:#}");
    assert!(said.contains(&format!("{stat} (pid")), "{said}");
    assert!(said.contains("statically linked"), "{said}");
    assert!(
        said.contains(&format!("{setuid} (pid")) && said.contains("setuid"),
        "{said}"
    );
    let images = per_image(&run);
    assert!(
        images.contains(&"calls_loop: free 100, malloc 100".to_string()),
        "{images:?}"
    );
    let (run, output) = traced_json("alloc", &["--no-store", "-f"], &cmd, dir.path());
    assert_eq!(output.status.code(), Some(0));
    let lost = finding(&run, "lost");
    assert!(lost.contains(&stat) && lost.contains(&setuid), "{lost}");
    let (counted, _) = site(&run, "calls_loop: main (calls_loop.c:");
    assert_eq!((counted.0, counted.1), (100, 6400));
}
