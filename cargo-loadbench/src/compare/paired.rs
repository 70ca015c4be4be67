//! The verdict of `cargo loadbench ab`: the head against the base commit, from runs paired by
//! round.
//!
//! Each round ran every scenario once on each side, back to back, so whatever the machine did
//! then (a neighbour, throttling, another job on the runner) touched both runs of the round
//! alike. The ratio head / base of a round cancels it; the drift between rounds, which a saved
//! baseline's comparison takes for a change of the code, never enters a ratio. The change of a
//! metric is the median of the rounds' ratios, less one, and its 95 % interval a percentile
//! bootstrap of that median (the rounds resampled with replacement, with a fixed seed), held
//! against the same noise bands as a baseline's: only an interval wholly beyond the band is a
//! change. One round is a single pair: its ratio against the band, as a single run's change is.

use cargo_loadbench::{Comparison, RunSample, ScenarioResult};

use super::{Judging, Pairing, RESAMPLES, median, percentile};

/// `head` compared with the same scenario on the base, `base` (absent when the base had no such
/// scenario), with its steps and named requests: their runs must be in round order, the i-th of
/// each from the same round. `name` is the base's short commit name, `noise` a fraction.
pub fn compare_paired(head: &ScenarioResult, base: Option<&ScenarioResult>, name: &str, noise: f64) -> Comparison {
    let mut comparison = super::rows::with_rows(head, base, Judging { name, noise, pairing: Pairing::ByRound });
    comparison.base_runs = base.map(|b| b.runs.clone()).unwrap_or_default();
    comparison
}

/// The ratio new / old of `value` in each pair of runs where both sides measured it and the
/// base's is above zero.
pub(super) fn ratios(old: &[RunSample], new: &[RunSample], value: impl Fn(&RunSample) -> Option<f64>) -> Vec<f64> {
    old.iter()
        .zip(new)
        .filter_map(|(old, new)| {
            let (old, new) = (value(old)?, value(new)?);
            (old > 0.0).then(|| new / old)
        })
        .collect()
}

/// The 95 % percentile-bootstrap interval of `median(ratios) - 1`: the pairs resampled with
/// replacement, `RESAMPLES` times, each pair kept whole.
pub(super) fn interval(ratios: &[f64], seed: u64) -> [f64; 2] {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut resample = vec![0.0; ratios.len()];
    let mut changes = Vec::with_capacity(RESAMPLES);
    for _ in 0..RESAMPLES {
        for x in &mut resample {
            *x = ratios[rng.usize(..ratios.len())];
        }
        if let Some(ratio) = median(&resample) {
            changes.push(ratio - 1.0);
        }
    }
    changes.sort_by(f64::total_cmp);
    [percentile(&changes, 0.025), percentile(&changes, 0.975)]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::tests::scenario_with_runs;
    use cargo_loadbench::{ComparedMetric, Method, Verdict};

    fn metric(c: &Comparison, metric: ComparedMetric) -> cargo_loadbench::MetricChange {
        c.metrics.iter().find(|m| m.metric == metric).copied().unwrap_or_else(|| panic!("no {metric:?} in {c:#?}"))
    }

    /// Rounds in which the machine slowed down by half from the third on: the same code on both
    /// sides drifts together, and pairing cancels it.
    #[test]
    fn a_drift_that_touches_both_sides_of_each_round_is_no_change() {
        let round = |i: usize, slower: f64| {
            let drift = if i >= 2 { 1.5 } else { 1.0 };
            (1000.0 / drift / slower, 100.0 * drift * slower)
        };
        let base: Vec<(f64, f64)> = (0..6).map(|i| round(i, 1.0)).collect();
        let head: Vec<(f64, f64)> = (0..6).map(|i| round(i, if i % 2 == 0 { 1.01 } else { 0.99 })).collect();
        let c = compare_paired(
            &scenario_with_runs("hello", &head),
            Some(&scenario_with_runs("hello", &base)),
            "1a2b3c4",
            0.05,
        );
        assert_eq!((c.verdict, c.method, c.runs, c.baseline_runs), (Verdict::NoChange, Method::Paired, 6, 6), "{c:#?}");
        let p50 = metric(&c, ComparedMetric::P50);
        assert!(p50.change.abs() < 0.02, "{p50:?}");
        assert_eq!(c.base_runs.len(), 6, "the base's runs are kept beside the head's");

        // The same figures compared as a saved baseline is: the drift reads as noise at best.
        let unpaired = super::super::compare(
            &scenario_with_runs("hello", &head),
            Some(&scenario_with_runs("hello", &base)),
            "main",
            0.05,
        );
        let [low, high] = metric(&unpaired, ComparedMetric::P50).confidence_interval.unwrap_or_default();
        let [paired_low, paired_high] = p50.confidence_interval.unwrap_or_default();
        assert!(high - low > 10.0 * (paired_high - paired_low), "paired {p50:?}, unpaired {unpaired:#?}");
    }

    #[test]
    fn a_head_twice_as_slow_in_every_round_regressed() {
        let base = [(1000.0, 100.0), (700.0, 150.0), (1020.0, 98.0), (650.0, 160.0)];
        let head: Vec<(f64, f64)> = base.iter().map(|&(rps, p50)| (rps / 2.0, p50 * 2.0)).collect();
        let c = compare_paired(
            &scenario_with_runs("hello", &head),
            Some(&scenario_with_runs("hello", &base)),
            "1a2b3c4",
            0.05,
        );
        assert_eq!(c.verdict, Verdict::Regressed, "{c:#?}");
        let p50 = metric(&c, ComparedMetric::P50);
        assert!((p50.change - 1.0).abs() < 1e-9, "{p50:?}");
        assert_eq!(p50.confidence_interval, Some([1.0, 1.0]), "every ratio is 2: {p50:?}");
        assert_eq!(metric(&c, ComparedMetric::Rps).verdict, Verdict::Regressed);
        // Old and new are each side's median, as a baseline's comparison shows them.
        assert_eq!((p50.old, p50.new), (125.0, 250.0));
    }

    #[test]
    fn one_round_is_a_single_pair_and_unpaired_rounds_are_left_out() {
        let c = compare_paired(
            &scenario_with_runs("hello", &[(500.0, 200.0), (500.0, 200.0)]),
            Some(&scenario_with_runs("hello", &[(1000.0, 100.0)])),
            "1a2b3c4",
            0.05,
        );
        assert_eq!((c.method, c.runs, c.baseline_runs), (Method::SingleRun, 1, 1), "{c:#?}");
        assert_eq!(c.verdict, Verdict::Regressed);
        assert_eq!(metric(&c, ComparedMetric::P50).confidence_interval, None);
    }

    #[test]
    fn a_scenario_the_base_lacks_is_new() {
        let c = compare_paired(&scenario_with_runs("hello", &[(1.0, 1.0)]), None, "1a2b3c4", 0.05);
        assert_eq!((c.verdict, c.method), (Verdict::New, Method::None));
        assert!(c.base_runs.is_empty());
    }

    #[test]
    fn ratios_skip_rounds_one_side_did_not_measure() {
        let old = scenario_with_runs("x", &[(100.0, 1.0), (0.0, 1.0), (200.0, 1.0)]).runs;
        let new = scenario_with_runs("x", &[(50.0, 1.0), (10.0, 1.0), (300.0, 1.0)]).runs;
        assert_eq!(ratios(&old, &new, |s| Some(s.rps)), [0.5, 1.5]);
        assert_eq!(interval(&[1.2; 5], 7), [0.19999999999999996, 0.19999999999999996]);
    }
}
