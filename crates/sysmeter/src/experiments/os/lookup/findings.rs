//! The findings of `os.lookup`: the cost per component from the depth fit (with its
//! residual), long names, symbolic links, relative against absolute, negative against
//! positive, the dentry-cache miss against the hit (or why it was skipped), and what a
//! `$PATH` search costs here. Pure arithmetic on the metrics: [`quoting`] draws every
//! finding that quotes one (`Experiment::metric_findings`, so with rounds they quote the
//! pooled figures), reading the counts it needs from the metrics' notes; [`miss_outcome`]
//! adds the dentry-cache miss's metrics and its verification, which no metric carries.

use super::miss::{self, Outcome};
use super::{ABS, DEPTHS, LONG, NEG_CACHED, NEG_FRESH, PATH_SEARCH, REL, depth_name, link_name};
use crate::harness::Measured;
use crate::model::units::duration_ns;
use crate::stats::fit::{self, Class, ClassFit};

/// The line t = a·depth + b through the depth series' medians.
pub fn depth_fit(out: &Measured) -> Option<ClassFit> {
    let (xs, ys): (Vec<f64>, Vec<f64>) = DEPTHS
        .iter()
        .filter_map(|&d| out.median(&depth_name(d)).map(|m| (d as f64, m)))
        .unzip();
    fit::fit_class(Class::Linear, &xs, &ys).ok()
}

/// Every finding that quotes a metric.
pub fn quoting(out: &mut Measured) {
    per_component(out);
    shapes(out);
    negative(out);
    miss_vs_hit(out);
    path_search(out);
}

/// The count that starts metric `name`'s note ("12 components", "8 directories …").
fn noted_count(out: &Measured, name: &str) -> Option<usize> {
    let m = out.metrics.iter().find(|m| m.name == name)?;
    m.note.as_deref()?.split(' ').next()?.parse().ok()
}

fn per_component(out: &mut Measured) {
    let Some(f) = depth_fit(out) else {
        return;
    };
    out.find(
        "cost_per_component",
        format!(
            "Each path component costs {} (fit t = a·components + b over 1–32 components: \
             a = {}, b = {}, nRMS {:.1}%): a cached lookup walks the dentry cache one \
             component at a time.",
            duration_ns(f.a),
            duration_ns(f.a),
            duration_ns(f.b),
            f.nrms * 100.0
        ),
        Some(f.a),
    );
    out.find(
        "component_fit_intercept",
        format!(
            "The fixed part of a stat (b of the depth fit) is {}.",
            duration_ns(f.b)
        ),
        Some(f.b),
    );
    out.find(
        "component_fit_nrms",
        format!(
            "The straight line misses the measured depths by {:.1}% (nRMS of the relative \
             residuals).",
            f.nrms * 100.0
        ),
        Some(f.nrms),
    );
}

fn shapes(out: &mut Measured) {
    if let (Some(long), Some(short)) = (out.median(LONG), out.median(&depth_name(8))) {
        out.find(
            "long_vs_short_names",
            format!(
                "Eight 255-byte components cost {} against {} for eight 1-byte ones ({:.2}x): \
                 hashing and comparing the name is the part that grows with its length.",
                duration_ns(long),
                duration_ns(short),
                long / short
            ),
            crate::stats::ratio(long, short),
        );
    }
    if let (Some(l8), Some(f)) = (out.median(&link_name(8)), out.median(&depth_name(1))) {
        let per = (l8 - f) / 8.0;
        out.find(
            "cost_per_symlink",
            format!(
                "Following a symbolic link adds {} (8 links: {}, the file itself: {}).",
                duration_ns(per),
                duration_ns(l8),
                duration_ns(f)
            ),
            Some(per),
        );
    }
    if let (Some(r), Some(a), Some(abs_components)) =
        (out.median(REL), out.median(ABS), noted_count(out, ABS))
    {
        let own = abs_components.saturating_sub(4);
        out.find(
            "relative_vs_absolute",
            format!(
                "Opening relative to a directory fd ({}, 4 components) against the absolute \
                 path ({}, {} components): {:.2}x; the {own} components above the tree are \
                 what openat skips.",
                duration_ns(r),
                duration_ns(a),
                abs_components,
                a / r
            ),
            crate::stats::ratio(a, r),
        );
    }
}

fn negative(out: &mut Measured) {
    let (Some(neg), Some(pos)) = (out.median(NEG_CACHED), out.median(&depth_name(2))) else {
        return;
    };
    out.find(
        "negative_vs_positive",
        format!(
            "A lookup of a missing name that was looked up before costs {} against {} for an \
             existing file at the same depth ({:.2}x): the kernel remembers \"no such file\" \
             as a negative dentry.",
            duration_ns(neg),
            duration_ns(pos),
            neg / pos
        ),
        crate::stats::ratio(neg, pos),
    );
    if let Some(fresh) = out.median(NEG_FRESH) {
        out.find(
            "fresh_vs_remembered_negative",
            format!(
                "A missing name never looked up before costs {} ({:.1}x the remembered one): \
                 the file system searched the directory and a negative dentry was created.",
                duration_ns(fresh),
                fresh / neg
            ),
            crate::stats::ratio(fresh, neg),
        );
    }
}

fn miss_vs_hit(out: &mut Measured) {
    let (Some(mm), Some(hm)) = (out.median(miss::MISS), out.median(miss::HIT)) else {
        return;
    };
    out.find(
        "miss_vs_hit",
        format!(
            "A dentry-cache miss of an 8-component path costs {} against {} for the hit right \
             after ({:.1}x).",
            duration_ns(mm),
            duration_ns(hm),
            mm / hm.max(1.0)
        ),
        crate::stats::ratio(mm, hm),
    );
}

/// Adds the dentry-cache miss's metrics and how the miss was verified (or why it was
/// skipped): counts of this run's passes, no metric's figure.
pub fn miss_outcome(out: &mut Measured, miss: Outcome) {
    match miss {
        Outcome::Measured {
            metrics,
            freed,
            slower,
            passes,
        } => {
            out.metrics.extend(*metrics);
            out.find(
                "miss_verified",
                format!(
                    "The dentry-cache miss is verified: each drop freed a median {freed} \
                     dentries (dentry-state; other processes refill it meanwhile) and the \
                     first lookup was the slower in {slower} of {passes} passes."
                ),
                Some(slower as f64),
            );
        }
        Outcome::Skipped(why) => out.find(
            "miss_skipped",
            format!(
                "The dentry-cache miss ({}) was not measured: {why}.",
                miss::MISS
            ),
            None,
        ),
    }
}

fn path_search(out: &mut Measured) {
    let (Some(search), Some(dirs)) = (out.median(PATH_SEARCH), noted_count(out, PATH_SEARCH))
    else {
        return;
    };
    out.find(
        "path_search",
        format!(
            "A $PATH search of {dirs} directories that finds the command in the last (one stat \
             per directory, {} of them ENOENT remembered in the dentry cache) costs {} here, {} \
             per directory.",
            dirs.saturating_sub(1),
            duration_ns(search),
            duration_ns(search / dirs.max(1) as f64)
        ),
        Some(search),
    );
}

#[cfg(test)]
mod tests {
    use super::super::OsLookup;
    use super::*;
    use crate::harness::pooled::{figure, finding, pooled, round};
    use crate::model::{HostInfo, Unit};

    #[test]
    fn the_lookup_findings_quote_the_pooled_figures() {
        let depths: Vec<String> = DEPTHS.iter().map(|&d| depth_name(d)).collect();
        let mut rows: Vec<(&str, Unit, f64)> = (depths.iter().zip(DEPTHS))
            .map(|(n, d)| (n.as_str(), Unit::Ns, 300.0 + 20.0 * d as f64))
            .collect();
        rows.extend([
            (REL, Unit::Ns, 900.0),
            (ABS, Unit::Ns, 1200.0),
            (PATH_SEARCH, Unit::Ns, 4000.0),
            (miss::MISS, Unit::Ns, 9000.0),
            (miss::HIT, Unit::Ns, 600.0),
        ]);
        let mut rounds = [round(&rows, 1.0), round(&rows, 2.0)];
        for metrics in &mut rounds {
            for m in metrics.iter_mut() {
                m.note = match m.name.as_str() {
                    ABS => Some("9 components".into()),
                    PATH_SEARCH => Some("8 directories (as many as this $PATH)".into()),
                    _ => None,
                };
            }
        }
        let r = pooled(&OsLookup, &HostInfo::default(), &rounds);
        let search = figure(&r, PATH_SEARCH);
        assert_eq!(search, 6000.0, "pooled, not the last round's 8 µs");
        let (text, value) = finding(&r, "path_search");
        assert_eq!(value, Some(search));
        assert!(
            text.contains("of 8 directories") && text.contains(&duration_ns(search)),
            "{text}"
        );
        let (text, _) = finding(&r, "relative_vs_absolute");
        assert!(
            text.contains(&duration_ns(figure(&r, ABS))) && text.contains("9 components"),
            "{text}"
        );
        let ratio = crate::stats::ratio(figure(&r, miss::MISS), figure(&r, miss::HIT));
        assert_eq!(finding(&r, "miss_vs_hit").1, ratio);
        let slope = finding(&r, "cost_per_component").1.expect("a slope");
        assert!(
            (slope - 30.0).abs() < 1e-6,
            "20 ns and 40 ns per component pool to 30: {slope}"
        );
    }
}
