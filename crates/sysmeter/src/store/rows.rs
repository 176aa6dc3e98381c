//! The rows of the three tables as plain values, and their conversion from and to the result
//! model. Both backends bind and read exactly these values, which is what keeps their schemas
//! the same in spirit: integers as i64 (ns, bytes, counts), statistics as nullable doubles
//! (NaN is stored as NULL, as SQLite must), raw samples as little-endian f64 bytes, and the
//! parts of the model nobody queries as JSON text.
//!
//! No SQL statements and no formatting for people live here.

use std::path::Path;

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::StoreError;
use super::rows_extra::{MachineColumn, MetricExtra};
use crate::model::{ExperimentResult, Metric, RunRecord, Summary};

/// A `runs` row.
#[derive(Debug, Clone)]
pub(super) struct RunRow {
    pub id: String,
    pub schema: i64,
    pub kind: String,
    pub started_ns: i64,
    pub finished_ns: Option<i64>,
    pub interrupted: bool,
    pub tool_version: String,
    pub hostname: String,
    pub host_json: String,
    pub config_json: String,
}

/// The names, units and medians (`None` for NaN) of a summary's metrics, in order.
pub(super) type Medians = (Vec<String>, Vec<String>, Vec<Option<f64>>);

/// A `results` row; `metrics` are its `metrics` rows (empty when read, until attached).
#[derive(Debug, Clone)]
pub(super) struct ResultRow {
    pub seq: i64,
    pub exp_id: String,
    pub status: String,
    pub elapsed_ns: i64,
    pub about_json: String,
    pub estimates_json: String,
    pub series_json: String,
    pub findings_json: String,
    pub skip_json: Option<String>,
    pub error: Option<String>,
    pub artifacts_json: String,
    pub machine_json: Option<String>,
    /// A result stored as its summary (`store/summary.rs`): the compressed summary, which
    /// then holds the metrics (no `metrics` rows) and the JSON columns above are empty.
    pub summary: Option<Vec<u8>>,
    /// Its metrics' names, units and medians, for the fleet's SQL (written only).
    pub medians: Option<Medians>,
    pub metrics: Vec<MetricRow>,
}

/// A `metrics` row.
#[derive(Debug, Clone)]
pub(super) struct MetricRow {
    pub seq: i64,
    pub idx: i64,
    pub name: String,
    pub unit: String,
    pub n: i64,
    /// min, p5, median, mean, p95, p99, max, stddev, cv, ci_lo, ci_hi (the column order).
    pub stats: [Option<f64>; 11],
    pub outliers: i64,
    pub cycles_json: Option<String>,
    pub extra_json: Option<String>,
    pub subtracted_overhead_ns: Option<f64>,
    pub ops_per_sample: i64,
    pub note: Option<String>,
    pub samples: Vec<u8>,
}

/// Turns model values into rows, naming the run and field when one cannot be encoded.
pub(super) struct Encoder<'a> {
    pub db: &'a Path,
    pub run_id: &'a str,
    /// Whether the whole result is written with its raw samples (`Store::keep_samples`);
    /// else its summary (`store/summary.rs`).
    pub samples: bool,
}

impl Encoder<'_> {
    fn error(&self, field: &str, cause: String) -> StoreError {
        StoreError::Encode {
            run_id: self.run_id.to_string(),
            field: field.to_string(),
            cause,
            path: self.db.to_path_buf(),
        }
    }

    /// A JSON column.
    fn json<T: Serialize + ?Sized>(&self, field: &str, value: &T) -> Result<String, StoreError> {
        serde_json::to_string(value).map_err(|e| self.error(field, e.to_string()))
    }

    /// A `usize`/`u64` of the model as an i64 column; only fails past 2^63.
    fn int<T: TryInto<i64> + Copy + std::fmt::Display>(
        &self,
        field: &str,
        v: T,
    ) -> Result<i64, StoreError> {
        v.try_into()
            .map_err(|_| self.error(field, format!("{v} does not fit a 64-bit integer")))
    }

    /// The `runs` row of `run` (its results are separate rows).
    pub fn run(&self, run: &RunRecord) -> Result<RunRow, StoreError> {
        Ok(RunRow {
            id: run.id.clone(),
            schema: i64::from(run.schema),
            kind: run.kind.as_str().to_string(),
            started_ns: run.started_ns,
            finished_ns: run.finished_ns,
            interrupted: run.interrupted,
            tool_version: run.tool_version.clone(),
            hostname: run.host.hostname.clone(),
            host_json: self.json("host", &run.host)?,
            config_json: self.json("config", &run.config)?,
        })
    }

    /// The `results` row of result number `seq`, with its `metrics` rows.
    pub fn result(&self, seq: usize, r: &ExperimentResult) -> Result<ResultRow, StoreError> {
        if !self.samples {
            return self.summary(seq, r);
        }
        let seq = self.int("seq", seq)?;
        let metrics = r
            .metrics
            .iter()
            .enumerate()
            .map(|(idx, m)| self.metric(seq, idx, m))
            .collect::<Result<_, _>>()?;
        Ok(ResultRow {
            seq,
            exp_id: r.id.clone(),
            status: r.status.as_str().to_string(),
            elapsed_ns: self.int("elapsed_ns", r.elapsed_ns)?,
            about_json: self.json("about", &r.about)?,
            estimates_json: self.json("estimates", &r.estimates)?,
            series_json: self.json("series", &r.series)?,
            findings_json: self.json("findings", &r.findings)?,
            skip_json: r.skip.as_ref().map(|s| self.json("skip", s)).transpose()?,
            error: r.error.clone(),
            artifacts_json: self.json("artifacts", &r.artifacts)?,
            machine_json: match (&r.machine, r.round_machines.is_empty(), &r.session) {
                (None, true, None) => None,
                _ => Some(self.json("machine", &MachineColumn::of(r))?),
            },
            summary: None,
            medians: None,
            metrics,
        })
    }

    /// The row of a result stored as its summary: no metrics rows, empty JSON columns.
    fn summary(&self, seq: usize, r: &ExperimentResult) -> Result<ResultRow, StoreError> {
        Ok(ResultRow {
            seq: self.int("seq", seq)?,
            exp_id: r.id.clone(),
            status: r.status.as_str().to_string(),
            elapsed_ns: self.int("elapsed_ns", r.elapsed_ns)?,
            about_json: String::new(),
            estimates_json: String::new(),
            series_json: String::new(),
            findings_json: String::new(),
            skip_json: r.skip.as_ref().map(|s| self.json("skip", s)).transpose()?,
            error: r.error.clone(),
            artifacts_json: String::new(),
            machine_json: None,
            summary: Some(super::summary::encode(r).map_err(|e| self.error("summary", e))?),
            medians: Some(super::summary::medians(r)),
            metrics: Vec::new(),
        })
    }

    fn metric(&self, seq: i64, idx: usize, m: &Metric) -> Result<MetricRow, StoreError> {
        let field = |what: &str| format!("{what} of metric {}", m.name);
        let s = &m.summary;
        let stats = [
            s.min, s.p5, s.median, s.mean, s.p95, s.p99, s.max, s.stddev, s.cv, s.ci95.0, s.ci95.1,
        ];
        Ok(MetricRow {
            seq,
            idx: self.int(&field("index"), idx)?,
            name: m.name.clone(),
            unit: m.unit.as_str().to_string(),
            n: self.int(&field("n"), s.n)?,
            stats: stats.map(not_nan),
            outliers: self.int(&field("outliers"), s.outliers)?,
            cycles_json: m
                .cycles
                .as_ref()
                .map(|c| self.json(&field("cycles"), c))
                .transpose()?,
            extra_json: match (&m.core_cycles, &m.rounds, &m.degenerate, m.at_least) {
                (None, None, None, false) => None,
                _ => Some(self.json(&field("extra"), &MetricExtra::of(m))?),
            },
            subtracted_overhead_ns: not_nan(m.subtracted_overhead_ns),
            ops_per_sample: self.int(&field("ops_per_sample"), m.ops_per_sample)?,
            note: m.note.clone(),
            samples: samples_to_blob(&m.samples),
        })
    }
}

/// NaN as NULL: SQLite cannot store NaN, and PostgreSQL follows so that queries like
/// `avg(median)` behave the same on both.
fn not_nan(x: f64) -> Option<f64> {
    (!x.is_nan()).then_some(x)
}

/// Raw samples as consecutive little-endian f64: exact, compact, and independent of the
/// platform that reads them back.
pub(super) fn samples_to_blob(samples: &[f64]) -> Vec<u8> {
    samples.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Inverse of [`samples_to_blob`]; `None` if the length is not a multiple of 8.
pub(super) fn blob_to_samples(blob: &[u8]) -> Option<Vec<f64>> {
    let chunks = blob.chunks_exact(8);
    if !chunks.remainder().is_empty() {
        return None;
    }
    chunks
        .map(|c| c.try_into().ok().map(f64::from_le_bytes))
        .collect()
}

/// Turns stored rows back into model values, naming the run and column when it cannot.
pub(super) struct Decoder<'a> {
    pub db: &'a Path,
    pub id: &'a str,
}

impl Decoder<'_> {
    pub(super) fn error(&self, field: &str, detail: String) -> StoreError {
        StoreError::Decode {
            run_id: self.id.to_string(),
            field: field.to_string(),
            detail,
            path: self.db.to_path_buf(),
        }
    }

    /// A JSON column.
    pub(super) fn json<T: DeserializeOwned>(
        &self,
        field: &str,
        text: &str,
    ) -> Result<T, StoreError> {
        serde_json::from_str(text).map_err(|e| self.error(field, e.to_string()))
    }

    /// An enum stored as its lower-case name (kind, status, unit). Parsed through serde so
    /// the names have one source of truth: the model's `#[serde(rename_all)]`.
    pub(super) fn word<T: DeserializeOwned>(
        &self,
        field: &str,
        word: String,
    ) -> Result<T, StoreError> {
        serde_json::from_value(serde_json::Value::String(word))
            .map_err(|e| self.error(field, e.to_string()))
    }

    /// An i64 column holding a `usize`/`u64`/`u32` of the model.
    fn uint<T: TryFrom<i64>>(&self, field: &str, v: i64) -> Result<T, StoreError> {
        T::try_from(v).map_err(|_| self.error(field, format!("{v} is out of range")))
    }

    /// The run of `row` with `results` (each with its metrics already attached).
    pub fn run(
        &self,
        row: RunRow,
        results: Vec<ExperimentResult>,
    ) -> Result<RunRecord, StoreError> {
        Ok(RunRecord {
            schema: self.uint("schema", row.schema)?,
            kind: self.word("kind", row.kind)?,
            started_ns: row.started_ns,
            finished_ns: row.finished_ns,
            interrupted: row.interrupted,
            tool_version: row.tool_version,
            host: self.json("host_json", &row.host_json)?,
            config: self.json("config_json", &row.config_json)?,
            id: row.id,
            results,
        })
    }

    /// The result of `row` with its `metrics` rows.
    pub fn result(&self, row: ResultRow) -> Result<ExperimentResult, StoreError> {
        let field = |what: &str| format!("{what} of result {} ({})", row.seq, row.exp_id);
        if let Some(blob) = &row.summary {
            let mut r =
                super::summary::decode(blob).map_err(|e| self.error(&field("summary"), e))?;
            r.id = row.exp_id.clone();
            r.status = self.word(&field("status"), row.status.clone())?;
            r.skip = match &row.skip_json {
                Some(text) => Some(self.json(&field("skip_json"), text)?),
                None => None,
            };
            r.error = row.error.clone();
            r.elapsed_ns = self.uint(&field("elapsed_ns"), row.elapsed_ns)?;
            return Ok(r);
        }
        let skip = match &row.skip_json {
            Some(text) => Some(self.json(&field("skip_json"), text)?),
            None => None,
        };
        let metrics = row
            .metrics
            .into_iter()
            .map(|m| self.metric(m))
            .collect::<Result<_, _>>()?;
        let machine: MachineColumn = match &row.machine_json {
            Some(text) => self.json(&field("machine_json"), text)?,
            None => MachineColumn::default(),
        };
        Ok(ExperimentResult {
            status: self.word(&field("status"), row.status.clone())?,
            about: self.json(&field("about_json"), &row.about_json)?,
            estimates: self.json(&field("estimates_json"), &row.estimates_json)?,
            metrics,
            series: self.json(&field("series_json"), &row.series_json)?,
            findings: self.json(&field("findings_json"), &row.findings_json)?,
            skip,
            error: row.error,
            elapsed_ns: self.uint(&field("elapsed_ns"), row.elapsed_ns)?,
            artifacts: self.json(&field("artifacts_json"), &row.artifacts_json)?,
            machine: machine.machine,
            round_machines: machine.round_machines,
            session: machine.session,
            id: row.exp_id,
        })
    }

    fn metric(&self, row: MetricRow) -> Result<Metric, StoreError> {
        let field = |what: &str| format!("{what} of metric '{}'", row.name);
        let samples = blob_to_samples(&row.samples).ok_or_else(|| {
            let detail = format!("{} bytes, not a whole number of f64", row.samples.len());
            self.error(&field("samples"), detail)
        })?;
        // The column order of `MetricRow::stats`.
        let s = row.stats.map(|x| x.unwrap_or(f64::NAN));
        let summary = Summary {
            n: self.uint(&field("n"), row.n)?,
            min: s[0],
            p5: s[1],
            median: s[2],
            mean: s[3],
            p95: s[4],
            p99: s[5],
            max: s[6],
            stddev: s[7],
            cv: s[8],
            ci95: (s[9], s[10]),
            outliers: self.uint(&field("outliers"), row.outliers)?,
        };
        let cycles = match &row.cycles_json {
            Some(text) => Some(self.json(&field("cycles_json"), text)?),
            None => None,
        };
        let extra: MetricExtra = match &row.extra_json {
            Some(text) => self.json(&field("extra_json"), text)?,
            None => MetricExtra::default(),
        };
        Ok(Metric {
            core_cycles: extra.core_cycles,
            rounds: extra.rounds,
            degenerate: extra.degenerate,
            at_least: extra.at_least,
            unit: self.word(&field("unit"), row.unit)?,
            summary,
            cycles,
            subtracted_overhead_ns: row.subtracted_overhead_ns.unwrap_or(f64::NAN),
            ops_per_sample: self.uint(&field("ops_per_sample"), row.ops_per_sample)?,
            note: row.note,
            samples,
            name: row.name,
            run_to_run: None,
        })
    }
}
