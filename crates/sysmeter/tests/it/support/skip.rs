//! Skipping a test that cannot run here, and failing instead where it must run.
//!
//! `skip!(Cap, "reason {x}")` prints `skipped: <reason>` and returns from the test, unless
//! the environment variable `SYSMETER_TEST_REQUIRE` names that capability (a comma-separated
//! list of the names below) or is `all`: then it panics with
//! `required capability <name> missing: <reason>`. `.ci/run` sets `all`, so nothing in CI
//! passes by skipping. `need!(expr)` unwraps a `Result<T, Missing>` or skips with its
//! [`Missing`]; [`Missing::skip_part`] reports a skipped *part* of a test that goes on
//! without it (and fails the same way where the capability is required).
//!
//! The capabilities, by the name `SYSMETER_TEST_REQUIRE` uses:
//!
//! | name | what | on Debian |
//! | --- | --- | --- |
//! | `root` | running as root (uid 0) | run the tests as root |
//! | `cc` | a C compiler for the fixtures in tests/fixtures/programs | `apt-get install gcc` |
//! | `perf` | perf events permitted (sampling profiler) | root, or perf_event_paranoid ≤ 1 |
//! | `tracepoints` | raw_syscalls tracepoints (root or perf_event_paranoid ≤ -1) | root |
//! | `chromium` | a headless Chromium that renders a page | `apt-get install chromium` |
//! | `bindfs` | a FUSE mount made with bindfs (needs root and /dev/fuse) | `apt-get install bindfs` |
//! | `ip` | ip(8) from iproute2 | `apt-get install iproute2` |
//! | `netns` | creating a network namespace and a veth pair (root) | root |
//! | `rawsock` | raw ICMP sockets (CAP_NET_RAW) | root outside a restricted container |
//! | `postgres` | a PostgreSQL server (`SYSMETER_TEST_PG` or the server binaries) | `apt-get install postgresql` |
//! | `cpus2` | this process may run on two or more CPUs | a machine with 2+ CPUs |
//! | `script` | script(1) from util-linux, for a pseudo-terminal | `apt-get install util-linux` |
//! | `shm` | /dev/shm is a tmpfs | the default |
//! | `mount` | mounting a tmpfs (root, not denied by the container) | root |
//! | `disk` | the target directory is on a disk, not tmpfs or overlay | build on a real disk |
//! | `xz` | the distribution's /usr/bin/xz (built without frame pointers) | `apt-get install xz-utils` |
//! | `cgroup` | a memory- or CPU-limited cgroup can be made (root, the memory or cpu controller) | root |
//! | `strace` | strace(1), the reference `trace` is checked against | `apt-get install strace` |
//! | `node_exporter` | Prometheus' node_exporter, for the textfile-collector path | `apt-get install prometheus-node-exporter` |
//! | `ansible` | `ansible-playbook`, for the Ansible fleet test | `apt-get install ansible` |
//! | `sshd` | OpenSSH's /usr/sbin/sshd, ssh and ssh-keygen (the Ansible test's hosts) | `apt-get install openssh-server` |
//! | `bpf` | BPF programs may be loaded (root or CAP_BPF + CAP_PERFMON, kernel BTF) | root on a kernel with CONFIG_DEBUG_INFO_BTF |
//! | `bpftrace` | bpftrace, a neighbour on the futex tracepoint for the blindness tests | `apt-get install bpftrace` |
//! | `go` | Go's toolchain, whose `go tool pprof` reads the pprof exports | `apt-get install golang-go` |
//! | `jsonschema` | python3 with its jsonschema module, for the speedscope export's schema | `apt-get install python3-jsonschema` |
//! | `valgrind` | valgrind's callgrind_annotate, the reader of the callgrind export | `apt-get install valgrind` |

/// Defines [`Cap`], its names and [`Cap::ALL`] from one list, so that a capability cannot be
/// added without its name.
macro_rules! capabilities {
    ($($cap:ident => $name:literal,)*) => {
        /// A capability a test may lack; [`Cap::name`] is its name in `SYSMETER_TEST_REQUIRE`.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Cap {
            $($cap,)*
        }

        impl Cap {
            /// Every capability, in the order of the module documentation's table.
            pub const ALL: &[Cap] = &[$(Cap::$cap,)*];

            /// The fixed name of the capability, as in the table of the module documentation.
            pub fn name(self) -> &'static str {
                match self {
                    $(Cap::$cap => $name,)*
                }
            }
        }
    };
}

capabilities! {
    Root => "root",
    Cc => "cc",
    Perf => "perf",
    Tracepoints => "tracepoints",
    Chromium => "chromium",
    Bindfs => "bindfs",
    Ip => "ip",
    Netns => "netns",
    Rawsock => "rawsock",
    Postgres => "postgres",
    Cpus2 => "cpus2",
    Script => "script",
    Shm => "shm",
    Mount => "mount",
    Disk => "disk",
    Cgroup => "cgroup",
    Strace => "strace",
    Xz => "xz",
    Bpf => "bpf",
    NodeExporter => "node_exporter",
    Ansible => "ansible",
    Sshd => "sshd",
    Bpftrace => "bpftrace",
    Go => "go",
    JsonSchema => "jsonschema",
    Valgrind => "valgrind",
}

/// Whether `list` (the value of `SYSMETER_TEST_REQUIRE`) requires `cap`.
pub fn required_by(list: &str, cap: Cap) -> bool {
    list.split(',')
        .map(str::trim)
        .any(|w| w == "all" || w == cap.name())
}

/// Why a test cannot run here: the capability that is missing and the reason.
#[derive(Debug)]
pub struct Missing {
    /// What is missing.
    pub cap: Cap,
    /// Why, with the fix where there is one.
    pub reason: String,
}

impl Missing {
    /// `cap` is missing because of `reason`.
    pub fn new(cap: Cap, reason: impl Into<String>) -> Missing {
        Missing {
            cap,
            reason: reason.into(),
        }
    }

    /// Prints `skipped: <reason>`, or panics when `SYSMETER_TEST_REQUIRE` requires the
    /// capability. The caller returns from the test afterwards (see `skip!`).
    pub fn report(&self) {
        self.report_as(None);
    }

    /// Reports that `part` of a test is skipped (the rest runs): prints
    /// `skipped: <part> (<reason>)`, or panics when the capability is required.
    pub fn skip_part(&self, part: &str) {
        self.report_as(Some(part));
    }

    fn report_as(&self, part: Option<&str>) {
        let text = match part {
            Some(part) => format!("{part} ({})", self.reason),
            None => self.reason.clone(),
        };
        let list = std::env::var("SYSMETER_TEST_REQUIRE").unwrap_or_default();
        if required_by(&list, self.cap) {
            panic!("required capability {} missing: {text}", self.cap.name());
        }
        println!("skipped: {text}");
    }
}

/// `skip!(Cap, "format", args…)`: report the missing capability and return from the test.
/// `skip!(missing)` does the same for a [`Missing`] value.
macro_rules! skip {
    ($cap:ident, $($reason:tt)+) => {{
        $crate::support::skip::Missing::new(
            $crate::support::skip::Cap::$cap,
            format!($($reason)+),
        )
        .report();
        return;
    }};
    ($missing:expr) => {{
        $missing.report();
        return;
    }};
}

/// `need!(expr)`: the `Ok` value of a `Result<T, Missing>`, or `skip!` with its `Err`.
macro_rules! need {
    ($result:expr) => {
        match $result {
            Ok(value) => value,
            Err(missing) => $crate::support::skip::skip!(missing),
        }
    };
}

pub(crate) use {need, skip};

#[test]
fn every_capability_has_its_own_name_in_the_table() {
    let all = Cap::ALL;
    let table = include_str!("skip.rs");
    let mut names: Vec<&str> = all.iter().map(|c| c.name()).collect();
    for name in &names {
        assert!(
            table.contains(&format!("//! | `{name}` |")),
            "{name} is not in the table"
        );
    }
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), all.len(), "two capabilities share a name");
}

#[test]
fn the_require_list_names_capabilities_or_all() {
    assert!(required_by("all", Cap::Chromium));
    assert!(required_by("cc, postgres", Cap::Postgres));
    assert!(!required_by("cc,postgres", Cap::Perf));
    assert!(!required_by("", Cap::Root));
    assert!(!required_by("rootx", Cap::Root));
}
