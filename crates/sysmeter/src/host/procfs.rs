//! Parsers of per-process and load files under /proc: `/proc/self/status` (effective uid,
//! effective capabilities, allowed CPUs), `/proc/loadavg` and the dentry cache's
//! `/proc/sys/fs/dentry-state`.
//!
//! Pure: text in, values out. No file access; depends on nothing.

/// Linux capability bit numbers this crate checks (see capabilities(7)).
pub mod cap {
    /// CAP_NET_RAW: raw and packet sockets.
    pub const NET_RAW: u32 = 13;
    /// CAP_SYS_PTRACE: ptrace any process regardless of Yama.
    pub const SYS_PTRACE: u32 = 19;
    /// CAP_SYS_ADMIN: namespaces, mounts, and (before 5.8) perf/tracing.
    pub const SYS_ADMIN: u32 = 21;
    /// CAP_PERFMON (5.8+): perf events and tracepoints without full admin rights.
    pub const PERFMON: u32 = 38;
}

/// What /proc/self/status says about our identity and affinity.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProcStatus {
    /// Effective user id (second field of `Uid:`).
    pub euid: Option<u32>,
    /// Effective capability set (`CapEff:`, hex bit mask).
    pub cap_eff: Option<u64>,
    /// `Cpus_allowed_list:` (CPU list syntax).
    pub cpus_allowed_list: Option<String>,
}

impl ProcStatus {
    /// Whether capability `bit` is effective. Without a CapEff line, falls back to
    /// "euid is 0", the traditional meaning of root.
    pub fn has_cap(&self, bit: u32) -> bool {
        match self.cap_eff {
            Some(mask) => bit < 64 && mask & (1u64 << bit) != 0,
            None => self.euid == Some(0),
        }
    }

    /// Whether we run as root (euid 0).
    pub fn is_root(&self) -> bool {
        self.euid == Some(0)
    }
}

/// Parses /proc/self/status; absent or malformed lines leave fields `None`.
pub fn parse_status(text: &str) -> ProcStatus {
    let field = |key: &str| {
        text.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k == key).then(|| v.trim())
        })
    };
    ProcStatus {
        euid: field("Uid").and_then(|v| v.split_whitespace().nth(1)?.parse().ok()),
        cap_eff: field("CapEff").and_then(|v| u64::from_str_radix(v, 16).ok()),
        cpus_allowed_list: field("Cpus_allowed_list").map(str::to_string),
    }
}

/// The 1-minute load average from /proc/loadavg.
pub fn parse_loadavg(text: &str) -> Option<f64> {
    text.split_whitespace()
        .next()?
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
}

/// The dentry cache's size from /proc/sys/fs/dentry-state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DentryState {
    /// Dentries allocated (`nr_dentry`).
    pub total: u64,
    /// Of those, unused: cached, held by nobody, the first to be reclaimed (`nr_unused`).
    pub unused: u64,
    /// Negative dentries (remembered "no such file"), the fifth field since Linux 5.0;
    /// older kernels write 0 there.
    pub negative: Option<u64>,
}

/// Parses /proc/sys/fs/dentry-state: `nr_dentry nr_unused age_limit want_pages nr_negative
/// dummy`.
pub fn parse_dentry_state(text: &str) -> Option<DentryState> {
    let v: Vec<u64> = text
        .split_whitespace()
        .map(str::parse)
        .collect::<Result<_, _>>()
        .ok()?;
    Some(DentryState {
        total: *v.first()?,
        unused: *v.get(1)?,
        negative: (v.len() >= 6).then(|| v[4]),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_in_this_vm() {
        let s = parse_status(include_str!("../../tests/fixtures/host/x86_64-kvm/status"));
        assert_eq!(s.euid, Some(0));
        assert_eq!(s.cap_eff, Some(0x1fffeffffff));
        assert_eq!(s.cpus_allowed_list.as_deref(), Some("0-1"));
        assert!(s.is_root());
        for bit in [cap::NET_RAW, cap::SYS_PTRACE, cap::SYS_ADMIN, cap::PERFMON] {
            assert!(s.has_cap(bit), "bit {bit}");
        }
        // Bit 24 (CAP_SYS_RESOURCE) is cleared in this sandbox's mask.
        assert!(!s.has_cap(24));
    }

    #[test]
    fn unprivileged_user() {
        let s = parse_status(include_str!(
            "../../tests/fixtures/host/x86_64-metal/status"
        ));
        assert_eq!((s.euid, s.cap_eff), (Some(1000), Some(0)));
        assert!(!s.is_root() && !s.has_cap(cap::NET_RAW));
        assert_eq!(s.cpus_allowed_list.as_deref(), Some("0-7"));
    }

    #[test]
    fn missing_lines() {
        let s = parse_status("Uid:\t0\t0\t0\t0\n");
        assert!(
            s.has_cap(cap::SYS_ADMIN),
            "root without CapEff counts as privileged"
        );
        assert_eq!(parse_status(""), ProcStatus::default());
        assert!(!ProcStatus::default().has_cap(cap::NET_RAW));
        assert!(!parse_status("CapEff: zz\n").has_cap(1));
    }

    #[test]
    fn loadavg() {
        let kvm = include_str!("../../tests/fixtures/host/x86_64-kvm/loadavg");
        assert_eq!(parse_loadavg(kvm), Some(0.39));
        assert_eq!(parse_loadavg("0.08 0.12 0.10 1/612 23456\n"), Some(0.08));
        assert_eq!(parse_loadavg(""), None);
        assert_eq!(parse_loadavg("NaN"), None);
    }

    #[test]
    fn dentry_state() {
        let d = parse_dentry_state("219028\t210702\t45\t0\t74450\t0\n").expect("parse");
        assert_eq!(
            (d.total, d.unused, d.negative),
            (219028, 210702, Some(74450))
        );
        let old = parse_dentry_state("100 50 45 0").expect("parse");
        assert_eq!(old.negative, None);
        assert_eq!(parse_dentry_state("12 x"), None);
        assert_eq!(parse_dentry_state(""), None);
    }
}
