//! Knee detection: where the cost per element rises abruptly — a working set outgrowing a
//! cache or RAM (thrashing), or a steeper term taking over.
//!
//! The rule, on the cost per element c = t/unit(N) (unit(N) = N: the time per element):
//! 1. Work in log-log space, u = ln N and v = ln c: a power law is a straight line there.
//! 2. Fit the best two-segment model: the smallest sizes (at least `min_points`) on one
//!    least-squares line, the largest (at least `min_points`) on another, and up to
//!    `max_transition` (2) sizes between them on the straight path from the end of the first
//!    line to the start of the second; keep the model with the least total residual (fewer
//!    transition sizes win a tie). The lines need not meet: a cache overflow is a *step* of
//!    the cost per element — flat, a ramp over a size or two, flat again — which this
//!    follows closely and one bent line does not. (A two-segment fit with a minimum slope
//!    change would miss it: a step has no lasting slope change, so the rule asks for a
//!    minimum *rise* instead, which covers both the step and the bend.)
//! 3. The rise is how much higher the cost is after the split than the first segment's
//!    trend says: the larger of the jump between the two lines midway between the last size
//!    of the first and the first size of the second and the measured cost at the largest size
//!    over the first segment's trend there. When the first segment falls (start-up being
//!    amortised over more elements), its trend is taken as flat from the split on, so a fall
//!    that merely stops does not count as a rise.
//! 4. It is a knee when the rise is at least `min_rise` (1.5×), the first segment does not
//!    fall steeply (log-log slope ≥ `min_slope_before`, −0.5: a cost per element falling
//!    faster than 1/√N is start-up being amortised, and what follows it cannot be told from
//!    the class's own growth — start the sizes higher), the two segments follow the
//!    curve clearly better than one line (residual sum of squares at most `max_rss_ratio`,
//!    0.5, of the line's), and no complexity class explains the times: the best class fit
//!    misses by at least `min_class_nrms` (5% nRMS) *and* by at least `noise_multiple` (3×)
//!    the measurement noise the caller reports (from the spread of the repeated runs), and
//!    the two segments' relative error is at most `max_error_ratio` (0.7×) the class's,
//!    both measured as the RMS without the worst tenth of the sizes. These keep start-up
//!    from passing as a knee: the fixed cost of a process makes t/N of an O(N²) program
//!    fall, then rise, but t = a·N² + b fits that to within the noise — and a six-parameter
//!    two-segment model always fits noise somewhat better than a two-parameter class, so
//!    "better than the class" alone is not enough. The trimming keeps one disturbed size
//!    from dominating both errors without hiding a regime that spans a few sizes.
//! 5. When the verdict is "start-up dominates", the scan is made once more without the fixed
//!    cost the smallest sizes show (see [`detect`]): a step of the cost per element behind
//!    milliseconds of process start-up is still a knee.
//!
//! Pure: depends on nothing but the standard library.

/// Knobs of [`detect`]; [`Default`] gives the documented rule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KneeRule {
    /// Smallest rise of the cost per element over the first segment's trend.
    pub min_rise: f64,
    /// Largest residual sum of squares of the two segments, as a share of one line's.
    pub max_rss_ratio: f64,
    /// Steepest fall of the first segment (log-log slope) that still counts as a baseline.
    pub min_slope_before: f64,
    /// Fewest sizes in each segment.
    pub min_points: usize,
    /// Most sizes between the segments that belong to neither (the ramp of a step).
    pub max_transition: usize,
    /// Smallest nRMS of the best class fit for a knee to be considered at all …
    pub min_class_nrms: f64,
    /// … and smallest as a multiple of the measurement noise.
    pub noise_multiple: f64,
    /// Largest error of the two segments as a share of the best class fit's (both the RMS
    /// relative error without the worst tenth of the sizes).
    pub max_error_ratio: f64,
}

impl Default for KneeRule {
    fn default() -> KneeRule {
        KneeRule {
            min_rise: 1.5,
            max_rss_ratio: 0.5,
            min_slope_before: -0.5,
            min_points: 3,
            max_transition: 2,
            min_class_nrms: 0.05,
            noise_multiple: 3.0,
            max_error_ratio: 0.7,
        }
    }
}

/// The best two-segment split of the curve, knee or not.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Split {
    /// Largest size of the first segment: the cost rises past it.
    pub at: f64,
    /// Smallest size of the second segment (the rise lies between `at` and `next`).
    pub next: f64,
    /// Log-log slope of the cost per element in the first segment.
    pub slope_before: f64,
    /// Log-log slope in the second segment.
    pub slope_after: f64,
    /// Cost after the split ÷ the first segment's trend (rule step 3).
    pub rise: f64,
    /// Residual sum of squares of the two segments ÷ that of one line (≤ 1).
    pub rss_ratio: f64,
    /// Relative error of the two segments as a model of the times: the RMS without the
    /// worst tenth of the sizes.
    pub error: f64,
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
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum NoKnee {
    /// The cost rises less than `min_rise`.
    SmallRise,
    /// The first segment falls faster than `min_slope_before`: the small sizes are mostly
    /// fixed cost, and a rise after them cannot be told from the class's own growth.
    StartUpDominates,
    /// Two segments are not clearly better than one line.
    OneLineSuffices,
    /// The best complexity class already fits within `min_class_nrms` or within
    /// `noise_multiple` times the noise.
    ClassFits {
        /// That class's nRMS.
        class_nrms: f64,
    },
    /// The two segments do not fit clearly better than the best class.
    NoBetterThanClass {
        /// The class's error, measured like [`Split::error`].
        class_error: f64,
    },
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

/// One measured size: N, its time, and the best class fit's relative error there.
#[derive(Debug, Clone, Copy)]
struct Point {
    n: f64,
    t: f64,
    class_error: f64,
}

/// Looks for a knee in the times `times[i]` at `sizes[i]` (any order; points whose size, time
/// or cost is not positive and finite are ignored), on the cost per element t/`unit`(N).
/// `baseline[i]` is the best complexity-class fit's time at `sizes[i]`; `noise` is the
/// typical relative uncertainty of one time (0 when unknown, e.g. a single run per size).
///
/// When the small sizes are mostly fixed cost (the first segment falls: a process start-up
/// amortised), the scan is made once more on the variable part, (t − F)/unit(N), with F the
/// fixed cost the smallest sizes show (`fixed_cost`), over the sizes where that part is at
/// least [`MIN_VARIABLE_SHARE`] of the time (below it, the noise of t swamps it). A cache
/// step behind a start-up of milliseconds is found that way; a class's own growth is not a
/// knee there either (its cost per element follows the first segment's trend: no rise).
pub fn detect(
    sizes: &[f64],
    times: &[f64],
    unit: impl Fn(f64) -> f64,
    baseline: &[f64],
    noise: f64,
    rule: KneeRule,
) -> KneeScan {
    let mut points: Vec<Point> = sizes
        .iter()
        .zip(times)
        .zip(baseline)
        .map(|((&n, &t), &fit)| Point {
            n,
            t,
            class_error: (t - fit) / t,
        })
        .filter(|p| p.n.is_finite() && p.t.is_finite() && p.class_error.is_finite())
        .filter(|p| p.n > 0.0 && p.t > 0.0)
        .collect();
    points.sort_by(|x, y| x.n.total_cmp(&y.n));
    let first = scan(&points, 0.0, &unit, noise, rule);
    let KneeScan::NoKnee(_, NoKnee::StartUpDominates) = first else {
        return first;
    };
    match fixed_cost(&points, &unit, rule.min_points.max(2)) {
        Some(fixed) => match scan(&points, fixed, &unit, noise, rule) {
            knee @ KneeScan::Knee(_) => knee,
            _ => first,
        },
        None => first,
    }
}

/// The smallest variable share of a size's time for the size to count in the scan without
/// the fixed cost (at ±3% noise on t, the variable part is then known to ±15%).
pub const MIN_VARIABLE_SHARE: f64 = 0.2;

/// The fixed cost F of t = a·unit(N) + F, fitted by least squares over the `m` smallest
/// sizes and kept at most their smallest time; `None` when it is not positive.
fn fixed_cost(points: &[Point], unit: &impl Fn(f64) -> f64, m: usize) -> Option<f64> {
    let small = points.get(..m)?;
    let xs: Vec<f64> = small.iter().map(|p| unit(p.n)).collect();
    let k = m as f64;
    let (mx, mt) = (
        xs.iter().sum::<f64>() / k,
        small.iter().map(|p| p.t).sum::<f64>() / k,
    );
    let sxx: f64 = xs.iter().map(|x| (x - mx).powi(2)).sum();
    let sxt: f64 = xs
        .iter()
        .zip(small)
        .map(|(x, p)| (x - mx) * (p.t - mt))
        .sum();
    let slope = if sxx > 0.0 { (sxt / sxx).max(0.0) } else { 0.0 };
    let lowest = small.iter().map(|p| p.t).fold(f64::INFINITY, f64::min);
    let fixed = (mt - slope * mx).min(lowest);
    (fixed.is_finite() && fixed > 0.0).then_some(fixed)
}

/// The rule of the module documentation on the cost per element (t − `fixed`)/unit(N) of the
/// sizes where t − `fixed` is at least [`MIN_VARIABLE_SHARE`] of t (all of them when `fixed`
/// is 0).
fn scan(
    points: &[Point],
    fixed: f64,
    unit: &impl Fn(f64) -> f64,
    noise: f64,
    rule: KneeRule,
) -> KneeScan {
    // (ln N, ln cost, relative error of the class fit), by size.
    let rows: Vec<(f64, f64, f64)> = points
        .iter()
        .filter(|p| fixed == 0.0 || p.t - fixed >= MIN_VARIABLE_SHARE * p.t)
        .map(|p| (p.n, (p.t - fixed) / unit(p.n), p.class_error))
        .filter(|&(_, c, _)| c.is_finite() && c > 0.0)
        .map(|(n, c, e)| (n.ln(), c.ln(), e))
        .collect();
    let pts: Vec<(f64, f64)> = rows.iter().map(|r| (r.0, r.1)).collect();
    let class_errors: Vec<f64> = rows.iter().map(|r| r.2).collect();
    let m = rule.min_points.max(2);
    let Some(split) = best_split(&pts, m, rule.max_transition) else {
        return KneeScan::TooFewPoints {
            got: pts.len(),
            needed: 2 * m,
        };
    };
    let class_nrms = (class_errors.iter().map(|e| e * e).sum::<f64>() / pts.len() as f64).sqrt();
    let class_error = trimmed_rms(&class_errors);
    let why = if split.rise < rule.min_rise {
        Some(NoKnee::SmallRise)
    } else if split.rss_ratio > rule.max_rss_ratio {
        Some(NoKnee::OneLineSuffices)
    } else if class_nrms < rule.min_class_nrms.max(rule.noise_multiple * noise) {
        Some(NoKnee::ClassFits { class_nrms })
    } else if split.slope_before < rule.min_slope_before {
        Some(NoKnee::StartUpDominates)
    } else if split.error > rule.max_error_ratio * class_error {
        Some(NoKnee::NoBetterThanClass { class_error })
    } else {
        None
    };
    match why {
        None => KneeScan::Knee(split),
        Some(why) => KneeScan::NoKnee(split, why),
    }
}

/// RMS of `xs` without the largest tenth (at least one value once there are five or more):
/// one disturbed size must not decide a comparison of models, but a regime that spans
/// several sizes must still count.
fn trimmed_rms(xs: &[f64]) -> f64 {
    let mut sq: Vec<f64> = xs.iter().map(|x| x * x).collect();
    sq.sort_by(f64::total_cmp);
    let drop = if sq.len() >= 5 {
        sq.len().div_ceil(10)
    } else {
        0
    };
    let kept = &sq[..sq.len() - drop];
    if kept.is_empty() {
        return 0.0;
    }
    (kept.iter().sum::<f64>() / kept.len() as f64).sqrt()
}

/// A candidate model: the first `k` points on `left`, `gap` transition points, the rest on
/// `right`.
struct Candidate {
    k: usize,
    gap: usize,
    left: Line,
    right: Line,
}

impl Candidate {
    /// The model's log cost at point `i` of `pts`: a line on each side; across the
    /// transition, straight from the end of the first line to the start of the second.
    fn fit(&self, pts: &[(f64, f64)], i: usize) -> f64 {
        let (k, gap) = (self.k, self.gap);
        if i < k {
            return self.left.at(pts[i].0);
        }
        if i >= k + gap {
            return self.right.at(pts[i].0);
        }
        let (u0, u1) = (pts[k - 1].0, pts[k + gap].0);
        let (v0, v1) = (self.left.at(u0), self.right.at(u1));
        v0 + (v1 - v0) * (pts[i].0 - u0) / (u1 - u0)
    }

    fn rss(&self, pts: &[(f64, f64)]) -> f64 {
        let gap: f64 = (self.k..self.k + self.gap)
            .map(|i| (pts[i].1 - self.fit(pts, i)).powi(2))
            .sum();
        self.left.rss + self.right.rss + gap
    }
}

/// The two-segment model of `pts` (sorted by u) with the least total residual.
fn best_split(pts: &[(f64, f64)], m: usize, max_gap: usize) -> Option<Split> {
    let n = pts.len();
    let mut best: Option<(Candidate, f64)> = None;
    for gap in 0..=max_gap {
        for k in m..=n.saturating_sub(m + gap) {
            let c = Candidate {
                k,
                gap,
                left: Line::through(&pts[..k]),
                right: Line::through(&pts[k + gap..]),
            };
            let rss = c.rss(pts);
            // Strictly better only, so that fewer transition points win a tie.
            if best.as_ref().is_none_or(|(_, r)| rss < *r) {
                best = Some((c, rss));
            }
        }
    }
    let (c, rss) = best?;
    Some(describe(pts, &c, rss))
}

/// The [`Split`] of a chosen model: where, how much it rises, how well it fits.
fn describe(pts: &[(f64, f64)], c: &Candidate, rss: f64) -> Split {
    let one = Line::through(pts).rss;
    let (u_last, u_next) = (pts[c.k - 1].0, pts[c.k + c.gap].0);
    let u_mid = (u_last + u_next) / 2.0;
    let left = c.left;
    // The first segment's trend; flat from the split on when it falls (module step 3).
    let trend = |u: f64| {
        if left.slope < 0.0 {
            left.at(u_mid.min(u))
        } else {
            left.at(u)
        }
    };
    let (u_max, v_max) = pts[pts.len() - 1];
    let jump = c.right.at(u_mid) - trend(u_mid);
    let end = v_max - trend(u_max);
    let errors: Vec<f64> = (0..pts.len())
        .map(|i| 1.0 - (c.fit(pts, i) - pts[i].1).exp())
        .collect();
    Split {
        at: u_last.exp(),
        next: u_next.exp(),
        slope_before: left.slope,
        slope_after: c.right.slope,
        rise: jump.max(end).exp(),
        rss_ratio: if one > 0.0 { (rss / one).min(1.0) } else { 1.0 },
        error: trimmed_rms(&errors),
    }
}
