//! Knee detection: where the cost per element rises abruptly — a working set outgrowing a
//! cache or RAM (thrashing), or a steeper term taking over.
//!
//! The rule, on the cost per element c = t/unit(N) (unit(N) = N: the time per element):
//! 1. Work in log-log space, u = ln N and v = ln c: a power law is a straight line there.
//! 2. Fit the best two-segment model: split the sizes in two (each side at least
//!    `min_points` sizes) and fit a least-squares line to each side; keep the split with the
//!    least total residual. The segments need not meet: a cache overflow is a *step* of the
//!    cost per element (flat, a short ramp, flat again), which two separate lines follow
//!    closely and one bent line does not. (DESIGN §5 asks for a two-segment fit "with a
//!    minimum slope change"; a step has no slope change, so the rule asks for a minimum
//!    *rise* instead, which covers both the step and the bend.)
//! 3. The rise is how much higher the cost is after the split than the first segment's
//!    trend says: the larger of the jump between the two lines at the split (midway between
//!    the last size before and the first after) and the measured cost at the largest size
//!    over the first segment's trend there. When the first segment falls (start-up being
//!    amortised over more elements), its trend is taken as flat from the split on, so a fall
//!    that merely stops does not count as a rise.
//! 4. It is a knee when the rise is at least `min_rise` (1.5×), the two segments follow the
//!    curve clearly better than one line (residual sum of squares at most `max_rss_ratio`,
//!    0.5, of the line's), and no complexity class explains the times: the best class fit
//!    misses by at least `min_baseline_nrms` (5%) and the two segments by at most
//!    `max_nrms_ratio` (0.7×) of that. The last condition keeps start-up from passing as a
//!    knee: the fixed cost of a process makes t/N of an O(N²) program fall, then rise, but
//!    t = a·N² + b fits that to within the noise.
//!
//! Pure: depends on nothing but the standard library.

/// Knobs of [`detect`]; [`Default`] gives the documented rule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KneeRule {
    /// Smallest rise of the cost per element over the first segment's trend.
    pub min_rise: f64,
    /// Largest residual sum of squares of the two segments, as a share of one line's.
    pub max_rss_ratio: f64,
    /// Fewest sizes in each segment.
    pub min_points: usize,
    /// Smallest nRMS of the best class fit for a knee to be considered at all.
    pub min_baseline_nrms: f64,
    /// Largest nRMS of the two segments as a share of the best class fit's.
    pub max_nrms_ratio: f64,
}

impl Default for KneeRule {
    fn default() -> KneeRule {
        KneeRule {
            min_rise: 1.5,
            max_rss_ratio: 0.5,
            min_points: 3,
            min_baseline_nrms: 0.05,
            max_nrms_ratio: 0.7,
        }
    }
}

/// The best two-segment split of the curve, knee or not.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Split {
    /// Largest size of the first segment: the cost rises past it.
    pub at: f64,
    /// Smallest size of the second segment.
    pub next: f64,
    /// Log-log slope of the cost per element in the first segment.
    pub slope_before: f64,
    /// Log-log slope in the second segment.
    pub slope_after: f64,
    /// Cost after the split ÷ the first segment's trend (rule step 3).
    pub rise: f64,
    /// Residual sum of squares of the two segments ÷ that of one line (≤ 1).
    pub rss_ratio: f64,
    /// RMS relative error of the two segments as a model of the times (comparable with a
    /// class fit's nRMS).
    pub nrms: f64,
}

/// What [`detect`] found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum KneeScan {
    /// Too few sizes for two segments of `min_points` each.
    TooFewPoints {
        /// Usable sizes given.
        got: usize,
        /// Sizes needed.
        needed: usize,
    },
    /// The best split is a knee by the rule.
    Knee(Split),
    /// The best split is not a knee, for the reason given.
    NoKnee(Split, NoKnee),
}

/// Which condition of the rule (module step 4) the best split failed, first one first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoKnee {
    /// The cost rises less than `min_rise`.
    SmallRise,
    /// Two segments are not clearly better than one line.
    OneLineSuffices,
    /// The best complexity class already fits within `min_baseline_nrms`.
    ClassFits,
    /// The two segments do not fit clearly better than the best class.
    NoBetterThanClass,
}

/// A least-squares line v = level + slope·(u − u0) and its residual sum of squares.
#[derive(Debug, Clone, Copy)]
struct Line {
    u0: f64,
    level: f64,
    slope: f64,
    rss: f64,
}

impl Line {
    fn through(pts: &[(f64, f64)]) -> Line {
        let n = pts.len() as f64;
        let u0 = pts.iter().map(|p| p.0).sum::<f64>() / n;
        let level = pts.iter().map(|p| p.1).sum::<f64>() / n;
        let suu: f64 = pts.iter().map(|p| (p.0 - u0).powi(2)).sum();
        let suv: f64 = pts.iter().map(|p| (p.0 - u0) * (p.1 - level)).sum();
        let slope = if suu > 0.0 { suv / suu } else { 0.0 };
        let mut line = Line {
            u0,
            level,
            slope,
            rss: 0.0,
        };
        line.rss = pts.iter().map(|p| (p.1 - line.at(p.0)).powi(2)).sum();
        line
    }

    fn at(&self, u: f64) -> f64 {
        self.level + self.slope * (u - self.u0)
    }
}

/// Looks for a knee in the times `times[i]` at `sizes[i]` (any order; points whose size, time
/// or cost is not positive and finite are ignored), on the cost per element t/`unit`(N).
/// `baseline_nrms` is the nRMS of the best complexity-class fit of the same times.
pub fn detect(
    sizes: &[f64],
    times: &[f64],
    unit: impl Fn(f64) -> f64,
    baseline_nrms: f64,
    rule: KneeRule,
) -> KneeScan {
    let mut pts: Vec<(f64, f64)> = sizes
        .iter()
        .zip(times)
        .map(|(&n, &t)| (n, t / unit(n)))
        .filter(|&(n, c)| n.is_finite() && c.is_finite() && n > 0.0 && c > 0.0)
        .map(|(n, c)| (n.ln(), c.ln()))
        .collect();
    pts.sort_by(|x, y| x.0.total_cmp(&y.0));
    let m = rule.min_points.max(2);
    let Some(split) = best_split(&pts, m) else {
        return KneeScan::TooFewPoints {
            got: pts.len(),
            needed: 2 * m,
        };
    };
    let why = if split.rise < rule.min_rise {
        Some(NoKnee::SmallRise)
    } else if split.rss_ratio > rule.max_rss_ratio {
        Some(NoKnee::OneLineSuffices)
    } else if baseline_nrms < rule.min_baseline_nrms {
        Some(NoKnee::ClassFits)
    } else if split.nrms > rule.max_nrms_ratio * baseline_nrms {
        Some(NoKnee::NoBetterThanClass)
    } else {
        None
    };
    match why {
        None => KneeScan::Knee(split),
        Some(why) => KneeScan::NoKnee(split, why),
    }
}

/// The split of `pts` (sorted by u) into two lines with the least total residual.
fn best_split(pts: &[(f64, f64)], m: usize) -> Option<Split> {
    if pts.len() < 2 * m {
        return None;
    }
    let (k, left, right) = (m..=pts.len() - m)
        .map(|k| (k, Line::through(&pts[..k]), Line::through(&pts[k..])))
        .min_by(|a, b| (a.1.rss + a.2.rss).total_cmp(&(b.1.rss + b.2.rss)))?;
    let one = Line::through(pts).rss;
    let (u_last, u_next) = (pts[k - 1].0, pts[k].0);
    let u_mid = (u_last + u_next) / 2.0;
    // The first segment's trend; flat from the split on when it falls (module step 3).
    let trend = |u: f64| {
        if left.slope < 0.0 {
            left.at(u_mid.min(u))
        } else {
            left.at(u)
        }
    };
    let (u_max, v_max) = pts[pts.len() - 1];
    let jump = right.at(u_mid) - trend(u_mid);
    let end = v_max - trend(u_max);
    let rel2: f64 = pts
        .iter()
        .enumerate()
        .map(|(i, &(u, v))| {
            let fit = if i < k { left.at(u) } else { right.at(u) };
            (1.0 - (fit - v).exp()).powi(2)
        })
        .sum();
    Some(Split {
        at: u_last.exp(),
        next: u_next.exp(),
        slope_before: left.slope,
        slope_after: right.slope,
        rise: jump.max(end).exp(),
        rss_ratio: if one > 0.0 {
            ((left.rss + right.rss) / one).min(1.0)
        } else {
            1.0
        },
        nrms: (rel2 / pts.len() as f64).sqrt(),
    })
}
