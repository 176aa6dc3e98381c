//! The note of a `trace` or `calls` metric (one system or library call): `; `-separated
//! parts that the diagnosis, the pricing and the renderers share. This file is the one
//! place that writes and reads them:
//!
//! - `N error(s): ENOENT×12, EACCES×1` (trace: the failed calls by errno),
//! - `threads: N` and `probed at …` (calls),
//! - `below resolution: < BOUND` (calls in process: the time is under the hook's spread),
//! - `cost here: COUNT × EACH = TOTAL (SOURCE)` (added by the pricing with a stored bench).
//!
//! The note stays a sentence a person can read in the JSON, and records stored before this
//! type existed read back the same way. Depends on nothing but `model`.

use super::Metric;

/// The parts of a call metric's note, borrowed from it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CallNote<'a> {
    /// Failed calls (0 when none).
    pub errors: u64,
    /// The failures by errno: `ENOENT×12, EACCES×1` (empty when none).
    pub breakdown: &'a str,
    /// Threads that made the call (`calls`).
    pub threads: Option<&'a str>,
    /// What the calls cost here: `TOTAL (SOURCE)`, when priced.
    pub cost: Option<&'a str>,
    /// The bound of a time below the hook's resolution (`calls` in process): `12 ns`.
    pub below_resolution: Option<&'a str>,
    /// No call was timed (`calls` in process: all left by longjmp or an exception).
    pub untimed: bool,
}

const THREADS: &str = "threads: ";
const COST: &str = "cost here: ";
const RESOLUTION: &str = "below resolution: < ";
/// The note part of a function none of whose calls was timed.
pub const UNTIMED: &str = "no call timed";

impl<'a> CallNote<'a> {
    /// The parts of `m`'s note.
    pub fn of(m: &'a Metric) -> CallNote<'a> {
        let mut note = CallNote::default();
        for part in m.note.as_deref().unwrap_or("").split("; ") {
            if let Some(t) = part.strip_prefix(THREADS) {
                note.threads = Some(t);
            } else if part == UNTIMED {
                note.untimed = true;
            } else if let Some(r) = part.strip_prefix(RESOLUTION) {
                note.below_resolution = Some(r);
            } else if let Some(c) = part.strip_prefix(COST) {
                note.cost = Some(c.split_once(" = ").map_or(c, |(_, total)| total));
            } else if let Some((n, breakdown)) = errors_part(part) {
                (note.errors, note.breakdown) = (n, breakdown);
            }
        }
        note
    }
}

/// `N error(s): breakdown` → (N, breakdown).
fn errors_part(part: &str) -> Option<(u64, &str)> {
    let (count, rest) = part.split_once(' ')?;
    let n = count.parse().ok()?;
    let breakdown = rest
        .strip_prefix("errors: ")
        .or_else(|| rest.strip_prefix("error: "))?;
    Some((n, breakdown))
}

/// The errors part of a trace metric's note: `12 errors: ENOENT×12`.
pub fn errors_text(n: u64, breakdown: &str) -> String {
    let word = if n == 1 { "error" } else { "errors" };
    format!("{n} {word}: {breakdown}")
}

/// The threads part of a calls metric's note.
pub fn threads_text(threads: usize) -> String {
    format!("{THREADS}{threads}")
}

/// The part of a time below the hook's resolution, `bound` formatted: the time lies
/// between 0 and it.
pub fn resolution_text(bound: &str) -> String {
    format!("{RESOLUTION}{bound}")
}

impl CallNote<'_> {
    /// The median cell: the time, or `< resolution (±bound)` where it is below resolution.
    pub fn median_cell(&self, median_ns: f64) -> String {
        match self.below_resolution {
            Some(b) => format!("< resolution (±{b})"),
            None if self.untimed => "not timed".into(),
            None => super::units::duration_ns(median_ns),
        }
    }
}

/// Adds the priced cost to `m`'s note: `cost here: 3 × 5 ns = 15 ns (cpu.timer …)`.
pub fn add_cost(m: &mut Metric, (count, each, total): (&str, &str, &str), source: &str) {
    let cost = format!("{COST}{count} × {each} = {total} ({source})");
    m.note = Some(match m.note.take() {
        Some(n) => format!("{n}; {cost}"),
        None => cost,
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Summary, Unit};

    fn metric(note: Option<String>) -> Metric {
        Metric {
            note,
            ..Metric::new("openat", Unit::Ns, Summary::default())
        }
    }

    #[test]
    fn a_written_note_reads_back_part_by_part() {
        let mut m = metric(Some(errors_text(12, "ENOENT×11, EACCES×1")));
        add_cost(&mut m, ("20", "1.00 µs", "20.0 µs"), "os.syscall \"open\"");
        let n = CallNote::of(&m);
        assert_eq!((n.errors, n.breakdown), (12, "ENOENT×11, EACCES×1"));
        assert_eq!(n.cost, Some("20.0 µs (os.syscall \"open\")"));
        assert_eq!(n.threads, None);
        let one = metric(Some(errors_text(1, "EBADF×1")));
        assert_eq!(CallNote::of(&one).errors, 1);
    }

    #[test]
    fn calls_notes_and_empty_notes() {
        let m = metric(Some(format!("{}; probed at the PLT", threads_text(4))));
        let n = CallNote::of(&m);
        assert_eq!((n.threads, n.errors, n.cost), (Some("4"), 0, None));
        assert_eq!(CallNote::of(&metric(None)), CallNote::default());
        // A part that only looks like a count is not an error count.
        let odd = metric(Some("3 threads waited".into()));
        assert_eq!(CallNote::of(&odd).errors, 0);
    }
}
