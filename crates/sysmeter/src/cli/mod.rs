//! Command-line definitions (clap derive) and nothing else: every subcommand's flags, with
//! the help text users read. Conversion into validated configuration happens in `commands`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::report::Format;

mod alloc;
mod backend;
mod calls;
mod compare;
mod completions;
mod export;
mod fleet;
mod live;
mod locks;
mod man;
mod pages;
mod profile;
mod report;
pub mod rounds;
mod run;
mod scale;
mod serve;
pub mod target;
mod trace;

pub use alloc::{ALLOC_TARGET, AllocArgs};
pub use calls::{CALLS_TARGET, CallsArgs};
pub use compare::CompareArgs;
pub use completions::CompletionsArgs;
pub use export::{ExportArgs, ExportFormat};
pub use fleet::{FleetArgs, ImportArgs, PruneArgs};
pub use live::{LIVE_TARGET, LiveArgs};
pub use locks::{LOCKS_TARGET, LocksArgs};
pub use man::ManArgs;
pub use pages::PageArgs;
pub use profile::{PROFILE_TARGET, ProfileArgs};
pub use report::ReportArgs;
pub use run::{RUN_TARGET, RunArgs};
pub use scale::ScaleArgs;
pub use serve::ServeArgs;
pub use trace::{TRACE_TARGET, TraceArgs};

/// Measure what every operation costs on this machine, and where a program's time goes.
#[derive(Debug, Parser)]
#[command(name = "sysmeter", version, about, long_about = None)]
pub struct Cli {
    /// The subcommand.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// List the experiments and groups `bench` can run.
    List(ListArgs),
    /// Describe this machine: CPU, caches, memory, disks, network, OS, limits, capabilities.
    Host(HostArgs),
    /// Measure what operations cost on this machine (default: every group).
    Bench(BenchArgs),
    /// List stored runs, newest first.
    History(HistoryArgs),
    /// Show one stored run in full.
    Show(ShowArgs),
    /// Run a command (or watch a PID): time split, resource use, timeline and a verdict.
    Run(RunArgs),
    /// Summarise the system calls of a command or a running process.
    Trace(TraceArgs),
    /// Count and time the library calls of a command or a running process (like ltrace -c).
    Calls(CallsArgs),
    /// Sample a command's CPU profile: flat profile, call graph, flame graph.
    Profile(ProfileArgs),
    /// Find contended locks (futex waits) of a command: per lock and call site, like mutrace.
    Locks(LocksArgs),
    /// Profile the heap of a command: allocations, leaks, peak and temporaries per call stack.
    Alloc(AllocArgs),
    /// Time a command at growing input sizes and fit its complexity.
    Scale(ScaleArgs),
    /// Watch a running program in a local web page: CPU, waits, flame graph, system calls.
    Live(LiveArgs),
    /// Compare two runs metric by metric, with significance.
    Compare(CompareArgs),
    /// Write a self-contained HTML (or Markdown) report of a stored run.
    Report(ReportArgs),
    /// Export a stored run (OpenMetrics, JSON, CSV).
    Export(ExportArgs),
    /// Store run records written with `--format json` on other machines (a fleet in one file).
    Import(ImportArgs),
    /// Compare the machines of a store: fleet median and spread per metric, and the outliers.
    Fleet(FleetArgs),
    /// Delete all but each host's latest N runs of each kind (retention of a fleet store).
    Prune(PruneArgs),
    /// Answer the net group of another host's `bench --remote` (echo, sink, source, accept, UDP).
    Serve(ServeArgs),
    /// Print a shell completion script.
    Completions(CompletionsArgs),
    /// Print the man page (roff).
    Man(ManArgs),
}

/// Where results are stored.
#[derive(Debug, Args, Clone)]
pub struct DbArgs {
    /// SQLite database file (default: $XDG_DATA_HOME/sysmeter/sysmeter.db or
    /// ~/.local/share/sysmeter/sysmeter.db), or a PostgreSQL database shared by a fleet:
    /// `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE` (needs a build with `--features pg`).
    /// Without --db, the environment variable SYSMETER_DB names it.
    #[arg(long, value_name = "PATH|URL")]
    pub db: Option<PathBuf>,
}

/// Where a measuring command's results go: the format, a file instead of the terminal, and
/// the database (or none).
#[derive(Debug, Args)]
pub struct OutputArgs {
    /// Output format of the results.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Write the results to FILE instead of the terminal (stdout for bench and scale; stderr
    /// for run, trace and profile, whose command keeps stdout).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Database to store the run in.
    #[command(flatten)]
    pub db: DbArgs,
    /// Do not store the run.
    #[arg(long, conflicts_with = "db")]
    pub no_store: bool,
}

/// `sysmeter list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = SimpleFormat::Text)]
    pub format: SimpleFormat,
}

/// `sysmeter host`.
#[derive(Debug, Args)]
pub struct HostArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = SimpleFormat::Text)]
    pub format: SimpleFormat,
}

/// Text or JSON, for commands without tables of metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SimpleFormat {
    /// For people.
    Text,
    /// For programs.
    Json,
}

/// `sysmeter bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Groups (cpu, os, mem, ipc, net, fs) or experiment ids (os.syscall, os.lookup) to run; none = the default set.
    #[arg(value_name = "GROUP|ID")]
    pub names: Vec<String>,
    /// Run only these experiment ids (repeatable, or comma separated).
    #[arg(long, value_name = "ID", value_delimiter = ',')]
    pub only: Vec<String>,
    /// Smoke-test budgets: the whole set in seconds (2 short rounds), wider confidence
    /// intervals.
    #[arg(long, conflicts_with = "thorough")]
    pub quick: bool,
    /// Longer budgets and more samples, in 3 interleaved rounds.
    #[arg(long)]
    pub thorough: bool,
    /// Measure the selected experiments in N interleaved passes (ABAB…, not AA…BB): each
    /// metric gets the median of its round medians and the between-round CV, the figure to
    /// trust for reproducibility (default 1; 3 with --quick and --thorough).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=100))]
    pub rounds: Option<u16>,
    /// Output format, --out, and where the run is stored.
    #[command(flatten)]
    pub output: OutputArgs,
    /// CPU to pin the measuring thread to (default: the last CPU this process may use).
    #[arg(long, value_name = "N")]
    pub cpu: Option<usize>,
    /// Largest working set of the memory experiments, e.g. 512M, 2G (default 512 MiB, or
    /// enough for 8x the last-level cache for bandwidth).
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub max_size: Option<u64>,
    /// The `sysmeter serve` to measure the net group against, `HOST[:PORT]`.
    #[arg(long, value_name = "HOST[:PORT]")]
    pub remote: Option<String>,
    /// Token the remote `sysmeter serve --token T` wants.
    #[arg(long, value_name = "T", env = "SYSMETER_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// Directory for the fs group's test files (default: a temporary directory under the
    /// working directory, so the file system measured is the one you are on).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// A network or FUSE mount for fs.remote_read (NFS, SSHFS, …).
    #[arg(long, value_name = "DIR")]
    pub remote_dir: Option<PathBuf>,
    /// Seed of the bootstrap resampling (statistics are reproducible for a seed).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// In the terminal, every table in full (every metric, every point of every series)
    /// instead of the concise view; other formats always hold everything.
    #[arg(long, short = 'v')]
    pub full: bool,
    /// Keep the raw samples in a PostgreSQL fleet store too (by default it keeps the
    /// summaries only; an SQLite file always keeps them).
    #[arg(long)]
    pub with_samples: bool,
}

/// `sysmeter history`.
#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// Database to read.
    #[command(flatten)]
    pub db: DbArgs,
    /// Show at most N runs.
    #[arg(long, default_value_t = 20)]
    pub limit: usize,
    /// In a fleet (PostgreSQL) database, list every machine's runs, not only this one's
    /// (an SQLite database always lists all its runs).
    #[arg(long)]
    pub all_hosts: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = SimpleFormat::Text)]
    pub format: SimpleFormat,
}

/// `sysmeter show`.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// Run id, unique id prefix, `latest`, `latest~N`, or the latest of a kind: `latest:KIND`
    /// / `latest:KIND~N` (e.g. `latest:profile`).
    #[arg(default_value = "latest")]
    pub run: String,
    /// Database to read.
    #[command(flatten)]
    pub db: DbArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Every table in full (the terminal view; other formats always hold everything).
    #[arg(long, short = 'v', conflicts_with = "summary")]
    pub full: bool,
    /// Only "this machine at a glance": the figures people quote, three findings and the
    /// noise state (text, or one table with --format markdown).
    #[arg(long)]
    pub summary: bool,
}

/// Parse a size such as `4096`, `64K`, `512M`, `2G` (binary multiples) into bytes.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let (digits, unit) = t.split_at(t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len()));
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("'{text}' is not a size; write e.g. 4096, 64K, 512M or 2G"))?;
    let shift = match unit
        .trim_end_matches(['i', 'B', 'b'])
        .to_ascii_uppercase()
        .as_str()
    {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        "T" => 40,
        _ => return Err(format!("'{text}' has an unknown unit; use K, M, G or T")),
    };
    n.checked_mul(1u64 << shift)
        .filter(|&b| b > 0)
        .ok_or_else(|| format!("'{text}' is not a usable size; write e.g. 512M"))
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes_parse_with_binary_units() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("64K"), Ok(64 << 10));
        assert_eq!(parse_size("512MiB"), Ok(512 << 20));
        assert_eq!(parse_size("2g"), Ok(2 << 30));
        assert!(parse_size("").is_err());
        assert!(parse_size("0").is_err());
        assert!(parse_size("12X").is_err());
        assert!(parse_size("M").is_err());
    }
}
