//! Which numbers a report can show: the one range every chart axis, tick and label is
//! computed within, and the values of a record that lie outside it (found once, for the
//! page that says it left them out and for `import`, which refuses them). The bounds leave
//! room above and below: an axis rounds its ends out to the next power of ten or of two,
//! and a tick count is a ratio of the ends, so both stay finite and small whatever the data.
//!
//! Depends on serde_json only.

/// The largest magnitude a report shows; beyond it a value is left out of every axis.
pub const SHOWN_MAX: f64 = 1e300;

/// The smallest magnitude but zero a report shows; below it (subnormals) a value is left
/// out of every axis.
pub const SHOWN_MIN: f64 = 1e-300;

/// Whether `v` is a number a chart can place: zero, or finite with a magnitude between
/// [`SHOWN_MIN`] and [`SHOWN_MAX`].
pub fn showable(v: f64) -> bool {
    v == 0.0 || (SHOWN_MIN..=SHOWN_MAX).contains(&v.abs())
}

/// How many [`unshowable_values`] names at most.
const NAMED: usize = 3;

/// The numbers of `doc` (a record as JSON) a report cannot show: how many, and the first
/// few as `path = value` (`results[0].metrics[1].summary.max = 1.7e308`). Integers are
/// counts and times and always show; NaN and infinities cannot be in JSON at all.
pub fn unshowable_values(doc: &serde_json::Value) -> (usize, Vec<String>) {
    let (mut count, mut named) = (0, Vec::new());
    let mut stack = vec![(String::new(), doc)];
    while let Some((path, v)) = stack.pop() {
        match v {
            serde_json::Value::Number(n) if n.is_f64() => {
                let x = n.as_f64().unwrap_or(f64::NAN);
                if !showable(x) {
                    count += 1;
                    if named.len() < NAMED {
                        named.push(format!("{path} = {x:e}"));
                    }
                }
            }
            serde_json::Value::Array(items) => stack.extend(
                (items.iter().enumerate().rev()).map(|(i, item)| (format!("{path}[{i}]"), item)),
            ),
            serde_json::Value::Object(fields) => {
                let dot = if path.is_empty() { "" } else { "." };
                stack.extend(
                    fields
                        .iter()
                        .rev()
                        .map(|(k, f)| (format!("{path}{dot}{k}"), f)),
                )
            }
            _ => {}
        }
    }
    (count, named)
}

/// One sentence on the values [`unshowable_values`] found, `None` when there are none.
pub fn unshowable_sentence(doc: &serde_json::Value) -> Option<String> {
    let (count, named) = unshowable_values(doc);
    (count > 0).then(|| {
        format!(
            "{count} value(s) lie beyond what a chart can show (a magnitude above {SHOWN_MAX:e} \
             or, not zero, below {SHOWN_MIN:e}): {}{}",
            named.join(", "),
            if count > named.len() { ", …" } else { "" }
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_range_holds_ordinary_numbers_and_leaves_out_the_extremes() {
        for v in [0.0, -0.0, 1.0, -3.5e9, 1e-299, 1e300, 12.5] {
            assert!(showable(v), "{v}");
        }
        for v in [
            f64::MAX,
            -f64::MAX,
            1.7e308,
            5e-324,
            1e-310,
            f64::NAN,
            f64::INFINITY,
        ] {
            assert!(!showable(v), "{v}");
        }
    }

    #[test]
    fn the_values_beyond_are_counted_and_named_by_path() {
        let doc = serde_json::json!({"results": [{"metrics": [
            {"summary": {"median": 10.5, "max": 1.7e308, "n": 18446744073709551615u64}},
            {"summary": {"median": 5e-324, "max": 2.5}}
        ]}]});
        let (count, named) = unshowable_values(&doc);
        assert_eq!(count, 2);
        assert_eq!(named[0], "results[0].metrics[0].summary.max = 1.7e308");
        assert!(named[1].starts_with("results[0].metrics[1].summary.median = 5e-324"));
        let said = unshowable_sentence(&doc).expect("a sentence");
        assert!(said.starts_with("2 value(s) lie beyond"), "{said}");
        assert_eq!(
            unshowable_sentence(&serde_json::json!({"a": [1.5, 0.0]})),
            None
        );
    }
}
