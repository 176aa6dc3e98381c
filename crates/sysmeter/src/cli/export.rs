//! Arguments of `sysmeter export`: a stored run in a machine-readable format (OpenMetrics
//! for Prometheus' node_exporter textfile collector, the JSON/CSV of `show`, or the file a
//! viewer opens: pprof, speedscope, callgrind, Chrome trace, Firefox Profiler), to stdout or
//! atomically to a file.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::DbArgs;

/// `sysmeter export [RUN]`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Run id, unique id prefix, `latest`, `latest~N`, or the latest of a kind: `latest:KIND`
    /// / `latest:KIND~N` (e.g. `latest:profile`).
    #[arg(default_value = "latest")]
    pub run: String,
    /// Shorthand for `--format openmetrics`.
    #[arg(long, conflicts_with = "format")]
    pub openmetrics: bool,
    /// Export format.
    #[arg(long, value_enum, default_value_t = ExportFormat::Json)]
    pub format: ExportFormat,
    /// Write to FILE (replaced atomically, so a textfile collector never reads half a file)
    /// instead of stdout. Binary formats (pprof) need it, or a stdout that is not a terminal.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Database to read.
    #[command(flatten)]
    pub db: DbArgs,
}

/// Formats of `sysmeter export`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// Prometheus text exposition / OpenMetrics 1.0, ending in `# EOF`.
    Openmetrics,
    /// The run record (docs/json-schema.md).
    Json,
    /// One row per metric and per curve point.
    Csv,
    /// pprof's gzipped profile.proto (binary), for `go tool pprof`, Pyroscope, Grafana:
    /// profile (on/off-CPU), alloc (Go heap profile), locks (Go mutex profile).
    Pprof,
    /// speedscope's JSON file format, for speedscope.app: profile (on/off-CPU), alloc.
    Speedscope,
    /// valgrind's callgrind format (KCachegrind, callgrind_annotate), of `calls --functions`.
    Callgrind,
    /// Chrome trace events (ui.perfetto.dev, chrome://tracing), of `run`'s /proc timeline.
    ChromeTrace,
    /// The Firefox Profiler's processed format (profiler.firefox.com), of `profile`.
    Firefox,
}

impl ExportFormat {
    /// Whether the format is binary (never written to a terminal).
    pub fn is_binary(self) -> bool {
        self == ExportFormat::Pprof
    }
}

impl ExportArgs {
    /// The format asked for, `--openmetrics` included.
    pub fn effective_format(&self) -> ExportFormat {
        if self.openmetrics {
            ExportFormat::Openmetrics
        } else {
            self.format
        }
    }
}
