//! Conversions between table rows and the result model, shared by `read` and `write`:
//! integer and REAL columns (SQLite has only i64 and NaN-less doubles), raw-sample BLOBs, and
//! the raw rows of `results` and `metrics` before their text columns are decoded.
//!
//! No SQL statements and no formatting for people live here.

use rusqlite::Row;
use serde::de::DeserializeOwned;

use super::{Store, StoreError};
use crate::model::{ExperimentResult, Metric, Summary};

/// A `usize`/`u64` of the model as an SQLite integer (i64). rusqlite is built without its
/// `fallible_uint` feature, so the range check is done here; it only fails past 2^63.
pub(super) fn int<T: TryInto<i64> + Copy + std::fmt::Display>(v: T) -> rusqlite::Result<i64> {
    v.try_into().map_err(|_| {
        rusqlite::Error::ToSqlConversionFailure(
            format!("{v} does not fit an SQLite integer").into(),
        )
    })
}

/// Raw samples as consecutive little-endian f64: exact, compact, and independent of the
/// platform that reads them back.
pub(super) fn samples_to_blob(samples: &[f64]) -> Vec<u8> {
    samples.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Turns stored text back into model values, naming the run and column when it cannot.
pub(super) struct Decoder<'a> {
    pub(super) store: &'a Store,
    pub(super) id: &'a str,
}

impl Decoder<'_> {
    pub(super) fn error(&self, field: &str, detail: String) -> StoreError {
        StoreError::Decode {
            run_id: self.id.to_string(),
            field: field.to_string(),
            detail,
            path: self.store.path.clone(),
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
}

/// A `metrics` row before its text and BLOB columns are decoded.
pub(super) struct RawMetric {
    pub(super) seq: usize,
    name: String,
    unit: String,
    summary: Summary,
    cycles_json: Option<String>,
    subtracted_overhead_ns: f64,
    ops_per_sample: u64,
    note: Option<String>,
    samples: Vec<u8>,
}

impl RawMetric {
    pub(super) fn from_row(row: &Row<'_>) -> rusqlite::Result<RawMetric> {
        Ok(RawMetric {
            seq: uint(row, 0)?,
            name: row.get(1)?,
            unit: row.get(2)?,
            summary: Summary {
                n: uint(row, 3)?,
                min: real(row, 4)?,
                p5: real(row, 5)?,
                median: real(row, 6)?,
                mean: real(row, 7)?,
                p95: real(row, 8)?,
                p99: real(row, 9)?,
                max: real(row, 10)?,
                stddev: real(row, 11)?,
                cv: real(row, 12)?,
                ci95: (real(row, 13)?, real(row, 14)?),
                outliers: uint(row, 15)?,
            },
            cycles_json: row.get(16)?,
            subtracted_overhead_ns: real(row, 17)?,
            ops_per_sample: uint(row, 18)?,
            note: row.get(19)?,
            samples: row.get(20)?,
        })
    }

    pub(super) fn decode(self, d: &Decoder<'_>) -> Result<Metric, StoreError> {
        let field = |what: &str| format!("{what} of metric '{}'", self.name);
        let cycles = match &self.cycles_json {
            Some(text) => Some(d.json(&field("cycles_json"), text)?),
            None => None,
        };
        let samples = blob_to_samples(&self.samples).ok_or_else(|| {
            let detail = format!("{} bytes, not a whole number of f64", self.samples.len());
            d.error(&field("samples"), detail)
        })?;
        Ok(Metric {
            unit: d.word(&field("unit"), self.unit)?,
            name: self.name,
            summary: self.summary,
            cycles,
            subtracted_overhead_ns: self.subtracted_overhead_ns,
            ops_per_sample: self.ops_per_sample,
            note: self.note,
            samples,
        })
    }
}

/// A REAL column of the statistics. SQLite stores NaN as NULL, so NULL reads back as NaN.
pub(super) fn real(row: &Row<'_>, idx: usize) -> rusqlite::Result<f64> {
    Ok(row.get::<_, Option<f64>>(idx)?.unwrap_or(f64::NAN))
}

/// An INTEGER column holding a `usize`/`u64` of the model. rusqlite is built without its
/// `fallible_uint` feature, so the range check is done here.
pub(super) fn uint<T: TryFrom<i64>>(row: &Row<'_>, idx: usize) -> rusqlite::Result<T> {
    let v: i64 = row.get(idx)?;
    T::try_from(v).map_err(|_| rusqlite::Error::IntegralValueOutOfRange(idx, v))
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

/// A `results` row before its JSON columns are decoded.
pub(super) struct RawResult {
    pub(super) seq: usize,
    exp_id: String,
    status: String,
    elapsed_ns: u64,
    json: [String; 4],
    skip_json: Option<String>,
    artifacts_json: String,
    error: Option<String>,
}

impl RawResult {
    pub(super) fn from_row(row: &Row<'_>) -> rusqlite::Result<RawResult> {
        Ok(RawResult {
            seq: uint(row, 0)?,
            exp_id: row.get(1)?,
            status: row.get(2)?,
            elapsed_ns: uint(row, 3)?,
            json: [row.get(4)?, row.get(5)?, row.get(6)?, row.get(7)?],
            skip_json: row.get(8)?,
            error: row.get(9)?,
            artifacts_json: row.get(10)?,
        })
    }

    pub(super) fn decode(
        self,
        d: &Decoder<'_>,
        metrics: Vec<Metric>,
    ) -> Result<ExperimentResult, StoreError> {
        let field = |what: &str| format!("{what} of result {} ({})", self.seq, self.exp_id);
        let [about, estimates, series, findings] = &self.json;
        let skip = match &self.skip_json {
            Some(text) => Some(d.json(&field("skip_json"), text)?),
            None => None,
        };
        Ok(ExperimentResult {
            status: d.word(&field("status"), self.status.clone())?,
            about: d.json(&field("about_json"), about)?,
            estimates: d.json(&field("estimates_json"), estimates)?,
            metrics,
            series: d.json(&field("series_json"), series)?,
            findings: d.json(&field("findings_json"), findings)?,
            skip,
            error: self.error,
            elapsed_ns: self.elapsed_ns,
            artifacts: d.json(&field("artifacts_json"), &self.artifacts_json)?,
            id: self.exp_id,
        })
    }
}
