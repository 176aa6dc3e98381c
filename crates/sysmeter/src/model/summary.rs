//! [`Summary`]: the descriptive statistics of a sample set, and the one rule for a number
//! that is not a number. A statistic can be NaN (the CV of samples whose mean is 0, a CI the
//! bootstrap could not form); JSON has no NaN, so it is written as `null` and read back from
//! `null` as NaN — in the store's JSON columns and in `--format json` files given to
//! `compare` alike.
//!
//! Pure data: depends on nothing but serde.

use serde::{Deserialize, Deserializer, Serialize};

/// Descriptive statistics of a sample set (see `stats`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
pub struct Summary {
    /// Number of samples.
    pub n: usize,
    /// Minimum.
    #[serde(deserialize_with = "f64_or_nan")]
    pub min: f64,
    /// 5th percentile.
    #[serde(deserialize_with = "f64_or_nan")]
    pub p5: f64,
    /// Median.
    #[serde(deserialize_with = "f64_or_nan")]
    pub median: f64,
    /// Arithmetic mean.
    #[serde(deserialize_with = "f64_or_nan")]
    pub mean: f64,
    /// 95th percentile.
    #[serde(deserialize_with = "f64_or_nan")]
    pub p95: f64,
    /// 99th percentile.
    #[serde(deserialize_with = "f64_or_nan")]
    pub p99: f64,
    /// Maximum.
    #[serde(deserialize_with = "f64_or_nan")]
    pub max: f64,
    /// Sample standard deviation.
    #[serde(deserialize_with = "f64_or_nan")]
    pub stddev: f64,
    /// Coefficient of variation (stddev / mean).
    #[serde(deserialize_with = "f64_or_nan")]
    pub cv: f64,
    /// Bootstrap 95% confidence interval of the median, (low, high).
    #[serde(deserialize_with = "pair_or_nan")]
    pub ci95: (f64, f64),
    /// Samples whose MAD-based modified z-score exceeds 3.5.
    pub outliers: usize,
}

impl Summary {
    /// Every value multiplied by `k > 0`: the summary of the samples × `k`, e.g. in another
    /// unit (order statistics, mean, spread and the bootstrap CI all scale; the CV and the
    /// counts do not).
    pub fn scaled(&self, k: f64) -> Summary {
        Summary {
            min: self.min * k,
            p5: self.p5 * k,
            median: self.median * k,
            mean: self.mean * k,
            p95: self.p95 * k,
            p99: self.p99 * k,
            max: self.max * k,
            stddev: self.stddev * k,
            ci95: (self.ci95.0 * k, self.ci95.1 * k),
            ..*self
        }
    }
}

/// A number, or NaN where the JSON says `null` (serde_json writes NaN as `null`).
pub fn f64_or_nan<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

/// A pair of numbers, each NaN where the JSON says `null`.
pub fn pair_or_nan<'de, D: Deserializer<'de>>(d: D) -> Result<(f64, f64), D::Error> {
    let (a, b) = <(Option<f64>, Option<f64>)>::deserialize(d)?;
    Ok((a.unwrap_or(f64::NAN), b.unwrap_or(f64::NAN)))
}

/// A list of numbers, each NaN where the JSON says `null`.
pub fn vec_or_nan<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<f64>, D::Error> {
    let v = Vec::<Option<f64>>::deserialize(d)?;
    Ok(v.into_iter().map(|x| x.unwrap_or(f64::NAN)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nan_statistics_survive_json() {
        let s = Summary {
            n: 3,
            cv: f64::NAN,
            ci95: (f64::NAN, 2.0),
            ..Summary::default()
        };
        let text = serde_json::to_string(&s).expect("serialises");
        assert!(text.contains("\"cv\":null"), "{text}");
        let back: Summary = serde_json::from_str(&text).expect("reads null as NaN");
        assert!(back.cv.is_nan() && back.ci95.0.is_nan());
        assert_eq!((back.n, back.ci95.1), (3, 2.0));
    }
}
