//! System call number ↔ name, per architecture, from the `syscalls` crate's tables (generated
//! from Linux 6.18 for x86_64 and aarch64). The table is chosen by the `AUDIT_ARCH_*` value a
//! tracer reports for each call, never by the architecture sysmeter was built for, so an
//! i386 task on x86_64 is not named with x86_64 numbers. Numbers no table knows print as
//! `syscall_<nr>` (with an `i386:`-style prefix for an architecture without a table).
//!
//! Pure. A test compares the x86_64 table with the host's `asm/unistd_64.h` when it exists,
//! so a stale crate is noticed.

use std::borrow::Cow;

use sysmeter_sys::seccomp::{AUDIT_ARCH_AARCH64, AUDIT_ARCH_I386, AUDIT_ARCH_X86_64};

/// An architecture with a name table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Arch {
    /// x86_64 (AUDIT_ARCH_X86_64).
    X86_64,
    /// aarch64 (AUDIT_ARCH_AARCH64).
    Aarch64,
}

impl Arch {
    /// The architecture of an `AUDIT_ARCH_*` value, if it has a table.
    pub fn from_audit(arch: u32) -> Option<Arch> {
        match arch {
            AUDIT_ARCH_X86_64 => Some(Arch::X86_64),
            AUDIT_ARCH_AARCH64 => Some(Arch::Aarch64),
            _ => None,
        }
    }

    /// The architecture sysmeter runs on (the one launched commands normally use).
    pub fn native() -> Arch {
        if cfg!(target_arch = "aarch64") {
            Arch::Aarch64
        } else {
            Arch::X86_64
        }
    }

    /// Its `AUDIT_ARCH_*` value.
    pub fn audit(self) -> u32 {
        match self {
            Arch::X86_64 => AUDIT_ARCH_X86_64,
            Arch::Aarch64 => AUDIT_ARCH_AARCH64,
        }
    }
}

/// The name of call `nr` of `arch`: `read`, or `syscall_<nr>` when the table lacks it, or
/// `i386:syscall_<nr>` / `arch_<hex>:syscall_<nr>` for an architecture without a table.
pub fn name(arch: u32, nr: u64) -> Cow<'static, str> {
    let known = usize::try_from(nr)
        .ok()
        .and_then(|n| match Arch::from_audit(arch)? {
            Arch::X86_64 => syscalls::x86_64::Sysno::new(n).map(|s| s.name()),
            Arch::Aarch64 => syscalls::aarch64::Sysno::new(n).map(|s| s.name()),
        });
    match (known, Arch::from_audit(arch)) {
        (Some(n), _) => Cow::Borrowed(n),
        (None, Some(_)) => Cow::Owned(format!("syscall_{nr}")),
        (None, None) if arch == AUDIT_ARCH_I386 => Cow::Owned(format!("i386:syscall_{nr}")),
        (None, None) => Cow::Owned(format!("arch_{arch:x}:syscall_{nr}")),
    }
}

/// The number of call `name` in `arch`'s table.
pub fn number(arch: Arch, name: &str) -> Option<u32> {
    match arch {
        Arch::X86_64 => name
            .parse::<syscalls::x86_64::Sysno>()
            .ok()
            .map(|s| s.id() as u32),
        Arch::Aarch64 => name
            .parse::<syscalls::aarch64::Sysno>()
            .ok()
            .map(|s| s.id() as u32),
    }
}

/// Whether `name` is a system call of x86_64 or aarch64.
pub fn is_known(name: &str) -> bool {
    number(Arch::X86_64, name).is_some() || number(Arch::Aarch64, name).is_some()
}

/// Every call name of `arch`.
pub fn all_names(arch: Arch) -> Vec<&'static str> {
    match arch {
        Arch::X86_64 => syscalls::x86_64::Sysno::iter().map(|s| s.name()).collect(),
        Arch::Aarch64 => syscalls::aarch64::Sysno::iter().map(|s| s.name()).collect(),
    }
}

/// Parses `#define __NR_name nr` lines of an `asm/unistd*.h` header.
pub fn parse_unistd(text: &str) -> Vec<(String, u64)> {
    text.lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            if words.next()? != "#define" {
                return None;
            }
            let name = words.next()?.strip_prefix("__NR_")?;
            let nr = words.next()?.parse().ok()?;
            Some((name.to_string(), nr))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_numbers_have_their_names_in_both_tables() {
        let x = AUDIT_ARCH_X86_64;
        assert_eq!(name(x, 0), "read");
        assert_eq!(name(x, 1), "write");
        assert_eq!(name(x, 59), "execve");
        assert_eq!(name(x, 110), "getppid");
        assert_eq!(name(x, 231), "exit_group");
        assert_eq!(name(x, 257), "openat");
        let a = AUDIT_ARCH_AARCH64;
        for (nr, n) in [
            (56, "openat"),
            (57, "close"),
            (63, "read"),
            (64, "write"),
            (93, "exit"),
            (94, "exit_group"),
            (173, "getppid"),
            (220, "clone"),
            (221, "execve"),
        ] {
            assert_eq!(name(a, nr), n);
            assert_eq!(number(Arch::Aarch64, n), Some(nr as u32));
        }
        assert_eq!(number(Arch::X86_64, "open"), Some(2));
        assert_eq!(
            number(Arch::Aarch64, "open"),
            None,
            "aarch64 has only openat"
        );
        assert!(is_known("open") && is_known("openat") && !is_known("frobnicate"));
    }

    #[test]
    fn unknown_numbers_and_architectures_are_named_by_number() {
        assert_eq!(name(AUDIT_ARCH_X86_64, 999), "syscall_999");
        assert_eq!(name(AUDIT_ARCH_I386, 20), "i386:syscall_20");
        assert_eq!(name(0x1234, 5), "arch_1234:syscall_5");
    }

    #[test]
    fn header_parser_reads_defines() {
        let text = "#ifndef X\n#define _ASM_X 1\n#define __NR_read 0\n#define __NR_write 1\n";
        assert_eq!(
            parse_unistd(text),
            vec![("read".to_string(), 0), ("write".to_string(), 1)]
        );
    }

    /// Staleness: every call in the host's kernel headers must have the same number in the
    /// crate's x86_64 table (the crate's table is newer, so it may have more).
    #[test]
    fn x86_64_table_matches_the_host_headers() {
        let paths = [
            "/usr/include/x86_64-linux-gnu/asm/unistd_64.h",
            "/usr/include/asm/unistd_64.h",
        ];
        let Some(text) = paths.iter().find_map(|p| std::fs::read_to_string(p).ok()) else {
            println!("skipped: no x86_64 asm/unistd_64.h here (install linux-libc-dev)");
            return;
        };
        let entries = parse_unistd(&text);
        assert!(entries.len() > 300, "parsed only {} entries", entries.len());
        let mismatches: Vec<String> = entries
            .iter()
            .filter(|(n, nr)| name(AUDIT_ARCH_X86_64, *nr) != n.as_str())
            .map(|(n, nr)| format!("{n}={nr} is {}", name(AUDIT_ARCH_X86_64, *nr)))
            .collect();
        assert!(mismatches.is_empty(), "stale table: {mismatches:?}");
    }
}
