//! Builds the `calls` preload library (preload/: C and one x86-64 assembly file; `funcs.c`
//! holds the -finstrument-functions hooks of `calls --functions`, `mutex.c` the pthread
//! hooks of `locks`' in-process table, `alloc.c` the allocation functions `alloc`
//! interposes, `exec.c` the exec functions that note a program the library cannot enter;
//! every hook is off unless its environment turns it on) into a
//! shared object that `preload.rs` embeds. The `cc` crate makes static archives only, so
//! its compiler handle links the `.so` here. Other architectures get an empty library and
//! `calls` keeps its uprobe backend there.

use std::path::PathBuf;

fn main() {
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    let so = out.join("libsysmeter_calls.so");
    let sources = [
        "preload/calls.c",
        "preload/patch.c",
        "preload/funcs.c",
        "preload/mutex.c",
        "preload/alloc.c",
        "preload/exec.c",
        "preload/hooks_x86_64.S",
    ];
    for s in sources.iter().chain(&[
        "preload/layout.h",
        "preload/mutex.h",
        "preload/alloc.h",
        "preload/alloc_api.h",
        "preload/open_region.h",
        "preload/exec_notes.h",
        "preload/exec_env.h",
        "preload/wipe_mark.h",
        "preload/mutex_sites.h",
    ]) {
        println!("cargo:rerun-if-changed={s}");
    }
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    if arch != "x86_64" {
        std::fs::write(&so, b"").expect("write the empty preload library");
        return;
    }
    let compiler = cc::Build::new().get_compiler();
    let status = compiler
        .to_command()
        .args([
            "-O2",
            "-fPIC",
            "-shared",
            "-mgeneral-regs-only",
            "-fvisibility=hidden",
        ])
        .args(["-Wall", "-Wextra", "-Wl,-z,now", "-o"])
        .arg(&so)
        .args(sources)
        .args(["-ldl", "-lpthread"])
        .status()
        .expect("run the C compiler for the calls preload library");
    assert!(
        status.success(),
        "building the calls preload library failed"
    );
}
