//! The verdict: did a scenario get faster or slower than in its baseline, beyond the noise?
//!
//! Each run of a scenario gives one sample of each compared metric (it/s, p50, p99, success
//! rate). The change of a metric is `median(new) / median(old) - 1`. With two or more runs on
//! both sides its 95 % confidence interval comes from a percentile bootstrap (10,000 resamples of
//! each side's runs, with a fixed seed so that the same data always gets the same verdict), and,
//! as criterion's `compare_to_threshold` does, a metric counts as regressed or improved only when
//! the whole interval lies beyond `±noise` in one direction (a band three times as wide for p99,
//! see [`TAIL_NOISE_FACTOR`]). With one run on either side there is
//! no spread to judge, so the plain change is held against `±noise`, and the comparison says so.
//!
//! Medians rather than means: a single run disturbed by the machine (a CI neighbour, a page
//! cache flush) moves a mean of three runs by a third of its excess, but a median not at all.
//!
//! `cargo loadbench ab` pairs its runs instead ([`paired`]): the base's and the head's runs of a
//! round ran back to back, so each round gives one ratio, and the verdict is on those ratios.

use cargo_loadbench::{ComparedMetric, Comparison, Method, MetricChange, RunSample, ScenarioResult, Verdict};

mod paired;
mod rows;

pub use paired::compare_paired;
pub use rows::compare_with_rows;

/// How the runs of the two sides of a comparison relate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pairing {
    /// Measured apart (a saved baseline, another target): each side's runs are a sample of its
    /// own, resampled independently.
    Independent,
    /// Measured in rounds, a run of each side per round: the i-th runs of both sides are a pair.
    ByRound,
}

/// How a comparison judges: against what (its name in the outputs), with which noise threshold
/// (a fraction: 0.05 for 5 %), and how the two sides' runs relate. The same for a scenario and
/// its rows.
#[derive(Debug, Clone, Copy)]
struct Judging<'a> {
    name: &'a str,
    noise: f64,
    pairing: Pairing,
}

/// Bootstrap resamples per metric; criterion uses 100,000 for micro-benchmarks, but with a
/// handful of runs per side the interval is settled long before 10,000.
const RESAMPLES: usize = 10_000;

/// A fixed seed: the verdict is a function of the data alone.
const SEED: u64 = 0x6c6f_6164_6265_6e63; // "loadbenc"

/// Compares `current` with `baseline` (the same scenario in the baseline `name`, if it is there).
///
/// `noise` is a fraction (0.05 for 5 %).
pub fn compare(current: &ScenarioResult, baseline: Option<&ScenarioResult>, name: &str, noise: f64) -> Comparison {
    compare_as(current, baseline, Judging { name, noise, pairing: Pairing::Independent })
}

/// [`compare`], judged as `how` says.
fn compare_as(current: &ScenarioResult, baseline: Option<&ScenarioResult>, how: Judging) -> Comparison {
    let mut comparison = compare_metrics(current, baseline, how, &ComparedMetric::ALL);
    // The HTML report draws the baseline's spectrum under this run's, when the two compare.
    if comparison.verdict != Verdict::NotComparable
        && let Some(latency) = baseline.and_then(|b| b.latency_us.as_ref())
    {
        comparison.baseline_spectrum = latency.spectrum.clone();
    }
    comparison
}

/// [`compare`], judging only `compared` (a step's comparison leaves it/s out: see [`rows`]).
fn compare_metrics(
    current: &ScenarioResult,
    baseline: Option<&ScenarioResult>,
    Judging { name, noise, pairing }: Judging,
    compared: &[ComparedMetric],
) -> Comparison {
    let mut current_samples = samples(current);
    let mut comparison = Comparison {
        baseline: name.to_owned(),
        verdict: Verdict::New,
        reason: None,
        method: Method::None,
        noise_threshold: noise,
        baseline_runs: 0,
        runs: run_count(&current_samples),
        metrics: Vec::new(),
        steps: Vec::new(),
        requests: Vec::new(),
        baseline_spectrum: Vec::new(),
        commits: None,
        base_runs: Vec::new(),
    };
    let Some(baseline) = baseline else {
        return comparison;
    };
    let mut baseline_samples = samples(baseline);
    if pairing == Pairing::ByRound {
        // A round that one side did not finish has no pair; only an interrupted run leaves one.
        let pairs = baseline_samples.len().min(current_samples.len());
        baseline_samples.truncate(pairs);
        current_samples.truncate(pairs);
        comparison.runs = run_count(&current_samples);
    }
    comparison.baseline_runs = run_count(&baseline_samples);
    if let Some(reason) = not_comparable(current, baseline) {
        comparison.verdict = Verdict::NotComparable;
        comparison.reason = Some(reason);
        return comparison;
    }

    let bootstrap = baseline_samples.len() >= 2 && current_samples.len() >= 2;
    comparison.method = match (bootstrap, pairing) {
        (false, _) => Method::SingleRun,
        (true, Pairing::Independent) => Method::Bootstrap,
        (true, Pairing::ByRound) => Method::Paired,
    };
    for (i, metric) in ComparedMetric::ALL.into_iter().enumerate().filter(|(_, m)| compared.contains(m)) {
        let old: Vec<f64> = baseline_samples.iter().filter_map(|s| value(metric, s)).collect();
        let new: Vec<f64> = current_samples.iter().filter_map(|s| value(metric, s)).collect();
        let (Some(old_median), Some(new_median)) = (median(&old), median(&new)) else {
            // Not measured on one side (no iteration succeeded): the success rate says why.
            continue;
        };
        if old_median <= 0.0 {
            // No relative change from zero.
            continue;
        }
        let seed = SEED.wrapping_add(i as u64);
        let (change, confidence_interval) = match pairing {
            Pairing::Independent => (
                new_median / old_median - 1.0,
                (bootstrap && old.len() >= 2 && new.len() >= 2).then(|| bootstrap_interval(&old, &new, seed)),
            ),
            Pairing::ByRound => {
                let ratios = paired::ratios(&baseline_samples, &current_samples, |s| value(metric, s));
                let Some(ratio) = median(&ratios) else { continue };
                (ratio - 1.0, (bootstrap && ratios.len() >= 2).then(|| paired::interval(&ratios, seed)))
            }
        };
        let [low, high] = confidence_interval.unwrap_or([change, change]);
        let verdict = judge(metric, low, high, noise_band(metric, noise));
        comparison.metrics.push(MetricChange {
            metric,
            old: old_median,
            new: new_median,
            change,
            confidence_interval,
            verdict,
        });
    }
    comparison.verdict = overall(&comparison.metrics);
    comparison
}

/// The scenario's per-run samples; a report without them (one run) is its own single sample.
fn samples(scenario: &ScenarioResult) -> Vec<RunSample> {
    if scenario.runs.is_empty() { vec![RunSample::of(scenario)] } else { scenario.runs.clone() }
}

fn run_count(samples: &[RunSample]) -> u32 {
    u32::try_from(samples.len()).unwrap_or(u32::MAX)
}

/// Why two reports of a scenario cannot be compared, if they cannot: a different load measures
/// something else, and a run that did not finish measured too little.
fn not_comparable(current: &ScenarioResult, baseline: &ScenarioResult) -> Option<String> {
    if current.setup_error.is_some() {
        return Some("it did not run".to_owned());
    }
    if baseline.setup_error.is_some() {
        return Some("it did not run in the baseline".to_owned());
    }
    if current.interrupted || baseline.interrupted {
        return Some("a run was interrupted".to_owned());
    }
    let (old, new) = (&baseline.config, &current.config);
    let mut differences: Vec<String> = [
        ("concurrency", Some(u64::from(old.concurrency)), Some(u64::from(new.concurrency))),
        ("count", old.count, new.count),
        ("duration_ms", old.duration_ms, new.duration_ms),
        ("warmup_count", old.warmup_count, new.warmup_count),
        ("warmup_ms", old.warmup_ms, new.warmup_ms),
    ]
    .into_iter()
    .filter(|(_, old, new)| old != new)
    .map(|(what, old, new)| format!("{what} {} in the baseline, {} now", show(old), show(new)))
    .collect();
    // The shape of the load, beyond its size: an open model against a closed one, another rate,
    // ramp or pause measures something else.
    let differ =
        |what: &str, old: String, new: String| (old != new).then(|| format!("{what} {old} in the baseline, {new} now"));
    let rate = |r: Option<f64>| r.map_or_else(|| "unset".to_owned(), |r| format!("{r}/s"));
    let pause = |t: Option<(u64, u64)>| match t {
        None => "unset".to_owned(),
        Some((low, high)) if low == high => format!("{low}ms"),
        Some((low, high)) => format!("{low}ms..{high}ms"),
    };
    let ramp = |stages: Vec<(u64, u64)>| {
        if stages.is_empty() {
            "unset".to_owned()
        } else {
            stages.iter().map(|(ms, target)| format!("{ms}ms→{target}")).collect::<Vec<_>>().join(" ")
        }
    };
    let users = |c: &loadbench::report::ConfigReport| c.stages.iter().map(|&(ms, n)| (ms, u64::from(n))).collect();
    differences.extend(
        [
            differ("rate", rate(old.rate), rate(new.rate)),
            differ("think_time", pause(old.think_time_ms), pause(new.think_time_ms)),
            differ("stages", ramp(users(old)), ramp(users(new))),
            differ("rate_stages", ramp(old.rate_stages.clone()), ramp(new.rate_stages.clone())),
        ]
        .into_iter()
        .flatten(),
    );
    (!differences.is_empty()).then(|| format!("the load differs: {}", differences.join(", ")))
}

fn show(value: Option<u64>) -> String {
    value.map_or_else(|| "unset".to_owned(), |v| v.to_string())
}

/// The value of `metric` in one run, when it was measured.
fn value(metric: ComparedMetric, sample: &RunSample) -> Option<f64> {
    match metric {
        ComparedMetric::Rps => Some(sample.rps),
        ComparedMetric::P50 => sample.latency_us.as_ref().map(|l| l.p50),
        ComparedMetric::P99 => sample.latency_us.as_ref().map(|l| l.p99),
        ComparedMetric::SuccessRate => sample.success_rate(),
    }
    .filter(|v| v.is_finite())
}

/// How much wider the noise band of p99 is than that of it/s, p50 and success rate.
///
/// A run's p99 rests on its slowest 1 % of iterations, a few dozen samples at most in a CI-sized
/// run, and a busy machine's scheduling delays land exactly there, moving p99 several times as
/// far as it/s and p50 (bench/RESULTS.md § Tail noise). A band of three times the noise
/// threshold still catches a tail that really got worse.
pub const TAIL_NOISE_FACTOR: f64 = 3.0;

/// The noise band for `metric`, given the noise threshold.
pub fn noise_band(metric: ComparedMetric, noise: f64) -> f64 {
    match metric {
        ComparedMetric::P99 => noise * TAIL_NOISE_FACTOR,
        _ => noise,
    }
}

/// Criterion's `compare_to_threshold`, with the direction of the metric: only an interval wholly
/// beyond the noise band is a change.
fn judge(metric: ComparedMetric, low: f64, high: f64, noise: f64) -> Verdict {
    let (worse, better) =
        if metric.higher_is_better() { (high < -noise, low > noise) } else { (low > noise, high < -noise) };
    if worse {
        Verdict::Regressed
    } else if better {
        Verdict::Improved
    } else {
        Verdict::NoChange
    }
}

/// The success rate first: a run whose success rate dropped regressed, whatever its speed (a
/// server that fails fast looks quick, and it/s and latencies then describe fewer, different
/// iterations). Then regressed if any other metric regressed (a faster median does not excuse a
/// slower tail), else improved if any improved, else no change.
fn overall(metrics: &[MetricChange]) -> Verdict {
    let success = metrics.iter().find(|m| m.metric == ComparedMetric::SuccessRate);
    if success.is_some_and(|m| m.verdict == Verdict::Regressed) {
        return Verdict::Regressed;
    }
    if metrics.iter().any(|m| m.verdict == Verdict::Regressed) {
        Verdict::Regressed
    } else if metrics.iter().any(|m| m.verdict == Verdict::Improved) {
        Verdict::Improved
    } else {
        Verdict::NoChange
    }
}

/// The 95 % percentile-bootstrap interval of `median(new) / median(old) - 1`: both sides are
/// resampled with replacement, independently, `RESAMPLES` times.
fn bootstrap_interval(old: &[f64], new: &[f64], seed: u64) -> [f64; 2] {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut old_resample = vec![0.0; old.len()];
    let mut new_resample = vec![0.0; new.len()];
    let mut changes = Vec::with_capacity(RESAMPLES);
    for _ in 0..RESAMPLES {
        for x in &mut old_resample {
            *x = old[rng.usize(..old.len())];
        }
        for x in &mut new_resample {
            *x = new[rng.usize(..new.len())];
        }
        if let (Some(o), Some(n)) = (median(&old_resample), median(&new_resample))
            && o > 0.0
        {
            changes.push(n / o - 1.0);
        }
    }
    changes.sort_by(f64::total_cmp);
    [percentile(&changes, 0.025), percentile(&changes, 0.975)]
}

/// The `q` quantile of sorted `values` (nearest rank); NaN when empty.
fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

/// The median of `values`: the middle one, or the mean of the two middle ones.
pub fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    Some(if sorted.len() % 2 == 1 { sorted[mid] } else { (sorted[mid - 1] + sorted[mid]) / 2.0 })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use loadbench::report::{ConfigReport, LatencyReport, ScenarioReport};

    /// A scenario whose runs had these it/s and these p50 = p99 latencies (µs).
    fn scenario(runs: &[(f64, f64)]) -> ScenarioResult {
        scenario_with_runs("hello", runs)
    }

    /// Scenario `name`, whose runs (100 iterations each) had these it/s and these p50 = p99
    /// latencies (µs); for the tests of everything that compares runs.
    pub(crate) fn scenario_with_runs(name: &str, runs: &[(f64, f64)]) -> ScenarioResult {
        let config = ConfigReport { concurrency: 5, count: Some(100), timeout_ms: 1_000, ..ConfigReport::default() };
        let mut s = ScenarioResult::new(ScenarioReport::not_started(name, config));
        s.iterations = 100 * runs.len() as u64;
        s.ok = s.iterations;
        s.runs = runs
            .iter()
            .map(|&(rps, latency)| RunSample {
                started_at: String::new(),
                duration_us: 1_000,
                iterations: 100,
                failed: 0,
                ok: None,
                rps,
                latency_us: Some(LatencyReport {
                    mean: latency,
                    stdev: 0.0,
                    min: latency,
                    p50: latency,
                    p90: latency,
                    p95: latency,
                    p99: latency,
                    p99_9: latency,
                    max: latency,
                    percentiles: Default::default(),
                    spectrum: Vec::new(),
                    histogram: None,
                }),
                steps: Vec::new(),
                requests: Vec::new(),
            })
            .collect();
        s
    }

    fn verdict(old: &[(f64, f64)], new: &[(f64, f64)], noise: f64) -> Comparison {
        compare(&scenario(new), Some(&scenario(old)), "main", noise)
    }

    fn metric(c: &Comparison, metric: ComparedMetric) -> MetricChange {
        match c.metrics.iter().find(|m| m.metric == metric) {
            Some(m) => *m,
            None => panic!("no {metric:?} in {c:#?}"),
        }
    }

    #[test]
    fn a_clearly_slower_scenario_regressed() {
        let c = verdict(
            &[(1000.0, 200.0), (1020.0, 210.0), (990.0, 190.0)],
            &[(250.0, 20_200.0), (240.0, 20_500.0), (245.0, 20_300.0)],
            0.05,
        );
        assert_eq!(c.verdict, Verdict::Regressed);
        assert_eq!(c.method, Method::Bootstrap);
        assert_eq!((c.baseline_runs, c.runs), (3, 3));
        let p50 = metric(&c, ComparedMetric::P50);
        assert_eq!((p50.old, p50.new), (200.0, 20_300.0));
        assert!((p50.change - 100.5).abs() < 1e-9, "{p50:?}");
        assert_eq!(p50.verdict, Verdict::Regressed);
        let [low, high] = p50.confidence_interval.unwrap_or_default();
        assert!(low > 0.05 && low <= p50.change && p50.change <= high, "{p50:?}");
        assert_eq!(metric(&c, ComparedMetric::Rps).verdict, Verdict::Regressed, "fewer it/s is worse");
        assert_eq!(metric(&c, ComparedMetric::SuccessRate).verdict, Verdict::NoChange);
    }

    #[test]
    fn a_clearly_faster_scenario_improved() {
        let c = verdict(&[(250.0, 20_000.0), (260.0, 20_100.0)], &[(1000.0, 200.0), (990.0, 210.0)], 0.05);
        assert_eq!(c.verdict, Verdict::Improved);
        assert!(c.metrics.iter().all(|m| m.verdict != Verdict::Regressed), "{c:#?}");
    }

    #[test]
    fn overlapping_runs_are_no_change_even_when_the_medians_differ_beyond_the_noise() {
        // Medians 1000 → 1100 (+10 %) but the runs overlap: the interval straddles the noise.
        let c = verdict(
            &[(900.0, 1000.0), (1000.0, 1000.0), (1150.0, 1000.0)],
            &[(950.0, 1000.0), (1100.0, 1000.0), (1200.0, 1000.0)],
            0.05,
        );
        let rps = metric(&c, ComparedMetric::Rps);
        assert!((rps.change - 0.1).abs() < 1e-9, "{rps:?}");
        assert_eq!(rps.verdict, Verdict::NoChange, "{rps:?}");
        assert_eq!(c.verdict, Verdict::NoChange);
    }

    #[test]
    fn a_consistent_change_within_the_noise_threshold_is_no_change() {
        // Every run 3 % slower: beyond doubt, but below the 5 % that counts.
        let c = verdict(
            &[(1000.0, 100.0), (1001.0, 100.5), (999.0, 99.5)],
            &[(970.0, 103.0), (971.0, 103.5), (969.0, 102.5)],
            0.05,
        );
        assert_eq!(c.verdict, Verdict::NoChange, "{c:#?}");
        let p50 = metric(&c, ComparedMetric::P50);
        assert!(p50.confidence_interval.is_some_and(|[low, _]| low > 0.0), "a real but small change: {p50:?}");
        // With a 1 % noise threshold the same data is a regression.
        assert_eq!(
            verdict(
                &[(1000.0, 100.0), (1001.0, 100.5), (999.0, 99.5)],
                &[(970.0, 103.0), (971.0, 103.5), (969.0, 102.5)],
                0.01
            )
            .verdict,
            Verdict::Regressed
        );
    }

    #[test]
    fn the_same_data_always_gets_the_same_interval() {
        let old = [(1000.0, 100.0), (1100.0, 90.0), (950.0, 120.0), (1020.0, 95.0)];
        let new = [(990.0, 110.0), (1080.0, 97.0), (1010.0, 101.0), (930.0, 115.0)];
        assert_eq!(verdict(&old, &new, 0.05), verdict(&old, &new, 0.05));
    }

    #[test]
    fn one_run_on_a_side_compares_the_plain_change_and_says_so() {
        let c = verdict(&[(1000.0, 100.0)], &[(1000.0, 110.0), (1000.0, 111.0), (1000.0, 112.0)], 0.05);
        assert_eq!(c.method, Method::SingleRun);
        let p50 = metric(&c, ComparedMetric::P50);
        assert_eq!(p50.confidence_interval, None);
        assert!((p50.change - 0.11).abs() < 1e-9);
        assert_eq!(c.verdict, Verdict::Regressed);
        assert_eq!(verdict(&[(1000.0, 100.0)], &[(1000.0, 104.0)], 0.05).verdict, Verdict::NoChange);
    }

    #[test]
    fn a_report_without_runs_is_one_run() {
        let mut old = ScenarioResult { runs: Vec::new(), ..scenario(&[]) };
        old.rps = 1000.0;
        old.iterations = 100;
        old.ok = 100;
        old.latency_us = scenario(&[(0.0, 100.0)]).runs[0].latency_us.clone();
        let c = compare(&scenario(&[(1000.0, 300.0)]), Some(&old), "main", 0.05);
        assert_eq!((c.baseline_runs, c.method), (1, Method::SingleRun));
        assert_eq!(metric(&c, ComparedMetric::P50).old, 100.0);
        assert_eq!(c.verdict, Verdict::Regressed);
    }

    #[test]
    fn failing_fast_is_not_an_improvement() {
        let old = scenario(&[(1000.0, 1000.0), (1000.0, 1000.0)]);
        let mut new = scenario(&[(5000.0, 100.0), (5000.0, 100.0)]);
        for run in &mut new.runs {
            run.failed = 90;
        }
        let c = compare(&new, Some(&old), "main", 0.05);
        assert_eq!(metric(&c, ComparedMetric::SuccessRate).verdict, Verdict::Regressed);
        assert_eq!(c.verdict, Verdict::Regressed, "{c:#?}");
    }

    #[test]
    fn a_lower_success_rate_is_a_regression_whatever_the_speed() {
        // Every other figure better: more successes per second, lower latency.
        let old = scenario(&[(1000.0, 1000.0), (1000.0, 1000.0)]);
        let mut new = scenario(&[(3000.0, 100.0), (3000.0, 100.0)]);
        for run in &mut new.runs {
            run.failed = 30;
        }
        let c = compare(&new, Some(&old), "main", 0.05);
        assert_eq!(metric(&c, ComparedMetric::Rps).verdict, Verdict::Improved);
        assert_eq!(metric(&c, ComparedMetric::P50).verdict, Verdict::Improved);
        assert_eq!(metric(&c, ComparedMetric::SuccessRate).verdict, Verdict::Regressed);
        assert_eq!(c.verdict, Verdict::Regressed, "{c:#?}");
    }

    #[test]
    fn new_and_incomparable_scenarios_have_no_metrics() {
        let current = scenario(&[(1000.0, 100.0)]);
        let c = compare(&current, None, "main", 0.05);
        assert_eq!((c.verdict, c.method), (Verdict::New, Method::None));
        assert!(c.metrics.is_empty());

        let mut other_load = scenario(&[(1000.0, 100.0)]);
        other_load.config.concurrency = 50;
        other_load.config.count = None;
        other_load.config.duration_ms = Some(3_000);
        let c = compare(&current, Some(&other_load), "main", 0.05);
        assert_eq!(c.verdict, Verdict::NotComparable);
        assert_eq!(
            c.reason.as_deref(),
            Some(
                "the load differs: concurrency 50 in the baseline, 5 now, count unset in the baseline, 100 now, \
                 duration_ms 3000 in the baseline, unset now"
            )
        );
        assert!(c.metrics.is_empty());

        let mut open_model = scenario(&[(1000.0, 100.0)]);
        open_model.config.rate = Some(500.0);
        open_model.config.think_time_ms = Some((10, 20));
        let c = compare(&current, Some(&open_model), "main", 0.05);
        assert_eq!(c.verdict, Verdict::NotComparable);
        assert_eq!(
            c.reason.as_deref(),
            Some(
                "the load differs: rate 500/s in the baseline, unset now, think_time 10ms..20ms in the baseline, unset now"
            )
        );

        let mut broken = scenario(&[]);
        broken.setup_error = Some("refused".into());
        assert_eq!(compare(&broken, Some(&current), "main", 0.05).reason.as_deref(), Some("it did not run"));
    }

    #[test]
    fn medians() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3.0]), Some(3.0));
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
    }
}
