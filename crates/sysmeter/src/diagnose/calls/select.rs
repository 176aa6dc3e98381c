//! Which functions to probe, and where: `-e` patterns (globs with `*` and `?`, comma
//! separated, optionally qualified by object as `libc.so.6:memcpy`) resolved against the
//! program and the libraries it needs.
//!
//! - An unqualified pattern matches the functions the program imports, probed at the
//!   program's own PLT stubs: every call the program makes to them is counted, whatever
//!   the library resolves them to — IFUNC variants (`strlen` → `__strlen_avx2`) and vDSO
//!   functions (`time`, `clock_gettime`) included, and with BIND_NOW (`-z now`) too, since
//!   the stub runs on every call either way. This is what `ltrace` counts.
//! - A qualified pattern matches the functions the named object defines (`.dynsym`),
//!   probed at their first instruction: every caller counts, the library's own internal
//!   calls included. IFUNC symbols are refused there (the address is the resolver).
//!
//! Pure apart from reading ELF files; depends on `observe::elf`.

use std::path::{Path, PathBuf};

use crate::diagnose::observe::elf::{self, Image};

/// What `-e` selects when not given: allocation, strings, time, mutexes, stdio.
pub const DEFAULT_SET: &str = "malloc,calloc,realloc,free,posix_memalign,aligned_alloc,\
    str*,mem*,time,gettimeofday,clock_gettime,pthread_mutex_*,pthread_rwlock_*,\
    fopen,fclose,fread,fwrite,fgets,fputs,fflush,printf,fprintf,sprintf,snprintf,puts,\
    putc,fputc,getc,fgetc,qsort";

/// One pattern of `-e`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    /// The object it is limited to (`libc.so.6`; a prefix such as `libc` matches too).
    pub object: Option<String>,
    /// The glob.
    pub glob: String,
}

/// Parses `-e` values (each may hold commas); `None` when a pattern is empty.
pub fn parse(values: &[String]) -> Option<Vec<Pattern>> {
    values
        .iter()
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| match p.rsplit_once(':') {
            Some((obj, g)) if !obj.is_empty() && !g.is_empty() => Some(Pattern {
                object: Some(obj.to_string()),
                glob: g.to_string(),
            }),
            Some(_) => None,
            None => Some(Pattern {
                object: None,
                glob: p.to_string(),
            }),
        })
        .collect::<Option<Vec<_>>>()
        .filter(|v| !v.is_empty())
}

/// Whether `name` matches `glob` (`*` any run, `?` one character).
pub fn glob_match(glob: &str, name: &str) -> bool {
    let (g, n): (Vec<char>, Vec<char>) = (glob.chars().collect(), name.chars().collect());
    let (mut gi, mut ni, mut star, mut mark) = (0, 0, None, 0);
    while ni < n.len() {
        if gi < g.len() && (g[gi] == '?' || g[gi] == n[ni]) {
            gi += 1;
            ni += 1;
        } else if gi < g.len() && g[gi] == '*' {
            star = Some(gi);
            mark = ni;
            gi += 1;
        } else if let Some(s) = star {
            gi = s + 1;
            mark += 1;
            ni = mark;
        } else {
            return false;
        }
    }
    g[gi..].iter().all(|&c| c == '*')
}

/// One function to probe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Site {
    /// The function's name as the user searches for it.
    pub name: String,
    /// The object probed (its file name): the program for PLT stubs.
    pub object: String,
    /// Its path.
    pub path: PathBuf,
    /// File offset of the probed instruction.
    pub offset: u64,
    /// Probed at the program's PLT stub (else at the function's definition).
    pub plt: bool,
}

/// The program and its libraries, as read.
pub struct Objects {
    /// The program.
    pub program: (PathBuf, Image),
    /// Its libraries (`DT_NEEDED`, found in the usual directories or given by maps).
    pub libraries: Vec<(PathBuf, Image)>,
}

const LIB_DIRS: [&str; 6] = [
    "/lib/x86_64-linux-gnu",
    "/usr/lib/x86_64-linux-gnu",
    "/lib64",
    "/usr/lib64",
    "/lib",
    "/usr/lib",
];

/// Where the dynamic linker would find `name` (an approximation: RUNPATH, then the usual
/// directories; `LD_LIBRARY_PATH` and ld.so.conf extras are not read).
fn find_library(name: &str, runpath: &[String]) -> Option<PathBuf> {
    if name.contains('/') {
        return Some(PathBuf::from(name));
    }
    runpath
        .iter()
        .map(String::as_str)
        .chain(LIB_DIRS)
        .map(|d| Path::new(d).join(name))
        .find(|p| p.exists())
}

impl Objects {
    /// Reads `program` and the libraries: `maps_libs` when known (an attached process),
    /// else the program's `DT_NEEDED` entries.
    pub fn read(program: &Path, maps_libs: Option<Vec<PathBuf>>) -> Result<Objects, elf::ElfError> {
        let image = elf::read(program)?;
        let paths = maps_libs.unwrap_or_else(|| {
            let needed = image.needed.iter();
            needed
                .filter_map(|n| find_library(n, &image.runpath))
                .collect()
        });
        let libraries = paths
            .into_iter()
            .filter_map(|p| Some((p.clone(), elf::read(&p).ok()?)))
            .collect();
        Ok(Objects {
            program: (program.to_path_buf(), image),
            libraries,
        })
    }

    /// The sites `patterns` select (each function once), and notes on what was refused.
    pub fn sites(&self, patterns: &[Pattern]) -> (Vec<Site>, Vec<String>) {
        let (mut sites, mut notes) = (Vec::<Site>::new(), Vec::new());
        let file_name = |p: &Path| {
            p.file_name()
                .map_or_else(String::new, |f| f.to_string_lossy().into_owned())
        };
        for pat in patterns {
            let Some(obj) = &pat.object else {
                let (path, img) = &self.program;
                for (name, offset) in img.plt.iter().filter(|(n, _)| glob_match(&pat.glob, n)) {
                    let site = Site {
                        name: name.clone(),
                        object: file_name(path),
                        path: path.clone(),
                        offset: *offset,
                        plt: true,
                    };
                    push_unique(&mut sites, site);
                }
                continue;
            };
            let objects = std::iter::once(&self.program).chain(&self.libraries);
            for (path, img) in objects.filter(|(p, _)| file_name(p).starts_with(obj.as_str())) {
                for d in img
                    .defined
                    .iter()
                    .filter(|d| glob_match(&pat.glob, &d.name))
                {
                    if d.ifunc {
                        notes.push(format!(
                            "{}:{} is an IFUNC (its address is the resolver, not the \
                             function): give it without the object to count calls through \
                             the program's PLT",
                            file_name(path),
                            d.name
                        ));
                        continue;
                    }
                    let site = Site {
                        name: d.name.clone(),
                        object: file_name(path),
                        path: path.clone(),
                        offset: d.offset,
                        plt: false,
                    };
                    push_unique(&mut sites, site);
                }
            }
        }
        (sites, notes)
    }
}

fn push_unique(sites: &mut Vec<Site>, site: Site) {
    if !sites
        .iter()
        .any(|s| s.path == site.path && s.offset == site.offset)
    {
        sites.push(site);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_like_a_shell() {
        // (pattern, name, matches); the last five as `fleet --metric` uses it: experiment
        // ids and `id/metric name`.
        let cases = [
            ("str*", "strlen", true),
            ("pthread_mutex_*", "pthread_mutex_lock", true),
            ("?ime", "time", true),
            ("*", "", true),
            ("str*", "memcpy", false),
            ("time", "times", false),
            ("a*b*c", "axxbyyc", true),
            ("a*b*c", "axxbyy", false),
            ("os.*", "os.syscall", true),
            ("mem.latency/*L1*", "mem.latency/random L1 (32 KiB)", true),
            ("os.sysca?l", "os.syscall", true),
            ("os.*", "cpu.loop", false),
            ("os.sys", "os.syscall", false),
        ];
        for (glob, name, matches) in cases {
            assert_eq!(glob_match(glob, name), matches, "{glob:?} on {name:?}");
        }
    }

    #[test]
    fn patterns_split_on_commas_and_objects() {
        let p = parse(&["malloc,libc.so.6:mem*".into(), "time".into()]).unwrap();
        assert_eq!(p.len(), 3);
        assert_eq!(p[1].object.as_deref(), Some("libc.so.6"));
        assert_eq!(p[1].glob, "mem*");
        assert!(parse(&[":x".into()]).is_none());
        assert!(parse(&[",".into()]).is_none());
    }
}
