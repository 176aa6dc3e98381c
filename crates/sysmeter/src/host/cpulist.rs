//! The kernel's CPU list syntax (`0-3,8,10-11`), as used by sysfs `shared_cpu_list`,
//! `/sys/devices/system/cpu/online` and `Cpus_allowed_list` in /proc/self/status.
//!
//! Pure: text in, numbers out. Depends on nothing.

/// Largest number of CPUs a list may expand to; guards against a corrupt range such as
/// `0-4294967295` allocating gigabytes.
const MAX_CPUS: usize = 1 << 16;

/// Expands a CPU list (`"0-3,8,10-11"`) into CPU numbers in the order given.
///
/// An empty or all-blank string is an empty list (sysfs writes that for "no CPUs").
/// Returns `None` when any element is malformed or the list is absurdly large.
pub fn parse_cpu_list(text: &str) -> Option<Vec<u32>> {
    let text = text.trim();
    let mut cpus = Vec::new();
    if text.is_empty() {
        return Some(cpus);
    }
    for part in text.split(',') {
        let part = part.trim();
        let (lo, hi) = match part.split_once('-') {
            Some((lo, hi)) => (
                lo.trim().parse::<u32>().ok()?,
                hi.trim().parse::<u32>().ok()?,
            ),
            None => {
                let n = part.parse::<u32>().ok()?;
                (n, n)
            }
        };
        if hi < lo || cpus.len() + (hi - lo) as usize >= MAX_CPUS {
            return None;
        }
        cpus.extend(lo..=hi);
    }
    Some(cpus)
}

/// Number of CPUs in a CPU list, `None` when malformed.
pub fn cpu_list_count(text: &str) -> Option<u32> {
    parse_cpu_list(text).and_then(|v| u32::try_from(v.len()).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_and_singles() {
        assert_eq!(
            parse_cpu_list("0-3,8,10-11"),
            Some(vec![0, 1, 2, 3, 8, 10, 11])
        );
        assert_eq!(cpu_list_count("0-3,8,10-11"), Some(7));
        assert_eq!(parse_cpu_list("0-1\n"), Some(vec![0, 1]));
        assert_eq!(parse_cpu_list("5"), Some(vec![5]));
    }

    #[test]
    fn empty_is_no_cpus() {
        assert_eq!(parse_cpu_list(""), Some(vec![]));
        assert_eq!(cpu_list_count("\n"), Some(0));
    }

    #[test]
    fn malformed_is_none() {
        assert_eq!(parse_cpu_list("a-b"), None);
        assert_eq!(parse_cpu_list("3-1"), None);
        assert_eq!(parse_cpu_list("1,,2"), None);
        assert_eq!(parse_cpu_list("0-4294967295"), None);
        assert_eq!(cpu_list_count("x"), None);
    }
}
