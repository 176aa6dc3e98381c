//! `os.lookup`: what translating a path name costs — `stat` by number of components, long
//! against short names, symbolic-link chains, a relative `openat` against the absolute path,
//! negative lookups (ENOENT) of a remembered and of a fresh name, a `$PATH` search, and
//! (as root) a dentry-cache miss against a hit. The 4.2BSD `namei` story, measured here.
//!
//! In the `os` group because a cached lookup is the kernel's VFS and dentry cache, the same
//! whatever the file system; only the fresh negative lookup and the miss reach the file
//! system, which is why the tree lives under `--dir` like the `fs` experiments' files.
//! Submodules: [`tree`] (the temporary tree), [`miss`] (drop_caches passes), [`findings`].

mod findings;
mod miss;
mod tree;

use std::hint::black_box;

use sysmeter_sys::syscall as sys;

use crate::harness::{Ctx, Experiment, ExperimentError, Measured, Spec};
use crate::model::{HostInfo, Series, SeriesPoint, Unit};
use tree::Tree;

/// The experiment.
pub struct OsLookup;

/// Path depths of the series, in components.
pub const DEPTHS: [usize; 6] = [1, 2, 4, 8, 16, 32];

/// Metric name of `stat` through `depth` short components.
pub fn depth_name(depth: usize) -> String {
    let s = if depth == 1 { "" } else { "s" };
    format!("stat, {depth} component{s}")
}

const LONG: &str = "stat, 8 components of 255 bytes";
const REL: &str = "openat+close, relative (4 components)";
const ABS: &str = "open+close, absolute path";
const NEG_CACHED: &str = "stat ENOENT, remembered name";
const NEG_FRESH: &str = "stat ENOENT, fresh name";
const PATH_SEARCH: &str = "PATH search (stat per directory, found in the last)";
/// Names the negative-lookup workload cycles through when they are to stay cached.
const CACHED_NAMES: u64 = 64;

fn link_name(k: usize) -> String {
    let s = if k == 1 { "" } else { "s" };
    format!("stat through {k} symlink{s}")
}

impl Experiment for OsLookup {
    fn page(&self) -> &'static str {
        include_str!("../lookup.md")
    }

    fn run(&self, ctx: &mut Ctx<'_>) -> Result<Measured, ExperimentError> {
        let base = ctx
            .params
            .dir
            .clone()
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_else(|| ".".into());
        let dirs = path_dirs();
        let t = Tree::create(&base, dirs)?;
        let mut out = Measured::default();
        depths(ctx, &t, &mut out)?;
        names_and_links(ctx, &t, &mut out)?;
        relative_absolute(ctx, &t, &mut out)?;
        negatives(ctx, &t, &mut out)?;
        path_search(ctx, &t, dirs, &mut out)?;
        let miss = miss::measure(ctx, t.fd(), &tree::c(&tree::short_path(8))?)?;
        findings::miss_outcome(&mut out, miss);
        Ok(out)
    }

    fn metric_findings(&self, _host: &HostInfo, out: &mut Measured) {
        findings::quoting(out);
    }
}

/// Directories in this process's `$PATH` (8 when unset), at most 64.
fn path_dirs() -> usize {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).count())
        .unwrap_or(8)
        .clamp(1, 64)
}

fn stat_metric(
    ctx: &mut Ctx<'_>,
    name: &str,
    fd: i32,
    path: &std::ffi::CStr,
) -> Result<crate::model::Metric, ExperimentError> {
    if sys::stat_at(fd, path) != 0 {
        return Err(ExperimentError::Failed(format!(
            "{name}: stat of {} failed in the test tree",
            path.to_string_lossy()
        )));
    }
    ctx.measure(Spec::new(name), |n| {
        for _ in 0..n {
            black_box(sys::stat_at(fd, path));
        }
    })
}

fn depths(ctx: &mut Ctx<'_>, t: &Tree, out: &mut Measured) -> Result<(), ExperimentError> {
    let mut points = Vec::new();
    for d in DEPTHS {
        let path = tree::c(&tree::short_path(d))?;
        let m = stat_metric(ctx, &depth_name(d), t.fd(), &path)?;
        points.push(SeriesPoint {
            x: d as f64,
            summary: m.summary,
            cycles: m.cycles,
        });
        out.metrics.push(m);
    }
    out.series.push(Series {
        name: "stat by path depth".into(),
        x_label: "components".into(),
        x_unit: Unit::Count,
        y_unit: Unit::Ns,
        points,
    });
    Ok(())
}

fn names_and_links(ctx: &mut Ctx<'_>, t: &Tree, out: &mut Measured) -> Result<(), ExperimentError> {
    let long = tree::c(&tree::long_path())?;
    out.metrics.push(stat_metric(ctx, LONG, t.fd(), &long)?);
    for k in [1, 4, tree::MAX_LINKS] {
        let path = tree::c(std::path::Path::new(&format!("l{k}")))?;
        out.metrics
            .push(stat_metric(ctx, &link_name(k), t.fd(), &path)?);
    }
    Ok(())
}

fn relative_absolute(
    ctx: &mut Ctx<'_>,
    t: &Tree,
    out: &mut Measured,
) -> Result<(), ExperimentError> {
    let rel = tree::c(&tree::short_path(4))?;
    let abs = tree::c(&t.path().join(tree::short_path(4)))?;
    for (name, fd, path) in [(REL, t.fd(), &rel), (ABS, sys::AT_FDCWD, &abs)] {
        if sys::openat_close(fd, path) != 0 {
            return Err(ExperimentError::Failed(format!(
                "{name}: open failed in the test tree"
            )));
        }
        let note = format!(
            "{} components",
            path.to_bytes()
                .split(|&b| b == b'/')
                .filter(|c| !c.is_empty())
                .count()
        );
        out.metrics
            .push(ctx.measure(Spec::new(name).note(&note), |n| {
                for _ in 0..n {
                    black_box(sys::openat_close(fd, path));
                }
            })?);
    }
    Ok(())
}

fn negatives(ctx: &mut Ctx<'_>, t: &Tree, out: &mut Measured) -> Result<(), ExperimentError> {
    let fd = t.fd();
    let mut names = tree::Names::new();
    let mut i = 0u64;
    let cached = ctx.measure(Spec::new(NEG_CACHED).note("2 components, ENOENT"), |n| {
        for _ in 0..n {
            i = (i + 1) % CACHED_NAMES;
            black_box(sys::stat_at(fd, names.name(i)));
        }
    })?;
    // Fresh names start past the cached ones and never repeat.
    let mut next = CACHED_NAMES;
    let fresh = ctx.measure(
        Spec::new(NEG_FRESH).note("2 components, ENOENT, never looked up"),
        |n| {
            for _ in 0..n {
                next += 1;
                black_box(sys::stat_at(fd, names.name(next)));
            }
        },
    )?;
    out.metrics.extend([cached, fresh]);
    Ok(())
}

fn path_search(
    ctx: &mut Ctx<'_>,
    t: &Tree,
    dirs: usize,
    out: &mut Measured,
) -> Result<(), ExperimentError> {
    let paths: Vec<std::ffi::CString> = (0..dirs)
        .map(|i| tree::c(&t.path().join(format!("p{i}")).join("cmd")))
        .collect::<Result<_, _>>()?;
    let note = format!("{dirs} directories (as many as this $PATH), absolute paths");
    out.metrics
        .push(ctx.measure(Spec::new(PATH_SEARCH).note(&note), |n| {
            for _ in 0..n {
                for p in &paths {
                    if sys::stat_at(sys::AT_FDCWD, p) == 0 {
                        break;
                    }
                }
            }
        })?);
    Ok(())
}
