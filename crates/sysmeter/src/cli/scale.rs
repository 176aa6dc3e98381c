//! Arguments of `sysmeter scale` and the parsers of its size lists (`--sizes 1k,2k,4k`,
//! `--range 1k..64k`, `--range 1000..10000+1000`).

use clap::{ArgGroup, Args};

use super::OutputArgs;
use crate::diagnose::scale::{FitStat, TimeBasis};

/// Most sizes one `scale` run may have (each is run `--repeat` times).
pub const MAX_SIZES: usize = 1000;

/// `sysmeter scale`.
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("grid").required(true).args(["sizes", "range"])))]
#[command(
    after_help = "Example: sysmeter scale --range 100k..3200k -- ./sort N, with N \
    written as the letter n in curly braces.\n\
    Every run is timed from spawn to exit (wall time; user+sys from wait4). A more complex \
    class must lower the fit error by over 20% to be chosen; a knee is an abrupt rise of the \
    time per element."
)]
pub struct ScaleArgs {
    /// Sizes to run, comma separated; k, M, G multiply by 10³, 10⁶, 10⁹ (e.g. 1k,2k,4k).
    #[arg(long, value_name = "LIST", value_parser = parse_size_list)]
    pub sizes: Option<SizeList>,
    /// Sizes A, A·F, A·F², … up to B (`A..BxF`, F defaults to 2), or A, A+S, … (`A..B+S`).
    #[arg(long, value_name = "A..B[xF|+S]", value_parser = parse_range)]
    pub range: Option<SizeList>,
    /// Runs per size; the order of all runs is shuffled (seeded).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub repeat: u32,
    /// Predict the time at this size from the best fit (repeatable or comma separated).
    #[arg(long, value_name = "N", value_delimiter = ',', value_parser = parse_count)]
    pub predict: Vec<u64>,
    /// Untimed runs of the smallest size before measuring (page cache, lazy binding).
    #[arg(long, default_value_t = 1, value_name = "K")]
    pub warmup: u32,
    /// Kill a run that takes longer than this and stop (e.g. 30, 0.5, 500ms, 1m).
    #[arg(long, value_name = "SECS", value_parser = super::target::parse_duration)]
    pub timeout: Option<std::time::Duration>,
    /// Which time to fit: wall (spawn to exit) or cpu (user+sys of the command; steadier
    /// when other work competes for the CPUs, blind to waiting).
    #[arg(long, value_enum, default_value_t = TimeBasis::Wall)]
    pub time: TimeBasis,
    /// Which run of each size to fit: the median, or min (the fastest: steadier when
    /// interference only ever slows runs down).
    #[arg(long, value_enum, default_value_t = FitStat::Median)]
    pub stat: FitStat,
    /// Seed of the run order and of the bootstrap statistics.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Let the command write to this terminal (default: its stdout and stderr are discarded).
    #[arg(long)]
    pub show_output: bool,
    /// Output format, --out, and where the run is stored.
    #[command(flatten)]
    pub output: OutputArgs,
    // Help text cannot show the placeholder itself: clap prints "{n}" as a line break.
    /// The command, with the size placeholder (the letter n in curly braces) in at least one
    /// argument.
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<String>,
}

/// A list of sizes from `--sizes` or `--range`, in the order given, without duplicates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SizeList(pub Vec<u64>);

/// Parse one size: digits with an optional k, M or G (×10³, ×10⁶, ×10⁹), or a number in
/// exponent form such as `1e6`; it must be a whole number ≥ 1.
pub fn parse_count(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let (number, mult) = match t.char_indices().last() {
        Some((i, 'k' | 'K')) => (&t[..i], 1e3),
        Some((i, 'M')) => (&t[..i], 1e6),
        Some((i, 'G')) => (&t[..i], 1e9),
        _ => (t, 1.0),
    };
    let bad = || format!("'{text}' is not a size; write a whole number such as 4096, 64k or 1e6");
    let value: f64 = number.parse().map_err(|_| bad())?;
    let n = value * mult;
    // Whole numbers up to 2^53 are exact in a double.
    if !((1.0..=9.007_199_254_740_992e15).contains(&n) && n.fract() == 0.0) {
        return Err(bad());
    }
    Ok(n as u64)
}

/// Parse `--sizes`: comma-separated sizes (see [`parse_count`]), duplicates dropped.
pub fn parse_size_list(text: &str) -> Result<SizeList, String> {
    let mut sizes = Vec::new();
    for item in text.split(',') {
        let n = parse_count(item)?;
        if !sizes.contains(&n) {
            sizes.push(n);
        }
    }
    check_count(sizes)
}

/// Parse `--range A..B`, `A..BxF` (geometric, F > 1, default 2) or `A..B+S` (arithmetic).
pub fn parse_range(text: &str) -> Result<SizeList, String> {
    let usage = || {
        format!(
            "'{text}' is not a range; write A..B, A..BxF (e.g. 1k..64kx2) or A..B+S (e.g. 100..1000+100)"
        )
    };
    let (a, rest) = text.split_once("..").ok_or_else(usage)?;
    let a = parse_count(a)?;
    let (b, step) = match rest.split_once(['x', '+']) {
        Some((b, s)) => (b, Some((rest.as_bytes()[b.len()], s))),
        None => (rest, None),
    };
    let b = parse_count(b)?;
    if b <= a {
        return Err(format!(
            "range '{text}' is empty: the end must exceed the start"
        ));
    }
    let mut sizes = Vec::new();
    match step {
        Some((b'+', s)) => {
            let s = parse_count(s)?;
            let mut n = a;
            while n <= b && sizes.len() <= MAX_SIZES {
                sizes.push(n);
                n = n.saturating_add(s);
            }
        }
        _ => {
            let factor = match step {
                Some((_, f)) => f.trim().parse::<f64>().map_err(|_| usage())?,
                None => 2.0,
            };
            if !(factor.is_finite() && factor >= 1.01) {
                return Err(format!("range '{text}': the factor must be at least 1.01"));
            }
            let mut x = a as f64;
            while x <= b as f64 * (1.0 + 1e-12) && sizes.len() <= MAX_SIZES {
                let n = x.round() as u64;
                if sizes.last() != Some(&n) {
                    sizes.push(n);
                }
                x *= factor;
            }
        }
    }
    check_count(sizes)
}

fn check_count(sizes: Vec<u64>) -> Result<SizeList, String> {
    if sizes.len() > MAX_SIZES {
        return Err(format!(
            "more than {MAX_SIZES} sizes; use a larger step or factor"
        ));
    }
    Ok(SizeList(sizes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::fixture::assert_cases;

    #[test]
    fn sizes_parse_with_decimal_multipliers() {
        assert_cases(
            parse_count,
            &[
                ("4096", Ok(4096)),
                ("64k", Ok(64_000)),
                ("2M", Ok(2_000_000)),
                ("1.5k", Ok(1500)),
                ("1e6", Ok(1_000_000)),
            ],
        );
        for bad in ["", "0", "-3", "1.5", "12X", "k", "1e300"] {
            assert!(parse_count(bad).is_err(), "{bad}");
        }
        assert_eq!(
            parse_size_list("1k,2k,1000,4k"),
            Ok(SizeList(vec![1000, 2000, 4000]))
        );
        assert!(parse_size_list("1k,,2k").is_err());
    }

    #[test]
    fn ranges_are_geometric_or_arithmetic() {
        assert_eq!(
            parse_range("1k..8k"),
            Ok(SizeList(vec![1000, 2000, 4000, 8000]))
        );
        assert_eq!(parse_range("1..10x3"), Ok(SizeList(vec![1, 3, 9])));
        assert_eq!(
            parse_range("100..400+100"),
            Ok(SizeList(vec![100, 200, 300, 400]))
        );
        // Rounding collisions are dropped.
        assert_eq!(parse_range("1..3x1.1"), Ok(SizeList(vec![1, 2, 3])));
        for bad in ["1k", "8k..1k", "1..10x1", "1..10xq", "1..10+0", "1..1e9+1"] {
            assert!(parse_range(bad).is_err(), "{bad}");
        }
    }
}
