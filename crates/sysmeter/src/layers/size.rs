//! The size rule, checked: no Rust file over [`MAX_FILE_LINES`] lines and no function over
//! [`MAX_FN_LINES`] lines, in the `src/` and `tests/` directories of both crates.
//!
//! A function is counted from the line of its `fn` keyword to the line of its closing brace
//! (signature and body; doc comments and attributes above it are not counted). The source
//! is read as text: comments, string literals (raw ones too) and character literals are
//! blanked first, so a brace inside them does not count. Test-only; depends on nothing but
//! `std`.

use std::path::Path;

/// The most lines a file may have.
pub const MAX_FILE_LINES: usize = 400;

/// The most lines a function may have, from its `fn` line to its closing brace.
pub const MAX_FN_LINES: usize = 60;

/// Generated files exempt from the rule, relative to the workspace root, with the reason.
/// None today; a generated table would go here rather than being split by hand.
pub const GENERATED: &[(&str, &str)] = &[];

/// One function in a file: its name, the line of its `fn` keyword (1-based) and its length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FnSpan {
    /// The function's name.
    pub name: String,
    /// The line of the `fn` keyword, counting from 1.
    pub line: usize,
    /// Lines from the `fn` line to the closing brace, both included.
    pub lines: usize,
}

/// `text` with comments, string literals and character literals replaced by spaces
/// (newlines kept), so that only code is left to scan for `fn` and braces.
pub fn code_only(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < c.len() {
        let skip_to = if c[i] == '/' && c.get(i + 1) == Some(&'/') {
            line_comment_end(&c, i)
        } else if c[i] == '/' && c.get(i + 1) == Some(&'*') {
            block_comment_end(&c, i)
        } else if let Some(end) = raw_string_end(&c, i) {
            end
        } else if c[i] == '"' {
            string_end(&c, i)
        } else if c[i] == '\'' {
            char_literal_end(&c, i).unwrap_or(i + 1)
        } else {
            out.push(c[i]);
            i += 1;
            continue;
        };
        for &ch in &c[i..skip_to.min(c.len())] {
            out.push(if ch == '\n' { '\n' } else { ' ' });
        }
        i = skip_to;
    }
    out
}

fn is_ident(c: Option<char>) -> bool {
    c.is_some_and(|c| c.is_alphanumeric() || c == '_')
}

fn line_comment_end(c: &[char], i: usize) -> usize {
    (i..c.len()).find(|&j| c[j] == '\n').unwrap_or(c.len())
}

/// The end of a (nested) block comment starting at `i`.
fn block_comment_end(c: &[char], i: usize) -> usize {
    let (mut depth, mut j) = (0usize, i);
    while j < c.len() {
        if c[j] == '/' && c.get(j + 1) == Some(&'*') {
            depth += 1;
            j += 2;
        } else if c[j] == '*' && c.get(j + 1) == Some(&'/') {
            depth -= 1;
            j += 2;
            if depth == 0 {
                return j;
            }
        } else {
            j += 1;
        }
    }
    c.len()
}

/// The end of a string starting with the quote at `i` (escapes honoured).
fn string_end(c: &[char], i: usize) -> usize {
    let mut j = i + 1;
    while j < c.len() {
        match c[j] {
            '\\' => j += 2,
            '"' => return j + 1,
            _ => j += 1,
        }
    }
    c.len()
}

/// The end of a raw string (`r"…"`, `r#"…"#`, `br#"…"#`) starting at `i`, if one does.
fn raw_string_end(c: &[char], i: usize) -> Option<usize> {
    if is_ident(i.checked_sub(1).map(|p| c[p])) {
        return None;
    }
    let mut j = i;
    if c[j] == 'b' {
        j += 1;
    }
    if c.get(j) != Some(&'r') {
        return None;
    }
    j += 1;
    let hashes = c[j..].iter().take_while(|&&ch| ch == '#').count();
    j += hashes;
    if c.get(j) != Some(&'"') {
        return None;
    }
    j += 1;
    while j < c.len() {
        if c[j] == '"'
            && c[j + 1..]
                .iter()
                .take(hashes)
                .filter(|&&h| h == '#')
                .count()
                == hashes
        {
            return Some(j + 1 + hashes);
        }
        j += 1;
    }
    Some(c.len())
}

/// The end of a character literal starting at `i` (`'a'`, `'\n'`, `'\u{7b}'`), or `None`
/// for a lifetime or label (`'a`).
fn char_literal_end(c: &[char], i: usize) -> Option<usize> {
    if c.get(i + 1) == Some(&'\\') {
        let close = (i + 2..c.len()).find(|&j| c[j] == '\'' && j > i + 2)?;
        return Some(close + 1);
    }
    (c.get(i + 2) == Some(&'\'')).then_some(i + 3)
}

/// Every function with a body in `text`, in the order they start.
pub fn functions(text: &str) -> Vec<FnSpan> {
    let code: Vec<char> = code_only(text).chars().collect();
    let line_of = |pos: usize| code[..pos].iter().filter(|&&ch| ch == '\n').count() + 1;
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(at) = find_fn(&code, i) {
        i = at + 2;
        let name: String = code[at + 2..]
            .iter()
            .skip_while(|ch| ch.is_whitespace())
            .take_while(|&&ch| is_ident(Some(ch)))
            .collect();
        if name.is_empty() {
            continue; // `fn(u8) -> u8` is a type, `fn $name` a macro pattern.
        }
        if let Some(end) = body_end(&code, at) {
            let line = line_of(at);
            out.push(FnSpan {
                name,
                line,
                lines: line_of(end) - line + 1,
            });
        }
    }
    out
}

/// The position of the next `fn` keyword at or after `from`.
fn find_fn(code: &[char], from: usize) -> Option<usize> {
    (from..code.len().saturating_sub(2)).find(|&j| {
        code[j] == 'f'
            && code[j + 1] == 'n'
            && code[j + 2].is_whitespace()
            && !is_ident(j.checked_sub(1).map(|p| code[p]))
    })
}

/// The position of the closing brace of the function whose `fn` is at `at`, or `None` for
/// a declaration without a body (`fn f();` in a trait or an `extern` block).
fn body_end(code: &[char], at: usize) -> Option<usize> {
    let mut nest = 0i32;
    let mut j = at;
    let open = loop {
        match *code.get(j)? {
            '(' | '[' => nest += 1,
            ')' | ']' => nest -= 1,
            ';' if nest == 0 => return None,
            '{' if nest == 0 => break j,
            _ => {}
        }
        j += 1;
    };
    let mut depth = 0i32;
    for (k, &ch) in code.iter().enumerate().skip(open) {
        match ch {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(k);
                }
            }
            _ => {}
        }
    }
    None
}

/// What breaks the rule in one file (`rel` is its name in the messages): the file's length
/// and every function that is too long.
pub fn check_text(rel: &str, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let lines = text.lines().count();
    if lines > MAX_FILE_LINES {
        out.push(format!("{rel}: {lines} lines (max {MAX_FILE_LINES})"));
    }
    for f in functions(text) {
        if f.lines > MAX_FN_LINES {
            out.push(format!(
                "{rel}:{}: fn {} is {} lines (max {MAX_FN_LINES})",
                f.line, f.name, f.lines
            ));
        }
    }
    out
}

/// What breaks the rule below `root` (the workspace), in the `src/` and `tests/` of both
/// crates, and how many files were read.
pub fn check_workspace(root: &Path) -> (Vec<String>, usize) {
    let mut out = Vec::new();
    let mut files = 0;
    for dir in [
        "crates/sysmeter/src",
        "crates/sysmeter/tests",
        "crates/sysmeter-sys/src",
        "crates/sysmeter-sys/tests",
    ] {
        for path in super::rust_files(&root.join(dir)) {
            let rel = path.strip_prefix(root).unwrap_or(&path).to_string_lossy();
            if GENERATED.iter().any(|(g, _)| *g == rel) {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            out.extend(check_text(&rel, &text));
            files += 1;
        }
    }
    (out, files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_and_functions_stay_small() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let (bad, files) = check_workspace(&root);
        assert!(
            files > 100,
            "read only {files} files below {}",
            root.display()
        );
        assert!(
            bad.is_empty(),
            "files over {MAX_FILE_LINES} lines or functions over {MAX_FN_LINES} lines \
             (split them; see ARCHITECTURE.md, src/layers/size.rs):\n  {}",
            bad.join("\n  ")
        );
    }

    /// A function of `body` lines between its `fn` line and its closing brace.
    fn synthetic(body: usize) -> String {
        let mut text = String::from("/// Doc comment, not counted.\n#[inline]\npub fn long(\n");
        text.push_str("    x: [u8; 4],\n) -> u8 {\n");
        for k in 0..body {
            text.push_str(&format!("    let _v{k} = \"}}\"; // }} {{\n"));
        }
        text.push_str("    x[0]\n}\n");
        text
    }

    #[test]
    fn a_61_line_function_is_caught_and_a_60_line_one_is_not() {
        // `fn` line, two signature lines, `x[0]`, closing brace: 5 lines besides the body.
        let f = functions(&synthetic(56));
        assert_eq!(f.len(), 1);
        assert_eq!((f[0].name.as_str(), f[0].line, f[0].lines), ("long", 3, 61));
        let bad = check_text("x.rs", &synthetic(56));
        assert_eq!(bad, ["x.rs:3: fn long is 61 lines (max 60)"]);
        assert!(check_text("x.rs", &synthetic(55)).is_empty());
    }

    #[test]
    fn a_file_over_400_lines_is_caught() {
        let text = "// line\n".repeat(401);
        assert_eq!(check_text("big.rs", &text), ["big.rs: 401 lines (max 400)"]);
        assert!(check_text("ok.rs", &"// line\n".repeat(400)).is_empty());
    }

    #[test]
    fn braces_in_literals_comments_and_types_do_not_count() {
        let text = "trait T {\n    fn decl(&self);\n}\n\
                    fn a<'a>(s: &'a str) -> fn(u8) -> u8 {\n\
                    \x20   let _ = ('{', '\\u{7b}', r#\"}\"#, b'}');\n\
                    \x20   /* } /* nested } */ */\n\
                    \x20   'outer: loop { break 'outer; }\n\
                    \x20   |x| x\n}\n\
                    fn b() {}\n";
        let f: Vec<(String, usize, usize)> = functions(text)
            .into_iter()
            .map(|f| (f.name, f.line, f.lines))
            .collect();
        assert_eq!(f, [("a".into(), 4, 6), ("b".into(), 10, 1)]);
    }
}
