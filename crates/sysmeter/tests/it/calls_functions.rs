//! `sysmeter calls --functions` on programs built with -finstrument-functions: the exact
//! edge counts of a known call tree (with recursion), inclusive ≥ self, the gprof columns of
//! the terminal call graph and flat profile and of the HTML page, threads, a forked child
//! with `-f`, a longjmp past exit hooks and a C++ exception (GCC and Clang builds) that run
//! to completion with their own output, and the refusal (exit 2, one sentence with the fix)
//! of a program built without the hooks, with -pg, or defining the hooks itself. Times are
//! never compared with each other or with a speed: only counts, the order inclusive ≥ self,
//! and the layout. Fixtures need a C compiler (`cc`; `c++` and `clang++` for C++).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support::cmd::{calls_ok, plain_stdout, stderr_of, sysmeter};
use crate::support::needs::build_fixture;
use crate::support::skip::{Cap, Missing};
use crate::support::{compile_fixture, need};

fn tree(dir: &Path, extra: &[&str]) -> Result<PathBuf, Missing> {
    compile_fixture("funcs_tree", dir, extra)
}

/// The tree fixture built with the hooks: its path.
fn instrumented(dir: &Path) -> Result<String, Missing> {
    let bin = tree(dir, &["-finstrument-functions", "-pthread"])?;
    Ok(bin.to_string_lossy().into_owned())
}

/// Runs `calls --functions ARGS -- CMD`; the run and the command's stdout.
fn functions(args: &[&str], cmd: &[&str], dir: &Path) -> (Value, String) {
    let (run, output) = calls_ok(&["--functions", "--no-store"], args, cmd, dir);
    (run, String::from_utf8_lossy(&output.stdout).into_owned())
}

/// The typed call graph of the run (the `call graph` artifact).
fn graph(run: &Value) -> Value {
    let r = &run["results"][0];
    assert_eq!(r["id"], "calls.functions", "{run:#}");
    let a = r["artifacts"].as_array().expect("artifacts");
    let cg = a
        .iter()
        .find(|a| a["name"] == "call graph")
        .expect("call graph");
    serde_json::from_str(cg["content"].as_str().expect("content")).expect("rows")
}

fn edge(g: &Value, caller: &str, callee: &str) -> u64 {
    let edges = g["edges"].as_array().expect("edges");
    let e = edges
        .iter()
        .find(|e| e["caller"] == caller && e["callee"] == callee);
    e.map_or(0, |e| e["calls"].as_u64().unwrap_or(0))
}

fn function<'a>(g: &'a Value, name: &str) -> &'a Value {
    let all = g["functions"].as_array().expect("functions");
    all.iter()
        .find(|f| f["name"] == name)
        .unwrap_or_else(|| panic!("no {name}: {g:#}"))
}

/// The edges every run of the tree has.
fn assert_tree(g: &Value, middle: u64, leaf_in_middle: u64) {
    assert_eq!(edge(g, "<spontaneous>", "main"), 1, "{g:#}");
    assert_eq!(edge(g, "main", "middle"), middle, "{g:#}");
    assert_eq!(edge(g, "middle", "leaf"), leaf_in_middle, "{g:#}");
    assert_eq!(edge(g, "main", "leaf"), 1, "{g:#}");
    assert_eq!(edge(g, "main", "recurse"), 1, "{g:#}");
    assert_eq!(edge(g, "recurse", "recurse"), 5, "{g:#}");
    let r = function(g, "recurse");
    assert_eq!(
        (r["calls"].as_u64(), r["recursive"].as_u64()),
        (Some(1), Some(5))
    );
}

#[test]
fn calls_functions_counts_each_edge_of_a_known_tree_exactly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = need!(instrumented(dir.path()));
    let (run, stdout) = functions(&[], &[&bin], dir.path());
    assert_eq!(stdout, "depth 5\n");
    let g = graph(&run);
    assert_tree(&g, 3, 12);
    assert_eq!(function(&g, "leaf")["calls"].as_u64(), Some(13));
    for f in g["functions"].as_array().expect("functions") {
        let (own, total) = (&f["self_time"]["ns"], &f["total"]["ns"]);
        let (own, total) = (own.as_f64().expect("self"), total.as_f64().expect("total"));
        assert!(total >= own, "inclusive below self: {f:#}");
    }
    let names = run["results"][0]["metrics"].as_array().expect("metrics");
    assert_eq!(names.len(), 4, "{run:#}");
}

#[test]
fn calls_functions_prints_the_gprof_call_graph_and_flat_profile() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = need!(instrumented(dir.path()));
    let out = sysmeter()
        .args(["calls", "--functions", "--no-store", "--"])
        .arg(&bin)
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{text}");
    for column in [
        "% time",
        "self/call",
        "total/call",
        "children",
        "called",
        "index",
    ] {
        assert!(text.contains(column), "no {column}: {text}");
    }
    // called/total on the caller and callee lines, called+self for the recursion.
    for cell in [
        "3/3",
        "12/13",
        "1/13",
        "1+5",
        "<spontaneous>",
        "middle [",
        "leaf [",
    ] {
        assert!(text.contains(cell), "no {cell}: {text}");
    }
    assert!(!text.contains("< resolution (±0"), "{text}");
}

#[test]
fn calls_functions_html_page_has_the_flat_profile_call_graph_and_flame_graph() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = need!(instrumented(dir.path()));
    let json = dir.path().join("run.json");
    let page = dir.path().join("page.html");
    let calls = [
        "calls",
        "--functions",
        "--no-store",
        "--format",
        "json",
        "--out",
    ];
    stderr_of(sysmeter().args(calls).arg(&json).arg("--").arg(&bin), 0);
    stderr_of(
        sysmeter().args(["report", "--html"]).arg(&page).arg(&json),
        0,
    );
    let html = std::fs::read_to_string(&page).expect("page");
    for part in [
        "Flat profile",
        "total/call",
        "spontaneous",
        "data:image/svg+xml",
        "1+5",
    ] {
        assert!(html.contains(part), "no {part} in the page");
    }
}

#[test]
fn calls_functions_follow_threads_and_forked_children() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = need!(instrumented(dir.path()));
    let (run, _) = functions(&[], &[&bin, "threads"], dir.path());
    let g = graph(&run);
    assert_tree(&g, 3, 12 + 16);
    assert_eq!(edge(&g, "<spontaneous>", "worker"), 2, "{g:#}");
    assert_eq!(edge(&g, "worker", "middle"), 4, "{g:#}");
    let (run, _) = functions(&["-f"], &[&bin, "fork"], dir.path());
    let g = graph(&run);
    assert_eq!(
        edge(&g, "main", "middle"),
        4,
        "the child's call counts too: {g:#}"
    );
    let (run, _) = functions(&[], &[&bin, "fork"], dir.path());
    assert_eq!(
        edge(&graph(&run), "main", "middle"),
        3,
        "without -f, the parent only"
    );
}

#[test]
fn calls_functions_survive_longjmp_past_exit_hooks() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = need!(instrumented(dir.path()));
    let (run, stdout) = functions(&[], &[&bin, "jmp"], dir.path());
    assert_eq!(stdout, plain_stdout(&[&bin, "jmp"]));
    let g = graph(&run);
    assert_tree(&g, 3, 12);
    assert_eq!(edge(&g, "main", "jumper"), 2, "{g:#}");
    assert_eq!(edge(&g, "jumper", "deep"), 2, "{g:#}");
    assert_eq!(edge(&g, "deep", "leaf"), 2, "{g:#}");
    assert_eq!(function(&g, "deep")["unwound"].as_u64(), Some(2), "{g:#}");
}

/// The C++ fixture built by `compiler` (`c++`: GCC's unwinding runs the exit hooks;
/// `clang++`: it does not, so the hooks must find the frames gone by themselves).
fn cxx_fixture(dir: &Path, compiler: &str) -> Result<PathBuf, Missing> {
    let exe = dir.join(format!("funcs_throw_{compiler}"));
    let flags = ["-O1", "-finstrument-functions"];
    build_fixture(compiler, &flags, "funcs_throw.cc", exe)
}

fn exception_case(compiler: &str) {
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = need!(cxx_fixture(dir.path(), compiler));
    let bin = bin.to_string_lossy().into_owned();
    let (run, stdout) = functions(&[], &[&bin], dir.path());
    assert_eq!(stdout, plain_stdout(&[&bin]));
    assert_eq!(stdout, "caught 10 sum 320\n");
    let g = graph(&run);
    assert_eq!(edge(&g, "<spontaneous>", "main"), 1, "{g:#}");
    assert_eq!(edge(&g, "main", "middle(int)"), 30, "{g:#}");
    assert_eq!(edge(&g, "middle(int)", "thrower(int)"), 30, "{g:#}");
    let edges = g["edges"].as_array().map(Vec::len);
    assert_eq!(edges, Some(3), "no other edge: {g:#}");
}

#[test]
fn calls_functions_survive_a_cxx_exception() {
    exception_case("c++");
}

#[test]
fn calls_functions_survive_a_cxx_exception_built_by_clang() {
    exception_case("clang++");
}

#[test]
fn calls_functions_refuses_a_program_without_the_hooks() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plain = need!(tree(dir.path(), &[]));
    let stderr = refused(&plain);
    assert!(
        stderr.contains(
            "has no __cyg_profile_func_enter reference: rebuild it with -finstrument-functions"
        ),
        "{stderr}"
    );
    let pg_dir = dir.path().join("pg");
    std::fs::create_dir(&pg_dir).expect("mkdir");
    let pg = need!(tree(&pg_dir, &["-pg"]));
    let stderr = refused(&pg);
    assert!(
        stderr.contains("-pg") && stderr.contains("-finstrument-functions"),
        "{stderr}"
    );
}

/// `calls --functions -- PROG`, which must be refused (exit 2): the stderr.
fn refused(prog: &Path) -> String {
    stderr_of(
        sysmeter()
            .args(["calls", "--functions", "--no-store", "--"])
            .arg(prog),
        2,
    )
}

#[test]
fn calls_functions_refuses_a_program_that_defines_the_hooks() {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = dir.path().join("own.c");
    let hooks = "__attribute__((no_instrument_function)) void __cyg_profile_func_enter(void *f, \
                 void *s) { (void)f; (void)s; }\n__attribute__((no_instrument_function)) void \
                 __cyg_profile_func_exit(void *f, void *s) { (void)f; (void)s; }\nint main(void) \
                 { return 0; }\n";
    std::fs::write(&src, hooks).expect("write");
    let exe = dir.path().join("own");
    let built = Command::new("cc")
        .args(["-finstrument-functions", "-o"])
        .arg(&exe)
        .arg(&src)
        .status();
    let built = built.map_err(|e| Missing::new(Cap::Cc, format!("no C compiler (cc: {e})")));
    assert!(need!(built).success());
    let stderr = refused(&exe);
    assert!(
        stderr.contains("defines __cyg_profile_func_enter itself"),
        "{stderr}"
    );
}
