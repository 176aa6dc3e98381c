//! Arguments of `sysmeter compare`: two runs or two sets of runs (stored or JSON files), the
//! noise threshold, the regression gate for CI and the output format. The statistical rules are spelled out
//! in the long help, because a CI gate must say exactly when it fails.

use clap::Args;

use super::pages::PageArgs;
use crate::report::compare_text::CompareFormat;
use crate::report::diff::Normalise;

/// `sysmeter compare A B`, or sets `sysmeter compare A1,A2,A3 B1,B2,B3`.
#[derive(Debug, Args)]
#[command(after_long_help = RULES)]
#[command(mut_arg("html", |a| a.help(
    "Also write the comparison as one self-contained HTML page to FILE (verdict counts and \
     regressions first, the change chart with 95% CIs and the noise band, the machine \
     differences, the full table); `-` is stdout instead of the --format output")))]
#[command(mut_arg("markdown", |a| a.help(
    "Also write the comparison as GitHub-flavoured Markdown to FILE; `-` is stdout instead \
     of the --format output")))]
pub struct CompareArgs {
    /// Baseline: a run id, a unique id prefix, `latest`, `latest~N`, the latest of a kind
    /// (`latest:KIND`, `latest:KIND~N`, e.g. `latest:scale~1`), or a JSON file written
    /// by `--format json` of bench/show (a name ending in `.json` or containing `/`; `-` reads
    /// standard input); or a set of such runs separated by commas (`A1,A2,A3`), tested with
    /// the noise between runs.
    #[arg(value_name = "A")]
    pub a: String,
    /// Candidate, compared against A; same forms as A.
    #[arg(value_name = "B")]
    pub b: String,
    /// Noise threshold in percent: a change of the median up to PCT is "no change".
    #[arg(long, value_name = "PCT", default_value_t = 2.0, value_parser = parse_percent)]
    pub threshold: f64,
    /// Exit with status 1 when a metric is slower beyond PCT with significance: verdict
    /// "slower" and the whole 95% CI of the ratio of medians beyond 1 + PCT/100 (for rates,
    /// below 1 - PCT/100).
    #[arg(long, value_name = "PCT", value_parser = parse_percent)]
    pub fail_above: Option<f64>,
    /// Output format of what is printed on stdout.
    #[arg(long, value_enum, default_value_t = CompareFormat::Text)]
    pub format: CompareFormat,
    /// Print every line of the text whole: without it, the text is held to the terminal's
    /// width ($COLUMNS when set, else 100 columns on a terminal; a pipe gets whole lines),
    /// table cells and long lines wrapped.
    #[arg(long)]
    pub full: bool,
    /// `--html`, `--markdown` (their help reworded above) and the database holding the runs
    /// (not opened when A and B are both files).
    #[command(flatten)]
    pub pages: PageArgs,
    /// Diagnosis runs: what every value is divided by before the sides are compared: `run`
    /// (as counted in one run of the command; the default when every round saw a launched
    /// command from start to exit), `wall` (per second of wall time; the default for `-p`
    /// and `--duration` runs) or `total` (a share of all samples, bytes or calls).
    #[arg(long, value_enum, value_name = "HOW")]
    pub normalise: Option<Normalise>,
    /// Seed of the bootstrap resampling (the CIs are reproducible for a seed).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Judge on the runs alone: do not read the host's stored runs for its between-run
    /// noise (used by default when A or B is a stored run, see the rules below).
    #[arg(long)]
    pub no_history: bool,
}

/// The rules of the verdicts, shown by `sysmeter compare --help`.
const RULES: &str = "\
How metrics are compared (matched by experiment id and metric name):
  change       median(B) / median(A) - 1.
  95% CI       percentile bootstrap of that ratio, resampling both raw sample sets
               (2000 resamples, --seed); an end more than 10x from the ratio is
               shown as 'unbounded' (the runs do not bound it; the JSON keeps it).
  p            two-sided Mann-Whitney U test (exact for tie-free samples of up to 50,
               else the normal approximation with tie correction).
  many metrics the p-values of all metrics compared at once are adjusted for their
               number (Benjamini-Hochberg) before they are held against 0.05: at 0.05
               each, one unchanged metric in twenty would be called changed by chance.
  significant  adjusted p < 0.05 and the CI of the ratio excludes 1.
  verdict      'no change' unless significant and |change| > --threshold; then
               'slower' or 'faster' (times: larger is slower; rates: larger is faster;
               counts and sizes: 'higher' or 'lower').
  --fail-above a metric fails when it is 'slower' and its whole CI lies beyond PCT
               (times: CI low > 1 + PCT/100; rates: CI high < 1 - PCT/100).
Machine speed (runs with machine-state probes, see docs/compare.md):
  speed B/A    B's probe core clock / A's, per experiment (the median over experiments
               for the pair of runs).
  normalised   the change after dividing out that ratio, for metrics that scale with the
               core clock: times of cpu.*, os.syscall, os.ctxsw, os.task, ipc.* and L1/L2
               latency, unless the runs of a set show otherwise; never DRAM, fs.*, net.*,
               mem.bandwidth, rates, counts.
  judged       when speed B/A is outside 1 +- 5% (or a set's probes differ by more),
               those metrics' verdicts and --fail-above use the normalised comparison;
               a raw change it removes is 'machine slower; no change after normalising'.
Sets (A1,A2,A3 B1,B2,B3, or runs made with bench --rounds N, which count as N):
  p and CI     Welch t-test on the log of the per-run (per-round) medians and the CI
               exp(mean difference +- t*se) of the ratio; the medians shown are the
               medians of the per-run medians. `-` (standard input) is not allowed in a set.
History (when A or B is a stored run; --no-history turns it off):
  run noise    a side that is one run takes the spread of its host's recent stored
               runs of the same profile (at least 5 of the last 20 bench runs, in core
               cycles for metrics that scale) as the least variance of its value (the
               median of its rounds): the samples and rounds of one run share one
               moment's machine state. Such a metric is then tested between runs (Welch,
               as for sets).
Diagnosis runs (profile, profile --off-cpu, alloc, calls, calls --functions, locks, trace;
docs/compare.md) are compared key by key instead of metric by metric:
  keys         per function (self and inclusive), per stack, per heap site, per lock
               site, per system or library call.
  values       divided as --normalise says: run (the default), wall (the default when a
               run was attached with -p or cut by --duration) or total; the first line
               says which.
  95% interval of B - A: the wider of the samples' (Poisson, or binomial for shares, from
               the counted events) and the rounds' (Welch t on the per-round values, from
               --rounds N or sets).
  verdict      grew, shrank, new or gone only when the interval excludes 0, else 'no
               change' ('unjudged': values not counted and one round a side).
  --fail-above exit 1 when a function, site or call grew by more than PCT of A with
               its whole interval.
Runs from different machines are compared too; what differs (CPU, caches, kernel,
virtualization, ...) is listed first.
Runs of two kinds (a scale run and a locks run) are refused: compare the latest two of one
kind with `latest:KIND~1 latest:KIND` (e.g. latest:profile~1 latest:profile).
Exit status: 0 compared (and no regression), 1 a regression under --fail-above, or an
unreadable database, 2 bad input (unknown run, unreadable JSON file, bad flag, an empty
or repeated entry in a set, `-` in a set, runs of two kinds, or --fail-above with no
metric in common).";

/// Parses a non-negative percentage such as `5` or `2.5` into a fraction (0.05, 0.025).
pub fn parse_percent(text: &str) -> Result<f64, String> {
    let t = text.trim().trim_end_matches('%');
    match t.parse::<f64>() {
        Ok(p) if p.is_finite() && p >= 0.0 => Ok(p / 100.0),
        _ => Err(format!(
            "'{text}' is not a percentage; write a non-negative number such as 5 or 2.5"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::parse_percent;

    #[test]
    fn percentages_become_fractions() {
        assert_eq!(parse_percent("5"), Ok(0.05));
        assert_eq!(parse_percent("2.5%"), Ok(0.025));
        assert_eq!(parse_percent("0"), Ok(0.0));
        assert!(parse_percent("-1").is_err());
        assert!(parse_percent("NaN").is_err());
        assert!(parse_percent("five").is_err());
    }
}
