//! What differs between the machines (and the run settings) of two compared runs, as
//! labelled pairs of human-readable values. Shown first by `sysmeter compare`, because a
//! difference in CPU, kernel, virtualisation or caches explains a change better than code.
//!
//! Pure: compares two [`HostInfo`]s / [`RunRecord`]s. Values that change on every run of
//! the same machine (free memory, current frequency, capability probes) are left out.

use crate::model::units;
use serde::{Deserialize, Serialize};

use super::super::format;
use crate::model::RunRecord;
use crate::model::{CacheInfo, HostInfo};

/// One field whose value differs between A and B.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Difference {
    /// What differs (`CPU model`, `kernel`, `mitigation spectre_v2`, ...).
    pub field: String,
    /// A's value (`—` when absent).
    pub a: String,
    /// B's value.
    pub b: String,
}

/// A labelled field of a machine description.
type HostField = (&'static str, fn(&HostInfo) -> String);
/// A labelled setting of a run.
type RunField = (&'static str, fn(&RunRecord) -> String);

/// The fields of a machine description, most telling first (the host name first).
const HOST_FIELDS: [HostField; 17] = [
    ("host name", |h| h.hostname.clone()),
    ("architecture", |h| h.arch.clone()),
    ("CPU model", |h| h.cpu.model.clone()),
    ("CPU topology", topology),
    ("base frequency", |h| mhz(h.cpu.base_mhz)),
    ("max frequency", |h| mhz(h.cpu.max_mhz)),
    ("governor", |h| opt(h.cpu.governor.clone())),
    ("boost", |h| {
        opt(h.cpu.boost.map(|b| if b { "on" } else { "off" }))
    }),
    ("caches", caches),
    ("memory", memory),
    ("virtualization", |h| {
        h.virtualization.clone().unwrap_or_else(|| "none".into())
    }),
    ("kernel", |h| h.kernel.clone()),
    ("OS", |h| h.os.clone()),
    ("cgroup CPU limit", |h| {
        opt(h.cgroup.cpu_max.map(|c| format!("{} CPUs", units::sig3(c))))
    }),
    ("cgroup memory limit", |h| {
        opt(h.cgroup.memory_max_bytes.map(|b| units::bytes(b as f64)))
    }),
    ("transparent huge pages", |h| opt(h.thp.clone())),
    ("perf_event_paranoid", |h| opt(h.perf_event_paranoid)),
];

/// One machine's description as labelled values, in the order of [`machine_differences`]:
/// the fields, each mitigation's status, the disks (not the host name, which every machine
/// has its own of, nor the noise warnings, which belong to one run). `fleet` finds what its
/// outliers share in these.
pub fn machine_fields(h: &HostInfo) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = HOST_FIELDS[1..]
        .iter()
        .map(|(field, get)| (field.to_string(), get(h)))
        .collect();
    let mut names: Vec<&str> = h.vulnerabilities.iter().map(|(n, _)| n.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    out.extend(
        names
            .into_iter()
            .map(|n| (format!("mitigation {n}"), mitigation_status(h, n))),
    );
    out.push(("disks".to_string(), disks(h)));
    out
}

/// The machine fields that differ between `a` and `b`, most telling first.
pub fn machine_differences(a: &HostInfo, b: &HostInfo) -> Vec<Difference> {
    let mut out: Vec<Difference> = HOST_FIELDS
        .iter()
        .filter_map(|(field, get)| differ(field, get(a), get(b)))
        .collect();
    out.extend(mitigations(a, b));
    out.extend(differ("disks", disks(a), disks(b)));
    out.extend(differ(
        "noise warnings",
        only(&a.warnings, &b.warnings),
        only(&b.warnings, &a.warnings),
    ));
    out
}

/// The run settings that differ (version, kind, profile, pinning, clock, TSC rate).
pub fn run_differences(a: &RunRecord, b: &RunRecord) -> Vec<Difference> {
    let fields: [RunField; 6] = [
        ("sysmeter version", |r| r.tool_version.clone()),
        ("run kind", |r| r.kind.as_str().to_string()),
        ("profile", |r| r.config.profile.clone()),
        ("pinned CPU", |r| opt(r.config.cpu)),
        ("clock", |r| {
            opt(r.config.calibration.as_ref().map(|c| c.clock.clone()))
        }),
        ("TSC rate", |r| {
            // Rounded to MHz: the measured rate wobbles in the last digits on one machine.
            let ghz = r.config.calibration.as_ref().and_then(|c| c.tsc_ghz);
            opt(ghz.map(|g| format!("{:.3} GHz", g)))
        }),
    ];
    let mut out: Vec<Difference> = fields
        .iter()
        .filter_map(|(field, get)| differ(field, get(a), get(b)))
        .collect();
    out.extend(differ(
        "interrupted",
        a.interrupted.to_string(),
        b.interrupted.to_string(),
    ));
    out
}

fn differ(field: &str, a: String, b: String) -> Option<Difference> {
    (a != b).then(|| Difference {
        field: field.to_string(),
        a,
        b,
    })
}

fn opt(v: Option<impl ToString>) -> String {
    v.map_or_else(|| format::NONE.to_string(), |v| v.to_string())
}

fn mhz(v: Option<f64>) -> String {
    opt(v.map(|m| format!("{m:.0} MHz")))
}

fn topology(h: &HostInfo) -> String {
    let c = &h.cpu;
    format!(
        "{} socket(s), {} core(s), {} thread(s), {} usable",
        c.sockets, c.cores, c.threads, c.usable_cpus
    )
}

fn cache(c: &CacheInfo) -> String {
    let kind = match c.kind.as_str() {
        "Data" => "d",
        "Instruction" => "i",
        _ => "",
    };
    let mut s = format!("L{}{kind} {}", c.level, units::bytes(c.size_bytes as f64));
    if let Some(ways) = c.ways {
        s.push_str(&format!(" {ways}-way"));
    }
    s
}

fn caches(h: &HostInfo) -> String {
    let all: Vec<String> = h.caches.iter().map(cache).collect();
    if all.is_empty() {
        format::NONE.to_string()
    } else {
        all.join(", ")
    }
}

fn memory(h: &HostInfo) -> String {
    let m = &h.memory;
    let mut s = units::bytes(m.total_bytes as f64);
    if let Some(speed) = m.speed_mts {
        s.push_str(&format!(" at {speed} MT/s"));
    }
    if m.swap_total_bytes > 0 {
        s.push_str(&format!(
            ", swap {}",
            units::bytes(m.swap_total_bytes as f64)
        ));
    }
    s
}

fn disks(h: &HostInfo) -> String {
    let all: Vec<String> = h
        .disks
        .iter()
        .map(|d| {
            let kind = match d.rotational {
                Some(true) => " rotational",
                Some(false) => " SSD",
                None => "",
            };
            format!("{} {}{kind}", d.name, units::bytes(d.size_bytes as f64))
        })
        .collect();
    all.join(", ")
}

/// Mitigations whose status differs, one difference each.
fn mitigations(a: &HostInfo, b: &HostInfo) -> Vec<Difference> {
    let mut names: Vec<&str> = a
        .vulnerabilities
        .iter()
        .chain(&b.vulnerabilities)
        .map(|(n, _)| n.as_str())
        .collect();
    names.sort_unstable();
    names.dedup();
    names
        .into_iter()
        .filter_map(|n| {
            let (sa, sb) = (mitigation_status(a, n), mitigation_status(b, n));
            differ(&format!("mitigation {n}"), sa, sb)
        })
        .collect()
}

/// The status of mitigation `name` on `h` (`—` when not listed).
fn mitigation_status(h: &HostInfo, name: &str) -> String {
    h.vulnerabilities
        .iter()
        .find(|(n, _)| n == name)
        .map_or_else(|| format::NONE.to_string(), |(_, s)| s.clone())
}

/// The entries of `x` that `y` lacks, joined; empty when there are none.
fn only(x: &[String], y: &[String]) -> String {
    let rest: Vec<&str> = x
        .iter()
        .filter(|w| !y.contains(w))
        .map(String::as_str)
        .collect();
    rest.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::fixture::sample_run;

    #[test]
    fn the_same_machine_has_no_differences() {
        let run = sample_run();
        assert!(machine_differences(&run.host, &run.host).is_empty());
        assert!(run_differences(&run, &run).is_empty());
    }

    #[test]
    fn cpu_kernel_virtualization_and_caches_are_reported() {
        let a = sample_run();
        let mut b = sample_run();
        b.host.cpu.model = "Intel Xeon".into();
        b.host.kernel = "6.9.1".into();
        b.host.virtualization = None;
        b.host.caches[1].size_bytes = 1024 * 1024;
        b.host.vulnerabilities = vec![("spectre_v2".into(), "Vulnerable".into())];
        b.host.warnings.clear();
        b.host.memory.available_bytes = 1; // volatile: never a difference
        b.config.profile = "quick".into();
        let d = machine_differences(&a.host, &b.host);
        let fields: Vec<&str> = d.iter().map(|d| d.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "CPU model",
                "caches",
                "virtualization",
                "kernel",
                "mitigation spectre_v2",
                "noise warnings"
            ]
        );
        assert_eq!(d[1].a, "L1d 32 KiB, L2 512 KiB, L3 32 MiB");
        assert_eq!(d[1].b, "L1d 32 KiB, L2 1 MiB, L3 32 MiB");
        assert_eq!((d[2].a.as_str(), d[2].b.as_str()), ("KVM", "none"));
        assert_eq!((d[4].a.as_str(), d[4].b.as_str()), ("—", "Vulnerable"));
        assert!(d[5].a.starts_with("virtualized (KVM)") && d[5].b.is_empty());
        let r = run_differences(&a, &b);
        assert_eq!(r.len(), 1);
        assert_eq!((r[0].a.as_str(), r[0].b.as_str()), ("default", "quick"));
    }
}
