//! Text rendering of the machine description for `sysmeter host`: aligned `key  value`
//! lines grouped CPU / caches / memory / disks / network / OS / virtualization / cgroup /
//! mitigations / perf / THP / capabilities / warnings.
//!
//! Pure: a [`HostInfo`] in, a string out; never reads the system. Depends only on `host`
//! (its types and `units::size`).

use crate::model::units;
use crate::model::{CacheInfo, HostInfo};

/// Keys longer than this do not widen the key column for everyone else.
const MAX_KEY_WIDTH: usize = 26;

/// A titled group of (key, value) rows.
struct Section {
    title: &'static str,
    rows: Vec<(String, String)>,
}

fn section(title: &'static str, rows: Vec<(String, String)>) -> Section {
    Section { title, rows }
}

fn row(key: impl Into<String>, value: impl Into<String>) -> (String, String) {
    (key.into(), value.into())
}

/// The description as titled groups of (key, value) rows in display order, warnings not
/// included, for renderers that lay the rows out themselves (the HTML report). A row with an
/// empty key is a note.
pub fn host_sections(h: &HostInfo) -> Vec<(&'static str, Vec<(String, String)>)> {
    sections(h).into_iter().map(|s| (s.title, s.rows)).collect()
}

/// Renders `h` as the human-readable machine description (ends with a newline).
pub fn render_host_text(h: &HostInfo) -> String {
    let sections = sections(h);
    let width = key_width(&sections);
    let mut out = String::new();
    for s in &sections {
        write_section(&mut out, s, width);
    }
    out.push_str("Warnings\n");
    if h.warnings.is_empty() {
        out.push_str("  none\n");
    }
    for w in &h.warnings {
        out.push_str(&format!("  - {w}\n"));
    }
    out
}

fn sections(h: &HostInfo) -> [Section; 12] {
    [
        cpu(h),
        caches(&h.caches),
        memory(h),
        disks(h),
        network(h),
        os(h),
        section("Virtualization", vec![row("hypervisor", virt(h))]),
        cgroup(h),
        mitigations(h),
        section(
            "Perf",
            vec![row("perf_event_paranoid", paranoid(h.perf_event_paranoid))],
        ),
        section(
            "THP",
            vec![row(
                "mode",
                h.thp.clone().unwrap_or_else(|| "unknown".into()),
            )],
        ),
        capabilities(h),
    ]
}

/// One key column for the whole page, so values line up across sections.
fn key_width(sections: &[Section]) -> usize {
    sections
        .iter()
        .flat_map(|s| s.rows.iter())
        .map(|(k, _)| k.chars().count())
        .filter(|w| *w <= MAX_KEY_WIDTH)
        .max()
        .unwrap_or(0)
}

/// Title, then `  key  value` rows (a row without a key is a note), then a blank line.
fn write_section(out: &mut String, s: &Section, width: usize) {
    out.push_str(s.title);
    out.push('\n');
    for (k, v) in &s.rows {
        let line = if k.is_empty() {
            format!("  {v}")
        } else {
            let pad = " ".repeat(width.saturating_sub(k.chars().count()));
            format!("  {k}{pad}  {v}")
        };
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out.push('\n');
}

fn mhz(v: Option<f64>) -> String {
    v.map_or_else(|| "unknown".to_string(), |m| format!("{m:.0} MHz"))
}

fn plural(n: u32, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

fn cpu(h: &HostInfo) -> Section {
    let c = &h.cpu;
    let topology = format!(
        "{}, {}, {} ({} usable)",
        plural(c.sockets, "socket"),
        plural(c.cores, "core"),
        plural(c.threads, "thread"),
        c.usable_cpus
    );
    let frequency = format!(
        "base {}, current {}, max {}",
        mhz(c.base_mhz),
        mhz(c.current_mhz),
        mhz(c.max_mhz)
    );
    let boost = match c.boost {
        Some(true) => "on",
        Some(false) => "off",
        None => "unknown",
    };
    let governor = c
        .governor
        .clone()
        .unwrap_or_else(|| "none (no cpufreq)".into());
    let flags = if c.flags.is_empty() {
        "none of interest".into()
    } else {
        c.flags.join(" ")
    };
    section(
        "CPU",
        vec![
            row("model", or_unknown(&c.model)),
            row("vendor", or_unknown(&c.vendor)),
            row("topology", topology),
            row("frequency", frequency),
            row("governor", governor),
            row("boost", boost),
            row("flags", flags),
        ],
    )
}

fn or_unknown(s: &str) -> String {
    if s.is_empty() {
        "unknown".into()
    } else {
        s.to_string()
    }
}

/// `L1d`, `L1i`, `L2`, ... as caches are usually named.
fn cache_name(c: &CacheInfo) -> String {
    match c.kind.as_str() {
        "Data" => format!("L{}d", c.level),
        "Instruction" => format!("L{}i", c.level),
        _ => format!("L{}", c.level),
    }
}

fn caches(list: &[CacheInfo]) -> Section {
    let mut rows: Vec<(String, String)> = list
        .iter()
        .map(|c| {
            let mut parts = vec![units::size(c.size_bytes)];
            parts.extend(c.ways.map(|w| format!("{w}-way")));
            parts.extend(c.line_bytes.map(|l| format!("{l} B lines")));
            if !c.shared_cpus.is_empty() {
                parts.push(format!("shared by CPUs {}", c.shared_cpus));
            }
            row(cache_name(c), parts.join(", "))
        })
        .collect();
    if rows.is_empty() {
        rows.push(row("", "unknown (no sysfs cache information)"));
    }
    section("Caches", rows)
}

fn memory(h: &HostInfo) -> Section {
    let m = &h.memory;
    let swap = if m.swap_total_bytes == 0 {
        "none".to_string()
    } else {
        format!(
            "{}, {} used",
            units::size(m.swap_total_bytes),
            units::size(m.swap_used_bytes)
        )
    };
    let speed = m.speed_mts.map_or_else(
        || "unknown (needs root and DMI tables)".to_string(),
        |s| format!("{s} MT/s"),
    );
    section(
        "Memory",
        vec![
            row("total", units::size(m.total_bytes)),
            row("available", units::size(m.available_bytes)),
            row("swap", swap),
            row("speed", speed),
        ],
    )
}

fn disks(h: &HostInfo) -> Section {
    let mut rows: Vec<(String, String)> = h
        .disks
        .iter()
        .map(|d| {
            let kind = match d.rotational {
                Some(true) => "rotational",
                Some(false) => "non-rotational",
                None => "rotational flag unknown",
            };
            let model = d.model.as_deref().unwrap_or("model unknown");
            row(
                d.name.clone(),
                format!("{}, {kind}, {model}", units::size(d.size_bytes)),
            )
        })
        .collect();
    if rows.is_empty() {
        rows.push(row("", "none found"));
    }
    section("Disks", rows)
}

fn network(h: &HostInfo) -> Section {
    let mut rows: Vec<(String, String)> = h
        .nics
        .iter()
        .map(|n| {
            let speed = n
                .speed_mbps
                .map_or("speed unknown".into(), |s| format!("{s} Mbit/s"));
            let mtu = n.mtu.map_or("MTU unknown".into(), |m| format!("MTU {m}"));
            row(n.name.clone(), format!("{}, {speed}, {mtu}", n.state))
        })
        .collect();
    if rows.is_empty() {
        rows.push(row("", "none found"));
    }
    section("Network", rows)
}

fn os(h: &HostInfo) -> Section {
    section(
        "OS",
        vec![
            row("hostname", or_unknown(&h.hostname)),
            row("os", or_unknown(&h.os)),
            row("kernel", or_unknown(&h.kernel)),
            row("arch", or_unknown(&h.arch)),
        ],
    )
}

fn virt(h: &HostInfo) -> String {
    h.virtualization
        .clone()
        .unwrap_or_else(|| "none detected (bare metal)".into())
}

fn cgroup(h: &HostInfo) -> Section {
    let c = &h.cgroup;
    let memory = c.memory_max_bytes.map_or("unlimited".into(), units::size);
    let cpu = c
        .cpu_max
        .map_or("unlimited".into(), |q| format!("{q:.2} CPUs"));
    section(
        "cgroup",
        vec![
            row("path", c.path.clone().unwrap_or_else(|| "unknown".into())),
            row("memory limit", memory),
            row("cpu limit", cpu),
        ],
    )
}

/// Affected or mitigated issues one per row; the "Not affected" ones only counted, since
/// they cannot influence a measurement.
fn mitigations(h: &HostInfo) -> Section {
    let (fine, relevant): (Vec<_>, Vec<_>) = h
        .vulnerabilities
        .iter()
        .partition(|(_, status)| status == "Not affected");
    let mut rows: Vec<(String, String)> = relevant
        .iter()
        .map(|(name, status)| row(name.clone(), status.clone()))
        .collect();
    if !fine.is_empty() {
        rows.push(row("not affected", format!("{} others", fine.len())));
    }
    if rows.is_empty() {
        rows.push(row("", "unknown"));
    }
    section("Mitigations", rows)
}

fn paranoid(p: Option<i32>) -> String {
    match p {
        None => "unknown (kernel without perf events?)".into(),
        Some(p) if p <= -1 => format!("{p} (no restrictions)"),
        Some(0) => "0 (no raw tracepoint data for unprivileged users)".into(),
        Some(1) => "1 (own processes, user and kernel)".into(),
        Some(2) => "2 (own processes, user space only)".into(),
        Some(p) => format!("{p} (perf disabled for unprivileged users)"),
    }
}

fn capabilities(h: &HostInfo) -> Section {
    let rows = h
        .capabilities
        .iter()
        .map(|c| {
            row(
                format!("{} {}", if c.available { "✓" } else { "✗" }, c.name),
                c.detail.clone(),
            )
        })
        .collect();
    section("Capabilities", rows)
}

#[cfg(test)]
mod tests;
