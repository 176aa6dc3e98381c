//! The operating system's name (os-release) and the hypervisor we run under, decided from
//! the evidence the reader gathers (cpuinfo flag, /sys/hypervisor, DMI, clocksources).
//!
//! Pure: text and strings in, names out. No file access; depends on nothing.

/// PRETTY_NAME from os-release text, unquoted; falls back to `NAME VERSION`, `None` when
/// neither is there.
pub fn parse_os_release(text: &str) -> Option<String> {
    let field = |key: &str| {
        text.lines().find_map(|line| {
            let (k, v) = line.split_once('=')?;
            (k.trim() == key)
                .then(|| unquote(v.trim()))
                .filter(|v| !v.is_empty())
        })
    };
    field("PRETTY_NAME").or_else(|| match (field("NAME"), field("VERSION")) {
        (Some(n), Some(v)) => Some(format!("{n} {v}")),
        (n, _) => n,
    })
}

/// Removes shell-style quotes and the escapes os-release allows inside double quotes.
fn unquote(v: &str) -> String {
    let inner = v
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .or_else(|| v.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')));
    match inner {
        Some(s) => s
            .replace("\\\"", "\"")
            .replace("\\\\", "\\")
            .replace("\\$", "$"),
        None => v.to_string(),
    }
}

/// What the reader found that could reveal a hypervisor. All optional: a container may
/// hide /sys/class/dmi, aarch64 has no `hypervisor` cpuinfo flag, Firecracker has no DMI.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct VirtEvidence {
    /// cpuinfo has the `hypervisor` flag (CPUID leaf 1, ECX bit 31).
    pub hypervisor_flag: bool,
    /// /sys/hypervisor/type (`xen`).
    pub hypervisor_type: Option<String>,
    /// /sys/class/dmi/id/sys_vendor.
    pub sys_vendor: Option<String>,
    /// /sys/class/dmi/id/product_name.
    pub product_name: Option<String>,
    /// /sys/devices/system/clocksource/clocksource0/available_clocksource.
    pub clocksources: Option<String>,
}

/// Hypervisor vendor (`KVM`, `Xen`, `VMware`, `Hyper-V`, ...), or `None` on bare metal.
///
/// DMI names that only hypervisors use count on their own (aarch64 guests have no CPU
/// flag); paravirtual clocksources only exist in guests, so `kvm-clock` means KVM even
/// without DMI (Firecracker). With the flag and nothing else: `unknown hypervisor`.
pub fn detect_virtualization(e: &VirtEvidence) -> Option<String> {
    if let Some(t) = e.hypervisor_type.as_deref().map(str::trim)
        && !t.is_empty()
    {
        return Some(if t.eq_ignore_ascii_case("xen") {
            "Xen".into()
        } else {
            t.into()
        });
    }
    let clocks = e.clocksources.as_deref().unwrap_or("");
    let has_clock = |name: &str| clocks.split_whitespace().any(|c| c == name);
    let kvm_clock = has_clock("kvm-clock");
    if let Some(name) = dmi_vendor(e, kvm_clock) {
        return Some(name);
    }
    if kvm_clock {
        return Some("KVM".into());
    }
    if has_clock("xen") {
        return Some("Xen".into());
    }
    if has_clock("hyperv_clocksource_tsc_page") {
        return Some("Hyper-V".into());
    }
    e.hypervisor_flag.then(|| "unknown hypervisor".into())
}

/// Hypervisor named by DMI strings, if they name one.
fn dmi_vendor(e: &VirtEvidence, kvm_clock: bool) -> Option<String> {
    let vendor = e.sys_vendor.as_deref().unwrap_or("").trim();
    let product = e.product_name.as_deref().unwrap_or("").trim();
    let either = |needle: &str| {
        let n = needle.to_ascii_lowercase();
        vendor.to_ascii_lowercase().contains(&n) || product.to_ascii_lowercase().contains(&n)
    };
    let name = if either("kvm") {
        "KVM"
    } else if either("qemu") {
        // QEMU with KVM acceleration exposes kvm-clock and the CPU flag; plain TCG
        // emulation is a different (much slower) beast worth naming separately.
        if kvm_clock || e.hypervisor_flag {
            "KVM"
        } else {
            "QEMU"
        }
    } else if either("vmware") {
        "VMware"
    } else if either("virtualbox") || vendor.eq_ignore_ascii_case("innotek GmbH") {
        "VirtualBox"
    } else if vendor.starts_with("Microsoft") && product.contains("Virtual") {
        "Hyper-V"
    } else if either("xen") {
        "Xen"
    } else if either("bhyve") {
        "bhyve"
    } else if either("parallels") {
        "Parallels"
    } else if vendor == "Amazon EC2" && (e.hypervisor_flag || !product.contains("metal")) {
        "KVM (Amazon EC2 Nitro)"
    } else if vendor == "Google" && product.contains("Compute Engine") {
        "KVM (Google Compute Engine)"
    } else {
        return None;
    };
    Some(name.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(flag: bool, vendor: &str, product: &str, clocks: &str) -> VirtEvidence {
        let some = |s: &str| (!s.is_empty()).then(|| s.to_string());
        VirtEvidence {
            hypervisor_flag: flag,
            hypervisor_type: None,
            sys_vendor: some(vendor),
            product_name: some(product),
            clocksources: some(clocks),
        }
    }

    #[test]
    fn os_release() {
        let kvm = include_str!("../../tests/fixtures/host/x86_64-kvm/os-release");
        assert_eq!(
            parse_os_release(kvm).as_deref(),
            Some("Debian GNU/Linux 12 (bookworm)")
        );
        let metal = include_str!("../../tests/fixtures/host/x86_64-metal/os-release");
        assert_eq!(
            parse_os_release(metal).as_deref(),
            Some("Ubuntu 24.04.1 LTS")
        );
        assert_eq!(
            parse_os_release("NAME=Alpine\nVERSION='3.20'\n").as_deref(),
            Some("Alpine 3.20")
        );
        assert_eq!(
            parse_os_release("PRETTY_NAME=\"a \\\"b\\\"\"").as_deref(),
            Some("a \"b\"")
        );
        assert_eq!(
            parse_os_release("PRETTY_NAME=\"\"\nNAME=X").as_deref(),
            Some("X")
        );
        assert_eq!(parse_os_release(""), None);
        assert_eq!(parse_os_release("garbage\n==\n"), None);
    }

    #[test]
    fn this_machine_is_kvm_by_clocksource() {
        let clocks = include_str!("../../tests/fixtures/host/x86_64-kvm/available_clocksource");
        assert_eq!(
            detect_virtualization(&ev(true, "", "", clocks)).as_deref(),
            Some("KVM")
        );
    }

    #[test]
    fn bare_metal_is_none() {
        let clocks = include_str!("../../tests/fixtures/host/x86_64-metal/available_clocksource");
        let vendor = include_str!("../../tests/fixtures/host/x86_64-metal/dmi/sys_vendor");
        let product = include_str!("../../tests/fixtures/host/x86_64-metal/dmi/product_name");
        assert_eq!(
            detect_virtualization(&ev(false, vendor, product, clocks)),
            None
        );
        assert_eq!(detect_virtualization(&VirtEvidence::default()), None);
    }

    #[test]
    fn dmi_names() {
        let cases = [
            (
                (true, "QEMU", "Standard PC (Q35 + ICH9, 2009)", ""),
                Some("KVM"),
            ),
            ((false, "QEMU", "Standard PC", "tsc"), Some("QEMU")),
            ((false, "Red Hat", "KVM", ""), Some("KVM")),
            ((true, "VMware, Inc.", "VMware7,1", ""), Some("VMware")),
            ((true, "innotek GmbH", "VirtualBox", ""), Some("VirtualBox")),
            (
                (true, "Microsoft Corporation", "Virtual Machine", ""),
                Some("Hyper-V"),
            ),
            (
                (false, "Amazon EC2", "c7g.large", "arch_sys_counter"),
                Some("KVM (Amazon EC2 Nitro)"),
            ),
            ((false, "Amazon EC2", "c7g.metal", ""), None),
        ];
        for ((f, v, p, c), want) in cases {
            let name = detect_virtualization(&ev(f, v, p, c));
            assert_eq!(name.as_deref(), want, "{v} {p}");
        }
    }

    #[test]
    fn other_evidence() {
        let mut e = ev(true, "", "", "");
        assert_eq!(
            detect_virtualization(&e).as_deref(),
            Some("unknown hypervisor")
        );
        e.clocksources = Some("xen tsc".into());
        assert_eq!(detect_virtualization(&e).as_deref(), Some("Xen"));
        e.clocksources = Some("hyperv_clocksource_tsc_page tsc".into());
        assert_eq!(detect_virtualization(&e).as_deref(), Some("Hyper-V"));
        e.hypervisor_type = Some("xen\n".into());
        assert_eq!(detect_virtualization(&e).as_deref(), Some("Xen"));
    }
}
