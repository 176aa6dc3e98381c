//! The flame graph of a sampled profile (`profile`, `offcpu`): its folded stacks drawn by
//! the floor's one drawing (`observe::flame`, inferno).
//! Off-CPU flame graphs (widths in blocked microseconds) use FlameGraph's blue `io`
//! palette on a grey-blue background, so they cannot be mistaken for CPU time.

use super::SampledError;
use super::stacks::Stacks;
use crate::diagnose::observe::flame::{Style, svg};

/// The flame graph SVG of `stacks` titled `title` (a small SVG saying so when there are no
/// samples: inferno refuses empty input, and `--flamegraph FILE` should still get an image).
pub fn render(stacks: &Stacks, title: &str) -> Result<String, SampledError> {
    draw(stacks, title, false)
}

/// The off-CPU flame graph: `stacks` weighted by blocked nanoseconds, drawn in µs with
/// the blue palette.
pub fn render_off_cpu(stacks: &Stacks, title: &str) -> Result<String, SampledError> {
    draw(stacks, title, true)
}

fn draw(stacks: &Stacks, title: &str, off_cpu: bool) -> Result<String, SampledError> {
    let folded = if stacks.total() == 0 {
        String::new()
    } else {
        stacks.folded()
    };
    let style = if off_cpu {
        Style {
            count_name: "µs off-CPU",
            factor: 1e-3,
            off_cpu: true,
        }
    } else {
        Style {
            count_name: "samples",
            factor: 1.0,
            off_cpu: false,
        }
    };
    svg(&folded, title, style, EMPTY).map_err(SampledError::Flame)
}

const EMPTY: &str = "No samples: the program used no CPU time while it was sampled.";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::observe::sampled::stacks::Frame;

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
