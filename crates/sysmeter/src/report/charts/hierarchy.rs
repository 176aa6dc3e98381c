//! Annotations of a latency-by-working-set chart: the cache levels `mem.latency` detected
//! (findings `hierarchy.<L>.size_bytes` and `hierarchy.<L>.latency_ns`) as a vertical line
//! where each level ends and a dashed plateau at its latency, plus the sizes the kernel
//! reports in sysfs as grey dotted lines, so a disagreement is visible at a glance.
//!
//! Pure; reads only the findings and the host's cache list.

use super::xy::{Level, Marker};
use crate::model::CacheInfo;
use crate::model::Finding;
use crate::model::units;

/// One detected level.
#[derive(Debug, Clone, PartialEq, Default)]
struct Detected {
    name: String,
    size_bytes: Option<f64>,
    latency_ns: Option<f64>,
}

/// The detected levels in the order their findings appear.
fn detected(findings: &[Finding]) -> Vec<Detected> {
    let mut levels: Vec<Detected> = Vec::new();
    for f in findings {
        let Some(rest) = f.key.strip_prefix("hierarchy.") else {
            continue;
        };
        let Some((name, field)) = rest.split_once('.') else {
            continue;
        };
        let Some(value) = f.value.filter(|v| v.is_finite() && *v > 0.0) else {
            continue;
        };
        if field != "size_bytes" && field != "latency_ns" {
            continue;
        }
        let index = match levels.iter().position(|l| l.name == name) {
            Some(i) => i,
            None => {
                levels.push(Detected {
                    name: name.to_string(),
                    ..Detected::default()
                });
                levels.len() - 1
            }
        };
        if field == "size_bytes" {
            levels[index].size_bytes = Some(value);
        } else {
            levels[index].latency_ns = Some(value);
        }
    }
    levels
}

/// Whether the findings hold any detected level (then latency charts get annotated).
pub fn has_levels(findings: &[Finding]) -> bool {
    !detected(findings).is_empty()
}

/// Markers and plateaus for the detected levels and the sysfs data/unified caches.
pub fn annotations(findings: &[Finding], caches: &[CacheInfo]) -> (Vec<Marker>, Vec<Level>) {
    let mut markers = Vec::new();
    let mut levels = Vec::new();
    let mut previous_end = None;
    for d in detected(findings) {
        if let Some(size) = d.size_bytes {
            markers.push(Marker {
                x: size,
                label: format!("{} ends {}", d.name, units::bytes(size)),
                detected: true,
            });
        }
        if let Some(latency) = d.latency_ns {
            levels.push(Level {
                y: latency,
                from: previous_end,
                to: d.size_bytes,
                label: Some(format!("{} {}", d.name, units::duration_ns(latency))),
            });
        }
        previous_end = d.size_bytes.or(previous_end);
    }
    for c in caches.iter().filter(|c| c.kind != "Instruction") {
        let name = if c.kind == "Data" {
            format!("L{}d", c.level)
        } else {
            format!("L{}", c.level)
        };
        markers.push(Marker {
            x: c.size_bytes as f64,
            label: format!("sysfs {name} {}", units::bytes(c.size_bytes as f64)),
            detected: false,
        });
    }
    (markers, levels)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(key: &str, value: Option<f64>) -> Finding {
        Finding {
            key: key.into(),
            text: String::new(),
            value,
        }
    }

    #[test]
    fn levels_become_markers_and_plateaus_in_order() {
        let findings = [
            finding("hierarchy.L1.latency_ns", Some(1.3)),
            finding("hierarchy.L1.size_bytes", Some(32768.0)),
            finding("hierarchy.L2.latency_ns", Some(4.0)),
            finding("hierarchy.L2.size_bytes", Some(458_752.0)),
            finding("hierarchy.L3.disagreement", Some(0.05)),
            finding("hierarchy.table", None),
            finding("hierarchy.DRAM.latency_ns", Some(108.0)),
            finding("tlb.miss_cost_ns", Some(100.0)),
        ];
        let caches = [
            CacheInfo {
                level: 1,
                kind: "Data".into(),
                size_bytes: 32768,
                ..CacheInfo::default()
            },
            CacheInfo {
                level: 1,
                kind: "Instruction".into(),
                size_bytes: 32768,
                ..CacheInfo::default()
            },
        ];
        assert!(has_levels(&findings));
        let (markers, levels) = annotations(&findings, &caches);
        let labels: Vec<&str> = markers.iter().map(|m| m.label.as_str()).collect();
        assert_eq!(
            labels,
            ["L1 ends 32 KiB", "L2 ends 448 KiB", "sysfs L1d 32 KiB"]
        );
        assert_eq!(levels.len(), 3);
        assert_eq!((levels[0].from, levels[0].to), (None, Some(32768.0)));
        assert_eq!(
            (levels[1].from, levels[1].to),
            (Some(32768.0), Some(458_752.0))
        );
        assert_eq!((levels[2].from, levels[2].to), (Some(458_752.0), None));
        assert_eq!(levels[2].label.as_deref(), Some("DRAM 108 ns"));
    }

    #[test]
    fn other_findings_give_nothing() {
        let findings = [finding("hierarchy.L1.latency_ns", None)];
        assert!(!has_levels(&findings));
        assert_eq!(annotations(&findings, &[]), (vec![], vec![]));
    }
}
