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
