//! Command-line definitions (clap derive) and nothing else: every subcommand's flags, with
//! the help text users read. Conversion into validated configuration happens in `commands`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::report::Format;

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
}

/// Where results are stored.
#[derive(Debug, Args, Clone)]
pub struct DbArgs {
    /// SQLite database file (default: $XDG_DATA_HOME/sysmeter/sysmeter.db or
    /// ~/.local/share/sysmeter/sysmeter.db).
    #[arg(long, env = "SYSMETER_DB", value_name = "PATH")]
    pub db: Option<PathBuf>,
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
    /// Groups (cpu, os) or experiment ids (os.syscall) to run; none = the default set.
    #[arg(value_name = "GROUP|ID")]
    pub names: Vec<String>,
    /// Run only these experiment ids (repeatable, or comma separated).
    #[arg(long, value_name = "ID", value_delimiter = ',')]
    pub only: Vec<String>,
    /// Smoke-test budgets: the whole set in seconds, wider confidence intervals.
    #[arg(long, conflicts_with = "thorough")]
    pub quick: bool,
    /// Longer budgets and more samples.
    #[arg(long)]
    pub thorough: bool,
    /// Output format of the results on stdout.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Write the results to FILE instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Database to store the run in.
    #[command(flatten)]
    pub db: DbArgs,
    /// Do not store the run.
    #[arg(long, conflicts_with = "db")]
    pub no_store: bool,
    /// CPU to pin the measuring thread to (default: the last CPU this process may use).
    #[arg(long, value_name = "N")]
    pub cpu: Option<usize>,
    /// Seed of the bootstrap resampling (statistics are reproducible for a seed).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
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
    /// Output format.
    #[arg(long, value_enum, default_value_t = SimpleFormat::Text)]
    pub format: SimpleFormat,
}

/// `sysmeter show`.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// Run id, unique id prefix, `latest` or `latest~N`.
    #[arg(default_value = "latest")]
    pub run: String,
    /// Database to read.
    #[command(flatten)]
    pub db: DbArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}
