//! The paths a source file names, read as the compiler reads them: the file is parsed
//! (`syn`), every `use` tree is expanded — grouped (`use crate::{a, b}`), nested, with
//! `self`, renamed, glob, over several lines — and every path of the code (expressions,
//! types, patterns, visibilities) is taken, as are the `crate::`/`super::`/`self::` paths
//! inside macro calls (whose bodies are tokens to `syn`). Each is made absolute from the
//! module the file is, and the inline modules around it (`mod tests { use super::*; }` is
//! one level deeper than its file), so `super::super::x` names what the compiler would.
//! Comments and string literals are not code. Paths that start with another crate's name or
//! a local item cannot leave the module they are in and are not kept. Test-only.

use std::str::FromStr;

use proc_macro2::{Spacing, TokenStream, TokenTree};
use syn::visit::{self, Visit};

/// A path the file names, absolute from the crate root (`["diagnose", "observe", "rings"]`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Named {
    /// The segments, from the crate root.
    pub path: Vec<String>,
    /// A glob import of everything in `path` (`use super::*`).
    pub glob: bool,
}

/// The module path of the file `rel` (relative to `src/`): `diagnose/offcpu/raw.rs` is
/// `diagnose::offcpu::raw`, `diagnose/offcpu.rs` and `diagnose/offcpu/mod.rs` are
/// `diagnose::offcpu`.
pub fn module_of(rel: &str) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .trim_end_matches(".rs")
        .split('/')
        .map(str::to_string)
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

/// Every crate path the file `rel` names in `text`; `Err` when it does not parse.
pub fn crate_paths(rel: &str, text: &str) -> Result<Vec<Named>, String> {
    let file = syn::parse_file(text).map_err(|e| format!("{rel} does not parse: {e}"))?;
    let mut walk = Walk {
        module: module_of(rel),
        found: Vec::new(),
    };
    walk.visit_file(&file);
    walk.found.sort();
    walk.found.dedup();
    Ok(walk.found)
}

/// Whether the code of `text` names the identifier `name` (comments and strings left out);
/// `false` when it cannot be read as Rust tokens.
pub fn names_ident(text: &str, name: &str) -> bool {
    TokenStream::from_str(text)
        .map(|tokens| {
            flat(tokens)
                .iter()
                .any(|t| matches!(t, Tok::Ident(i) if i == name))
        })
        .unwrap_or(false)
}

/// `segments` made absolute from `module`: `None` for a path that starts elsewhere (another
/// crate, a local item) or climbs above the crate root.
fn absolute(module: &[String], segments: &[String]) -> Option<Vec<String>> {
    let (first, rest) = segments.split_first()?;
    let mut path = match first.as_str() {
        "crate" => Vec::new(),
        "self" | "super" => module.to_vec(),
        _ => return None,
    };
    if first == "super" {
        path.pop()?;
    }
    for segment in rest {
        match segment.as_str() {
            "super" => {
                path.pop()?;
            }
            "self" => {}
            name => path.push(name.to_string()),
        }
    }
    Some(path)
}

/// The walk over one file: the module it is in (inline modules pushed), what it found.
struct Walk {
    module: Vec<String>,
    found: Vec<Named>,
}

impl Walk {
    fn add(&mut self, segments: &[String], glob: bool) {
        if let Some(path) = absolute(&self.module, segments) {
            self.found.push(Named { path, glob });
        }
    }

    /// Every path of a `use` tree under `prefix`.
    fn use_tree(&mut self, tree: &syn::UseTree, mut prefix: Vec<String>) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(&p.tree, prefix);
            }
            syn::UseTree::Name(n) => self.use_name(&n.ident, prefix),
            syn::UseTree::Rename(r) => self.use_name(&r.ident, prefix),
            syn::UseTree::Glob(_) => self.add(&prefix, true),
            syn::UseTree::Group(g) => {
                for item in &g.items {
                    self.use_tree(item, prefix.clone());
                }
            }
        }
    }

    /// `prefix::name`, or the prefix itself for `self` in a group (`use a::{self, b}`).
    fn use_name(&mut self, name: &syn::Ident, mut prefix: Vec<String>) {
        if name != "self" || prefix.is_empty() {
            prefix.push(name.to_string());
        }
        self.add(&prefix, false);
    }
}

impl<'a> Visit<'a> for Walk {
    fn visit_item_mod(&mut self, m: &'a syn::ItemMod) {
        if m.content.is_some() {
            self.module.push(m.ident.to_string());
            visit::visit_item_mod(self, m);
            self.module.pop();
        }
    }

    fn visit_item_use(&mut self, u: &'a syn::ItemUse) {
        if u.leading_colon.is_none() {
            self.use_tree(&u.tree, Vec::new());
        }
    }

    fn visit_path(&mut self, p: &'a syn::Path) {
        if p.leading_colon.is_none() {
            let segments: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
            self.add(&segments, false);
        }
        visit::visit_path(self, p);
    }

    fn visit_macro(&mut self, m: &'a syn::Macro) {
        visit::visit_macro(self, m);
        for segments in macro_paths(&flat(m.tokens.clone())) {
            self.add(&segments, false);
        }
    }
}

/// A token as the macro scan needs it.
#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    /// A `:` joined to the next one (the first half of `::`).
    JointColon,
    Colon,
    Dollar,
    Other,
}

/// The tokens of `tokens`, groups opened in place (their delimiters as [`Tok::Other`], so no
/// path runs across them).
fn flat(tokens: TokenStream) -> Vec<Tok> {
    let mut out = Vec::new();
    for tree in tokens {
        match tree {
            TokenTree::Ident(i) => out.push(Tok::Ident(i.to_string())),
            TokenTree::Punct(p) => out.push(match (p.as_char(), p.spacing()) {
                (':', Spacing::Joint) => Tok::JointColon,
                (':', Spacing::Alone) => Tok::Colon,
                ('$', _) => Tok::Dollar,
                _ => Tok::Other,
            }),
            TokenTree::Group(g) => {
                out.push(Tok::Other);
                out.extend(flat(g.stream()));
                out.push(Tok::Other);
            }
            TokenTree::Literal(_) => out.push(Tok::Other),
        }
    }
    out
}

/// The paths of at least two segments that start with `crate`, `super` or `self` in a
/// macro's tokens (`$crate::` belongs to the macro's crate and is left out).
fn macro_paths(toks: &[Tok]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for (i, tok) in toks.iter().enumerate() {
        let Tok::Ident(first) = tok else { continue };
        let after_path = i >= 1 && matches!(toks[i - 1], Tok::Colon | Tok::Dollar);
        if after_path || !["crate", "super", "self"].contains(&first.as_str()) {
            continue;
        }
        let mut segments = vec![first.clone()];
        let mut j = i + 1;
        while let (Some(Tok::JointColon), Some(Tok::Colon), Some(Tok::Ident(next))) =
            (toks.get(j), toks.get(j + 1), toks.get(j + 2))
        {
            segments.push(next.clone());
            j += 3;
        }
        if segments.len() > 1 {
            out.push(segments);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(rel: &str, text: &str) -> Vec<String> {
        crate_paths(rel, text)
            .expect("parses")
            .into_iter()
            .map(|n| n.path.join("::") + if n.glob { "::*" } else { "" })
            .collect()
    }

    #[test]
    fn use_trees_are_expanded_like_the_compiler_does() {
        let text = "use crate::diagnose::{self, observe::{rings, records as r}, profile};\n\
                    use crate::model::{\n    Finding,\n    units::*,\n};\nuse std::io;\n";
        assert_eq!(
            paths("stats/x.rs", text),
            [
                "diagnose",
                "diagnose::observe::records",
                "diagnose::observe::rings",
                "diagnose::profile",
                "model::Finding",
                "model::units::*",
            ]
        );
    }

    #[test]
    fn super_and_self_climb_from_the_file_and_its_inline_modules() {
        let text = "use super::super::trace::x;\nuse self::inner::y;\n\
                    mod tests { use super::super::rings::z; fn f() { super::g(); } }\n";
        assert_eq!(
            paths("diagnose/calls/a.rs", text),
            [
                "diagnose::calls::a::g",
                "diagnose::calls::a::inner::y",
                "diagnose::calls::rings::z",
                "diagnose::trace::x",
            ]
        );
        assert_eq!(
            paths("diagnose/calls/mod.rs", "use super::trace;"),
            ["diagnose::trace"]
        );
    }

    #[test]
    fn code_paths_and_macro_paths_count_and_comments_and_strings_do_not() {
        let text = "// use crate::server;\n/// [`crate::store`]\nfn f() -> crate::model::Unit {\n\
                    let s = \"crate::report\";\n\
                    println!(\"{}\", crate::stats::median(&[1.0]));\n\
                    crate::host::read_host();\n}\nmacro_rules! m { () => { $crate::wire::x } }\n";
        assert_eq!(
            paths("commands/x.rs", text),
            ["host::read_host", "model::Unit", "stats::median"]
        );
        assert!(names_ident(
            "fn f() { sysmeter_sys::clock::now(); }",
            "sysmeter_sys"
        ));
        assert!(!names_ident(
            "// sysmeter_sys\nconst S: &str = \"sysmeter_sys\";",
            "sysmeter_sys"
        ));
    }

    #[test]
    fn a_file_that_does_not_parse_is_an_error() {
        assert!(crate_paths("x.rs", "use crate::{;").is_err());
    }
}
