//! Known distributions through `diff`: two sides drawn from one distribution are "no
//! change" at about the nominal 5% rate, a real 2× shift is found, the spread between rounds
//! widens the interval, and absent keys are "new" or "gone".

use super::{KeyVerdict, Normalise, diff};
use crate::model::Unit;
use crate::model::fixture::profile_round;
use crate::model::tally::Tally;

/// One round of a profile: `samples` drawn from the functions' `weights`, each function
/// its own stack `main;fN`.
fn round(rng: &mut fastrand::Rng, weights: &[f64], samples: usize) -> Tally {
    let total: f64 = weights.iter().sum();
    let mut counts = vec![0.0; weights.len()];
    for _ in 0..samples {
        let mut u = rng.f64() * total;
        let i = weights
            .iter()
            .position(|w| {
                u -= w;
                u < 0.0
            })
            .unwrap_or(weights.len() - 1);
        counts[i] += 1.0;
    }
    let drawn = counts.into_iter().enumerate().filter(|(_, n)| *n > 0.0);
    profile_round(drawn.map(|(i, n)| (format!("main;f{i}"), n)))
}

const WEIGHTS: [f64; 10] = [30.0, 20.0, 15.0, 10.0, 8.0, 6.0, 5.0, 3.0, 2.0, 1.0];

/// The verdicts of the self-time table of every trial of `trials`.
fn self_verdicts(
    trials: usize,
    mut sides: impl FnMut(&mut fastrand::Rng) -> (Vec<Tally>, Vec<Tally>),
    normalise: Option<Normalise>,
) -> Vec<(String, KeyVerdict)> {
    let mut rng = fastrand::Rng::with_seed(7);
    let mut out = Vec::new();
    for _ in 0..trials {
        let (a, b) = sides(&mut rng);
        let d = diff(&a, &b, normalise);
        let own = d
            .tables
            .iter()
            .find(|t| t.name.ends_with("(self)"))
            .unwrap();
        out.extend(own.keys.iter().map(|k| (k.key.clone(), k.verdict)));
    }
    out
}

fn rate(verdicts: &[(String, KeyVerdict)], what: impl Fn(KeyVerdict) -> bool) -> f64 {
    verdicts.iter().filter(|(_, v)| what(*v)).count() as f64 / verdicts.len() as f64
}

#[test]
fn one_distribution_is_no_change_at_about_the_nominal_rate() {
    for normalise in [None, Some(Normalise::Total)] {
        let v = self_verdicts(
            200,
            |rng| {
                (
                    vec![round(rng, &WEIGHTS, 3000)],
                    vec![round(rng, &WEIGHTS, 3000)],
                )
            },
            normalise,
        );
        let false_positive = rate(&v, KeyVerdict::is_change);
        // Nominal 5%; the Poisson bound of a fixed total is a little conservative.
        assert!(false_positive < 0.08, "{normalise:?}: {false_positive}");
        assert!(
            false_positive > 0.005,
            "{normalise:?}: {false_positive} (too wide)"
        );
    }
}

#[test]
fn a_doubled_function_grows_and_the_others_stay() {
    let mut doubled = WEIGHTS;
    doubled[3] *= 2.0;
    let v = self_verdicts(
        100,
        |rng| {
            let a = vec![round(rng, &WEIGHTS, 3000)];
            // The same sampling rate: the extra work adds samples (×1.1 in all).
            (a, vec![round(rng, &doubled, 3300)])
        },
        None,
    );
    let of = |f: &str| -> Vec<(String, KeyVerdict)> {
        v.iter().filter(|(k, _)| k == f).cloned().collect()
    };
    assert!(rate(&of("f3"), |v| v == KeyVerdict::Grew) > 0.99);
    assert!(rate(&of("f0"), KeyVerdict::is_change) < 0.1);
}

#[test]
fn the_spread_between_rounds_widens_the_interval() {
    // Every round runs a different amount of work (±15%): one round's samples understate
    // the noise; with three rounds a side, the spread between them bounds the change.
    let noisy = |rng: &mut fastrand::Rng| {
        let n = (3000.0 * (0.85 + 0.3 * rng.f64())) as usize;
        round(rng, &WEIGHTS, n)
    };
    let one = self_verdicts(200, |rng| (vec![noisy(rng)], vec![noisy(rng)]), None);
    let three = self_verdicts(
        200,
        |rng| {
            let a = (0..3).map(|_| noisy(rng)).collect();
            (a, (0..3).map(|_| noisy(rng)).collect())
        },
        None,
    );
    let (fp_one, fp_three) = (
        rate(&one, KeyVerdict::is_change),
        rate(&three, KeyVerdict::is_change),
    );
    assert!(fp_one > 0.15, "one round is fooled by the drift: {fp_one}");
    assert!(fp_three < 0.09, "rounds bound it: {fp_three}");
}

#[test]
fn absent_keys_are_new_or_gone_and_uncounted_single_rounds_unjudged() {
    let mut rng = fastrand::Rng::with_seed(3);
    let a = round(&mut rng, &[50.0, 50.0, 0.0], 2000);
    let b = round(&mut rng, &[50.0, 0.0, 50.0], 2000);
    let d = diff(std::slice::from_ref(&a), std::slice::from_ref(&b), None);
    let stacks = &d.tables[0];
    let verdict = |k: &str| stacks.keys.iter().find(|x| x.key == k).unwrap().verdict;
    assert_eq!(verdict("main;f1"), KeyVerdict::Gone);
    assert_eq!(verdict("main;f2"), KeyVerdict::New);
    assert_eq!(verdict("main;f0"), KeyVerdict::NoChange);
    let uncounted = |t: &Tally| {
        let mut t = t.clone();
        t.tables[0].unit = Unit::Ns;
        t.tables[0].rows.values_mut().for_each(|c| c.events = None);
        t
    };
    let d = diff(&[uncounted(&a)], &[uncounted(&b)], None);
    assert!(
        d.tables[0]
            .keys
            .iter()
            .all(|k| k.verdict == KeyVerdict::Unjudged)
    );
    assert_eq!(d.tables[0].normalise, Normalise::Run);
}
