//! An experiment's page: its description written as Markdown beside its code
//! (`experiments/<group>/<name>.md`), the one source of its id, title, what it measures, its
//! methodology and its references, parsed here into an [`About`].
//!
//! The format, kept small on purpose:
//!
//! ```text
//! # cpu.call — Procedure call overhead
//!
//! ## Measures
//! A non-inlined call and return …
//! continued on the next line.
//!
//! ## Methodology
//! …
//!
//! ## References
//! - systems-measurement report: procedure call overhead
//! ```
//!
//! The first line is `# ` + the id + ` — ` + the title. Each `## ` heading opens a section;
//! a section is one paragraph whose lines are trimmed and joined by one space (so a page can
//! be wrapped anywhere between words), or a list of `- ` items, each item's continuation
//! lines joined the same way. A blank line inside a paragraph is refused: the texts are one
//! paragraph each wherever they are shown. `{{name}}` marks a hole the experiment's code fills
//! ([`About::fill`]) with something known only when it runs or shared by several pages.
//! Sections other than the three of [`About`] are read by name: a page with a section
//! [`BESIDE`] declares that its experiment runs work beside the measuring thread. Depends
//! only on [`About`].

use std::fmt;

use super::About;

/// A page parsed: its heading and its sections, borrowing the page's text.
#[derive(Debug, Clone, PartialEq)]
pub struct Page<'a> {
    /// What stands before ` — ` in the heading: the experiment's id.
    pub id: &'a str,
    /// What stands after it: the title.
    pub title: &'a str,
    sections: Vec<(&'a str, Vec<&'a str>)>,
}

/// Why a page could not be read, with the 1-based line it concerns.
#[derive(Debug, Clone, PartialEq)]
pub struct PageError {
    /// Line number in the page.
    pub line: usize,
    /// What is wrong there.
    pub reason: &'static str,
}

impl fmt::Display for PageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.reason)
    }
}

impl std::error::Error for PageError {}

/// The section of a page that says what the experiment runs beside the measuring thread (a
/// peer process, children, helper threads, kernel I/O); its presence is the experiment's
/// `shares_measuring_cpu`, which the harness's drift judgment reads.
pub const BESIDE: &str = "Beside the measuring thread";

/// The separator of id and title in the heading (as the reports write `id — title`).
const DASH: &str = " — ";

impl<'a> Page<'a> {
    /// Parse a page; every rule of the format is checked.
    pub fn parse(text: &'a str) -> Result<Page<'a>, PageError> {
        let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
        let (id, title) = match lines.next() {
            Some((_, first)) => heading(first).ok_or(PageError {
                line: 1,
                reason: "the first line must be `# <id> — <title>`",
            })?,
            None => {
                return Err(PageError {
                    line: 1,
                    reason: "the page is empty",
                });
            }
        };
        let mut sections: Vec<(&str, Vec<&str>)> = Vec::new();
        let mut blank_after_text = false;
        for (n, line) in lines {
            let trimmed = line.trim();
            if let Some(name) = line.strip_prefix("## ") {
                if sections.iter().any(|(s, _)| *s == name.trim()) {
                    return Err(PageError {
                        line: n,
                        reason: "a section appears twice",
                    });
                }
                sections.push((name.trim(), Vec::new()));
                blank_after_text = false;
            } else if line.starts_with('#') {
                return Err(PageError {
                    line: n,
                    reason: "only one `# ` heading, then `## ` sections",
                });
            } else if trimmed.is_empty() {
                blank_after_text = sections.last().is_some_and(|(_, l)| !l.is_empty());
            } else if let Some((_, body)) = sections.last_mut() {
                if blank_after_text {
                    return Err(PageError {
                        line: n,
                        reason: "a section is one paragraph or one list: no blank line inside",
                    });
                }
                body.push(trimmed);
            } else {
                return Err(PageError {
                    line: n,
                    reason: "text before the first `## ` section",
                });
            }
        }
        Ok(Page {
            id,
            title,
            sections,
        })
    }

    /// Only the id of a page (`""` when its heading is malformed, which the experiments'
    /// tests refuse).
    pub fn id_of(text: &str) -> &str {
        text.lines()
            .next()
            .and_then(heading)
            .map_or("", |(id, _)| id)
    }

    /// Whether the page has section `name`.
    pub fn has(&self, name: &str) -> bool {
        self.lines(name).is_some()
    }

    /// A section as one paragraph: its lines joined by one space; `None` when absent.
    pub fn text(&self, name: &str) -> Option<String> {
        self.lines(name).map(|l| l.join(" "))
    }

    /// A section as a list: each `- ` item with its continuation lines joined by one space.
    pub fn items(&self, name: &str) -> Vec<String> {
        let mut items: Vec<String> = Vec::new();
        for line in self.lines(name).unwrap_or_default() {
            match (line.strip_prefix("- "), items.last_mut()) {
                (Some(item), _) => items.push(item.to_string()),
                (None, Some(last)) => {
                    last.push(' ');
                    last.push_str(line);
                }
                (None, None) => items.push(line.to_string()),
            }
        }
        items
    }

    /// The page as an [`About`]: the title, the `Measures` and `Methodology` paragraphs (empty
    /// when absent) and the `References` list.
    pub fn about(&self) -> About {
        About {
            title: self.title.to_string(),
            measures: self.text("Measures").unwrap_or_default(),
            methodology: self.text("Methodology").unwrap_or_default(),
            references: self.items("References"),
        }
    }

    fn lines(&self, name: &str) -> Option<Vec<&'a str>> {
        self.sections
            .iter()
            .find(|(s, _)| *s == name)
            .map(|(_, l)| l.clone())
    }
}

/// `# <id> — <title>` split, both non-empty.
fn heading(line: &str) -> Option<(&str, &str)> {
    let (id, title) = line.strip_prefix("# ")?.split_once(DASH)?;
    let (id, title) = (id.trim(), title.trim());
    (!id.is_empty() && !title.is_empty()).then_some((id, title))
}

impl About {
    /// An experiment's description read from its page; an empty description when the page
    /// is malformed (every experiment's page is parsed by a test, so that cannot ship).
    pub fn from_page(text: &str) -> About {
        Page::parse(text).map(|p| p.about()).unwrap_or_default()
    }

    /// Fill the hole `{{name}}` in the title, what it measures and the methodology.
    pub fn fill(mut self, name: &str, value: &str) -> About {
        let hole = format!("{{{{{name}}}}}");
        for s in [&mut self.title, &mut self.measures, &mut self.methodology] {
            *s = s.replace(&hole, value);
        }
        self
    }

    /// Whether a `{{…}}` hole is left unfilled anywhere in the text.
    pub fn has_holes(&self) -> bool {
        let texts = [&self.title, &self.measures, &self.methodology];
        texts
            .into_iter()
            .chain(&self.references)
            .any(|s| s.contains("{{"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = "# cpu.x — A title\n\n## Measures\nOne thing,\n    and another.\n\n\
        ## Methodology\nTimed {{how}};\nsubtracted.\n\n## References\n- first\n- second,\n  \
        continued\n";

    #[test]
    fn a_page_reads_as_its_about_with_lines_joined_by_one_space() {
        let page = Page::parse(PAGE).expect("valid");
        assert_eq!((page.id, page.title), ("cpu.x", "A title"));
        assert_eq!(Page::id_of(PAGE), "cpu.x");
        let about = About::from_page(PAGE);
        assert_eq!(about.measures, "One thing, and another.");
        assert_eq!(about.methodology, "Timed {{how}}; subtracted.");
        assert_eq!(about.references, ["first", "second, continued"]);
        assert!(about.has_holes());
        let filled = about.fill("how", "twice");
        assert_eq!(filled.methodology, "Timed twice; subtracted.");
        assert!(!filled.has_holes());
    }

    #[test]
    fn absent_sections_are_empty() {
        let page = Page::parse("# a.b — T\n## Other\nx\n").expect("valid");
        assert_eq!(page.text("Other").as_deref(), Some("x"));
        assert_eq!(page.text("Measures"), None);
        assert_eq!(page.about(), About::new("T", "", "", &[]));
    }

    #[test]
    fn malformed_pages_are_refused_with_the_line() {
        let err = |text: &str| Page::parse(text).err().map(|e| e.line);
        assert_eq!(err(""), Some(1));
        assert_eq!(err("# no title\n"), Some(1));
        assert_eq!(err("# a.b — \n"), Some(1));
        assert_eq!(err("# a.b — T\nloose text\n"), Some(2));
        assert_eq!(err("# a.b — T\n## M\none\n\ntwo\n"), Some(5));
        assert_eq!(err("# a.b — T\n## M\n## M\n"), Some(3));
        assert_eq!(err("# a.b — T\n# again — x\n"), Some(2));
        assert_eq!(Page::id_of("no heading"), "");
        assert_eq!(About::from_page("no heading"), About::default());
        let msg = Page::parse("x")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(msg.starts_with("line 1: the first line"), "{msg}");
    }
}
