//! Parser of `/proc/cpuinfo`, in the x86_64 shape (`model name`, `flags`, `physical id`,
//! `core id`) and the aarch64 shape (`Features`, `CPU implementer`, `CPU part`, no model
//! name).
//!
//! Pure: text in, [`CpuInfo`] out. No file access; depends only on the host data types.

use crate::model::CpuInfo;
use std::collections::BTreeSet;

/// Flags worth recording: the TSC ones decide whether TSC ticks can stand in for time,
/// `hypervisor` says we are virtualised, the vector ones explain bandwidth results, and the
/// aarch64 ones (`evtstrm`, `atomics`, `sve`) play the same roles there.
const FLAGS_OF_INTEREST: &[&str] = &[
    "constant_tsc",
    "nonstop_tsc",
    "rdtscp",
    "tsc_known_freq",
    "hypervisor",
    "sse2",
    "avx2",
    "avx512f",
    "ht",
    "asimd",
    "atomics",
    "sve",
    "sve2",
    "evtstrm",
];

/// One `processor` block as key → value pairs, in file order.
type Block<'a> = Vec<(&'a str, &'a str)>;

/// Parses the text of /proc/cpuinfo.
///
/// `threads` counts `processor` blocks; `sockets` counts distinct `physical id`s and
/// `cores` distinct (`physical id`, `core id`) pairs, falling back to `cpu cores` × sockets
/// and then to one core per thread (aarch64 reports neither; the reader refines the
/// topology from sysfs). `usable_cpus` is left 0: cpuinfo does not know the affinity mask.
/// Frequencies other than x86's `cpu MHz` and the `@ 3.60GHz` in Intel model names are
/// not in cpuinfo; sysfs cpufreq fills them. Empty or malformed text gives defaults.
pub fn parse_cpuinfo(text: &str) -> CpuInfo {
    let blocks: Vec<Block<'_>> = split_blocks(text)
        .into_iter()
        .filter(|b| get(b, "processor").is_some_and(|v| v.parse::<u32>().is_ok()))
        .collect();
    let Some(first) = blocks.first() else {
        return CpuInfo::default();
    };
    let threads = u32::try_from(blocks.len()).unwrap_or(u32::MAX);
    let (sockets, cores) = topology(&blocks, threads);
    let model = get(first, "model name")
        .map(str::to_string)
        .unwrap_or_else(|| arm_model_name(first));
    let vendor = get(first, "vendor_id")
        .map(str::to_string)
        .or_else(|| get(first, "CPU implementer").map(|i| arm_implementer(i).to_string()))
        .unwrap_or_default();
    let flag_text = get(first, "flags")
        .or_else(|| get(first, "Features"))
        .unwrap_or("");
    let present: BTreeSet<&str> = flag_text.split_whitespace().collect();
    let flags = FLAGS_OF_INTEREST
        .iter()
        .filter(|f| present.contains(*f))
        .map(|f| f.to_string())
        .collect();
    CpuInfo {
        base_mhz: base_mhz_from_model(&model),
        current_mhz: get(first, "cpu MHz").and_then(|v| v.parse::<f64>().ok()),
        model,
        vendor,
        sockets,
        cores,
        threads,
        flags,
        ..CpuInfo::default()
    }
}

/// Splits cpuinfo into blank-line separated blocks of `key : value` lines. Keys are
/// trimmed because the kernel pads them with tabs (and aarch64 writes
/// `CPU architecture: 8` with no padding at all).
fn split_blocks(text: &str) -> Vec<Block<'_>> {
    let mut blocks = Vec::new();
    let mut current = Vec::new();
    for line in text.lines() {
        if line.trim().is_empty() {
            if !current.is_empty() {
                blocks.push(std::mem::take(&mut current));
            }
        } else if let Some((k, v)) = line.split_once(':') {
            current.push((k.trim(), v.trim()));
        }
    }
    if !current.is_empty() {
        blocks.push(current);
    }
    blocks
}

fn get<'a>(block: &Block<'a>, key: &str) -> Option<&'a str> {
    block.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
}

/// (sockets, cores) from the ids in the blocks, with fallbacks when ids are absent.
fn topology(blocks: &[Block<'_>], threads: u32) -> (u32, u32) {
    let mut packages = BTreeSet::new();
    let mut cores = BTreeSet::new();
    for b in blocks {
        let pkg = get(b, "physical id");
        if let Some(p) = pkg {
            packages.insert(p);
        }
        if let Some(c) = get(b, "core id") {
            cores.insert((pkg.unwrap_or("0"), c));
        }
    }
    let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    let sockets = if packages.is_empty() {
        1
    } else {
        count(packages.len())
    };
    let per_socket = blocks
        .first()
        .and_then(|b| get(b, "cpu cores"))
        .and_then(|v| v.parse::<u32>().ok());
    let cores = match (cores.len(), per_socket) {
        (0, Some(n)) => n.saturating_mul(sockets),
        (0, None) => threads,
        (n, _) => count(n),
    };
    (sockets, cores)
}

/// Nominal frequency from an Intel-style model name (`... CPU @ 3.60GHz`).
fn base_mhz_from_model(model: &str) -> Option<f64> {
    let (_, tail) = model.rsplit_once('@')?;
    let tail = tail.trim();
    let (num, scale) = if let Some(n) = tail.strip_suffix("GHz") {
        (n, 1000.0)
    } else {
        (tail.strip_suffix("MHz")?, 1.0)
    };
    num.trim().parse::<f64>().ok().map(|v| v * scale)
}

/// Vendor name of an aarch64 `CPU implementer` code (MIDR_EL1.Implementer).
fn arm_implementer(code: &str) -> &'static str {
    match code.to_ascii_lowercase().as_str() {
        "0x41" => "ARM",
        "0x42" => "Broadcom",
        "0x43" => "Cavium",
        "0x46" => "Fujitsu",
        "0x48" => "HiSilicon",
        "0x4e" => "NVIDIA",
        "0x50" => "APM",
        "0x51" => "Qualcomm",
        "0x53" => "Samsung",
        "0x61" => "Apple",
        "0x69" => "Intel",
        "0xc0" => "Ampere",
        _ => "unknown implementer",
    }
}

/// Core names of common Arm Ltd. parts, so a Graviton reads as a Neoverse, not a hex code.
fn arm_part_name(part: &str) -> Option<&'static str> {
    Some(match part.to_ascii_lowercase().as_str() {
        "0xd03" => "Cortex-A53",
        "0xd05" => "Cortex-A55",
        "0xd07" => "Cortex-A57",
        "0xd08" => "Cortex-A72",
        "0xd0b" => "Cortex-A76",
        "0xd0c" => "Neoverse-N1",
        "0xd40" => "Neoverse-V1",
        "0xd41" => "Cortex-A78",
        "0xd44" => "Cortex-X1",
        "0xd49" => "Neoverse-N2",
        "0xd4f" => "Neoverse-V2",
        _ => return None,
    })
}

/// aarch64 has no `model name`: describe the core by implementer and part.
fn arm_model_name(block: &Block<'_>) -> String {
    let (Some(imp), Some(part)) = (get(block, "CPU implementer"), get(block, "CPU part")) else {
        return String::new();
    };
    let vendor = arm_implementer(imp);
    match (imp.eq_ignore_ascii_case("0x41"), arm_part_name(part)) {
        (true, Some(name)) => format!("{vendor} {name} (implementer {imp} part {part})"),
        _ => format!("{vendor} implementer {imp} part {part}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KVM: &str = include_str!("../../tests/fixtures/host/x86_64-kvm/cpuinfo");
    const METAL: &str = include_str!("../../tests/fixtures/host/x86_64-metal/cpuinfo");
    const ARM: &str = include_str!("../../tests/fixtures/host/aarch64/cpuinfo");

    /// What a parse says the CPU is: model, vendor, and (sockets, cores, threads).
    fn identity(c: &CpuInfo) -> (&str, &str, (u32, u32, u32)) {
        (&c.model, &c.vendor, (c.sockets, c.cores, c.threads))
    }

    #[test]
    fn this_kvm_guest() {
        let c = parse_cpuinfo(KVM);
        assert_eq!(identity(&c), ("AMD EPYC", "AuthenticAMD", (1, 2, 2)));
        assert_eq!(c.current_mhz, Some(2445.404));
        assert_eq!(c.base_mhz, None);
        // The flags of interest this guest has, in the table's order.
        let want = "constant_tsc nonstop_tsc rdtscp tsc_known_freq hypervisor sse2 avx2 ht";
        assert_eq!(c.flags.join(" "), want);
        assert_eq!(c.usable_cpus, 0);
    }

    #[test]
    fn bare_metal_smt() {
        let c = parse_cpuinfo(METAL);
        assert_eq!(
            identity(&c),
            (
                "Intel(R) Core(TM) i7-7700 CPU @ 3.60GHz",
                "GenuineIntel",
                (1, 4, 8)
            )
        );
        assert_eq!(c.base_mhz, Some(3600.0));
        assert_eq!(c.current_mhz, Some(3600.012));
        assert!(!c.flags.iter().any(|f| f == "hypervisor"));
        assert!(c.flags.iter().any(|f| f == "avx2"));
    }

    #[test]
    fn aarch64_graviton_like() {
        let c = parse_cpuinfo(ARM);
        assert_eq!(
            identity(&c),
            (
                "ARM Neoverse-N1 (implementer 0x41 part 0xd0c)",
                "ARM",
                (1, 4, 4)
            )
        );
        assert_eq!(c.current_mhz, None);
        assert_eq!(c.flags, ["asimd", "atomics", "evtstrm"]);
    }

    #[test]
    fn aarch64_unknown_part_and_apple() {
        let text = "processor\t: 0\nCPU implementer\t: 0x61\nCPU part\t: 0x022\n";
        let c = parse_cpuinfo(text);
        assert_eq!(c.vendor, "Apple");
        assert_eq!(c.model, "Apple implementer 0x61 part 0x022");
        assert_eq!(c.threads, 1);
    }

    #[test]
    fn cpu_cores_fallback() {
        let text =
            "processor : 0\nphysical id : 0\ncpu cores : 8\n\nprocessor : 1\nphysical id : 1\n";
        let c = parse_cpuinfo(text);
        assert_eq!((c.sockets, c.cores, c.threads), (2, 16, 2));
    }

    #[test]
    fn empty_and_garbage_give_defaults() {
        assert_eq!(parse_cpuinfo(""), CpuInfo::default());
        assert_eq!(parse_cpuinfo("no colon here\n\n:::\n"), CpuInfo::default());
        let c = parse_cpuinfo("processor : x\nmodel name : y\n");
        assert_eq!(c, CpuInfo::default());
        let c = parse_cpuinfo("processor : 0\ncpu MHz : fast\nmodel name : Foo @ GHz\n");
        assert_eq!((c.threads, c.current_mhz, c.base_mhz), (1, None, None));
    }
}
