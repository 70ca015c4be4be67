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
pub(crate) mod tests;
