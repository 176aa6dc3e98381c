//! Prose fields (methodology, findings, hints) as HTML: everything escaped, and the
//! `backtick` spans the experiments use for code, commands and identifiers set as `<code>`,
//! as a reader of the terminal output would read them.
//!
//! Pure; the only place besides the charts where report HTML is built by hand, so it goes
//! through the one tested escape function.

use crate::report::charts::svg::escape;

/// `text` escaped, with each balanced pair of backticks turned into `<code>…</code>`; an
/// unpaired backtick stays a backtick.
pub fn rich(text: &str) -> String {
    let parts: Vec<&str> = text.split('`').collect();
    let mut out = String::with_capacity(text.len() + 16);
    for (i, part) in parts.iter().enumerate() {
        let inside = i % 2 == 1;
        let closed = i + 1 < parts.len();
        if inside && closed {
            out.push_str("<code>");
            out.push_str(&escape(part));
            out.push_str("</code>");
        } else {
            if inside {
                out.push('`');
            }
            out.push_str(&escape(part));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::rich;
    use crate::model::fixture::assert_cases;

    #[test]
    fn backtick_pairs_become_code_and_everything_is_escaped() {
        assert_cases(
            rich,
            &[
                ("run `iters` times", "run <code>iters</code> times"),
                (
                    "`a<b>` & `c`",
                    "<code>a&lt;b&gt;</code> &amp; <code>c</code>",
                ),
                ("odd ` tick", "odd ` tick"),
                ("`x` then `y", "<code>x</code> then `y"),
                ("<script>", "&lt;script&gt;"),
                ("", ""),
            ],
        );
    }
}
