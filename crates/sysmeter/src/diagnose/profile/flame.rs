//! The flame graph: inferno's port of FlameGraph drawn from our folded stacks. Colours are
//! chosen from a hash of each name (`deterministic`), so the same profile draws the same
//! picture. The SVG carries inferno's JavaScript (search, zoom) and is self-contained.
//! Off-CPU flame graphs (widths in blocked microseconds) use FlameGraph's blue `io`
//! palette on a grey-blue background, so they cannot be mistaken for CPU time.

use inferno::flamegraph::{self, Options};

use super::ProfileError;
use super::stacks::Stacks;

/// The flame graph SVG of `stacks` titled `title` (a small SVG saying so when there are no
/// samples: inferno refuses empty input, and `--flamegraph FILE` should still get an image).
pub fn render(stacks: &Stacks, title: &str) -> Result<String, ProfileError> {
    draw(stacks, title, false)
}

/// The off-CPU flame graph: `stacks` weighted by blocked nanoseconds, drawn in µs with
/// the blue palette.
pub fn render_off_cpu(stacks: &Stacks, title: &str) -> Result<String, ProfileError> {
    draw(stacks, title, true)
}

fn draw(stacks: &Stacks, title: &str, off_cpu: bool) -> Result<String, ProfileError> {
    if stacks.total() == 0 {
        return Ok(EMPTY_SVG.to_string());
    }
    let folded = stacks.folded();
    let mut opts = Options::default();
    opts.title = title.to_string();
    opts.count_name = "samples".to_string();
    opts.deterministic = true;
    if off_cpu {
        use inferno::flamegraph::color::{BackgroundColor, BasicPalette, Palette};
        opts.colors = Palette::Basic(BasicPalette::Io);
        opts.bgcolors = Some(BackgroundColor::Blue);
        opts.count_name = "µs off-CPU".to_string();
        opts.factor = 1e-3;
    }
    let mut svg = Vec::new();
    flamegraph::from_lines(&mut opts, folded.lines(), &mut svg)
        .map_err(|e| ProfileError::Flame(e.to_string()))?;
    String::from_utf8(svg).map_err(|e| ProfileError::Flame(e.to_string()))
}

const EMPTY_SVG: &str = "<?xml version=\"1.0\" standalone=\"no\"?>\n\
<svg version=\"1.1\" width=\"600\" height=\"60\" xmlns=\"http://www.w3.org/2000/svg\">\
<text x=\"10\" y=\"35\" font-family=\"Verdana\" font-size=\"14\">No samples: the program used \
no CPU time while it was sampled.</text></svg>\n";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::profile::stacks::Frame;

    #[test]
    fn svg_names_every_function_and_escapes_the_title() {
        let mut s = Stacks::default();
        let f = |s: &mut Stacks, n: &str| {
            s.intern(Frame {
                name: n.into(),
                module: "p".into(),
                kernel: false,
                known: true,
            })
        };
        let (main, a, b) = (f(&mut s, "main"), f(&mut s, "hot_a"), f(&mut s, "hot_b"));
        s.add(vec![main, a], 70);
        s.add(vec![main, b], 30);
        let svg = render(&s, "sysmeter profile: ./x <1> & 2").expect("svg");
        assert!(svg.starts_with("<?xml"), "{}", &svg[..40.min(svg.len())]);
        assert!(svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains("hot_a") && svg.contains("hot_b"));
        assert!(!svg.contains("<1>"), "title must be escaped");
        let empty = render(&Stacks::default(), "t").expect("svg");
        assert!(empty.starts_with("<?xml") && empty.trim_end().ends_with("</svg>"));
    }
}
