//! The one escaping of text that came from outside the process (hostnames, run ids,
//! commands, metric names, notes, errors, paths, symbol names) on its way to a terminal,
//! Markdown, HTML or any output file: every character that acts instead of showing — C0
//! controls but line feed and tab, DEL, C1 controls (so no ESC, CSI or OSC sequence is
//! ever written), bidirectional overrides and isolates (U+202A–U+202E, U+2066–U+2069) and
//! the other invisible format characters (zero-width ones, line and paragraph separators,
//! the byte-order mark, the tags) — is written as its `\uXXXX` escape (UTF-16 units, so an
//! escaped JSON document stays valid JSON meaning the same text). `commands::console` and
//! `commands::outfile` pass everything they write through it, so no printer can forget.
//!
//! Depends on nothing.

use std::borrow::Cow;

/// Whether `c` acts on a terminal or on the reading order instead of showing as itself.
pub fn acts(c: char) -> bool {
    match c {
        '\n' | '\t' => false,
        _ if c.is_control() => true,
        '\u{00ad}' | '\u{061c}' | '\u{180e}' => true,
        '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2060}'..='\u{206f}' => true,
        '\u{feff}' | '\u{fff9}'..='\u{fffb}' | '\u{e0000}'..='\u{e007f}' => true,
        _ => false,
    }
}

/// `text` with every character that [`acts`] written as its `\uXXXX` escape; borrowed when
/// there is none.
pub fn visible(text: &str) -> Cow<'_, str> {
    visible_keeping(text, &[])
}

/// [`visible`], keeping the sequences `keep` as they are where they occur (a terminal's
/// own styling, which sysmeter wrote itself: `report::text::STYLES`).
pub fn visible_keeping<'a>(text: &'a str, keep: &[&str]) -> Cow<'a, str> {
    if !text.chars().any(acts) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if let Some(kept) = keep.iter().find(|k| !k.is_empty() && rest.starts_with(**k)) {
            out.push_str(kept);
            rest = &rest[kept.len()..];
            continue;
        }
        if acts(c) {
            for unit in c.encode_utf16(&mut [0; 2]) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        } else {
            out.push(c);
        }
        rest = &rest[c.len_utf8()..];
    }
    Cow::Owned(out)
}

/// The first character of `text` that [`acts`], for a refusal that names it.
pub fn first_acting(text: &str) -> Option<char> {
    text.chars().find(|c| acts(*c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_escapes_and_bidi_are_made_visible() {
        let osc = "evil\u{1b}]0;pwned\u{7}\u{1b}[2J";
        assert_eq!(visible(osc), "evil\\u001b]0;pwned\\u0007\\u001b[2J");
        assert_eq!(visible("good\u{202e}evil"), "good\\u202eevil");
        assert_eq!(visible("fine\u{9b}31m"), "fine\\u009b31m");
        assert_eq!(
            visible("a\u{2066}b\u{2069}c\u{200b}"),
            "a\\u2066b\\u2069c\\u200b"
        );
        assert_eq!(visible("tag\u{e0041}"), "tag\\udb40\\udc41");
        assert_eq!(visible("a\r\nb\u{7f}"), "a\\u000d\nb\\u007f");
    }

    #[test]
    fn plain_text_lines_and_tabs_are_untouched_and_borrowed() {
        let text = "héllo wörld\n\tµs 日本 → ✓";
        assert!(matches!(visible(text), Cow::Borrowed(t) if t == text));
    }

    #[test]
    fn escaped_json_stays_the_same_json() {
        let doc = serde_json::json!({"host": "good\u{202e}evil\u{e0041}"}).to_string();
        let back: serde_json::Value = serde_json::from_str(&visible(&doc)).expect("valid");
        assert_eq!(back["host"], "good\u{202e}evil\u{e0041}");
    }

    #[test]
    fn kept_styles_stay_and_a_forged_one_inside_text_is_escaped_otherwise() {
        let keep = ["\u{1b}[1m", "\u{1b}[0m"];
        let text = "\u{1b}[1mtitle\u{1b}[0m host \u{1b}]0;x\u{7}";
        assert_eq!(
            visible_keeping(text, &keep),
            "\u{1b}[1mtitle\u{1b}[0m host \\u001b]0;x\\u0007"
        );
    }
}
