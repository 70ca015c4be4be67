//! The rounds merged: counts added, rates and latencies the runs' medians.

use super::*;
use loadbench::report::{ConfigReport, ScenarioReport};

fn scenario(name: &str, rps: f64, p50: f64, failed: u64) -> ScenarioResult {
    let config = ConfigReport { concurrency: 2, count: Some(10), timeout_ms: 1_000, ..ConfigReport::default() };
    let mut s = ScenarioResult::new(ScenarioReport::not_started(name, config));
    s.package = Some("shop".into());
    s.bench = Some("api".into());
    s.iterations = 10;
    s.failed = failed;
    s.ok = 10 - failed;
    s.errors.status = failed;
    s.duration_us = 1_000;
    s.rps = rps;
    s.http.responses = 10;
    s.http.status = [(200, 10 - failed), (500, failed)].into_iter().filter(|&(_, n)| n > 0).collect();
    s.latency_us = Some(LatencyReport {
        mean: p50,
        stdev: 1.0,
        min: p50 / 2.0,
        p50,
        p90: p50 * 2.0,
        p95: p50 * 2.0,
        p99: p50 * 3.0,
        p99_9: p50 * 4.0,
        max: p50 * 5.0,
        percentiles: Default::default(),
        spectrum: Vec::new(),
        histogram: None,
    });
    s
}

fn round(scenarios: Vec<ScenarioResult>) -> Results {
    let mut report = Results::new(std::time::SystemTime::UNIX_EPOCH);
    report.scenarios = scenarios;
    report
}

#[test]
fn counts_add_up_and_rates_and_latencies_are_medians() {
    let rounds = vec![
        round(vec![scenario("hello", 100.0, 10.0, 0), scenario("status", 50.0, 1.0, 0)]),
        round(vec![scenario("hello", 300.0, 30.0, 1), scenario("status", 60.0, 2.0, 0)]),
        round(vec![scenario("hello", 200.0, 20.0, 2), scenario("status", 55.0, 3.0, 0)]),
    ];
    let merged = merge(rounds, round(Vec::new()));
    let names: Vec<&str> = merged.scenarios.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["hello", "status"]);
    let hello = &merged.scenarios[0];
    assert_eq!((hello.iterations, hello.ok, hello.failed, hello.errors.status), (30, 27, 3, 3));
    assert_eq!(hello.http.status.get(&500), Some(&3));
    assert_eq!(hello.http.status.get(&200), Some(&27));
    assert_eq!(hello.duration_us, 3_000);
    assert_eq!(hello.rps, 200.0);
    let latency = hello.latency_us.as_ref().unwrap_or_else(|| panic!("latency"));
    assert_eq!((latency.p50, latency.p99, latency.max), (20.0, 60.0, 100.0));
    let run_rps: Vec<f64> = hello.runs.iter().map(|r| r.rps).collect();
    assert_eq!(run_rps, [100.0, 300.0, 200.0], "every run, in order");
    assert_eq!(hello.runs[2].failed, 2);
}

#[test]
fn quic_counts_add_up_and_its_times_are_medians() {
    let rounds: Vec<Results> = [(10.0, 4, 3), (30.0, 2, 2), (20.0, 0, 0)]
        .into_iter()
        .map(|(p50, offered, accepted)| {
            let mut s = scenario("quic", 100.0, p50, 0);
            s.quic = Some(loadbench::report::QuicReport {
                zero_rtt_offered: offered,
                zero_rtt_accepted: accepted,
                zero_rtt_us: (offered > 0).then(|| s.latency_us.clone()).flatten(),
                ttfb_us: s.latency_us.clone(),
            });
            round(vec![s])
        })
        .collect();
    let merged = merge(rounds, round(Vec::new()));
    let quic = merged.scenarios[0].quic.as_ref().unwrap_or_else(|| panic!("a quic part"));
    assert_eq!((quic.zero_rtt_offered, quic.zero_rtt_accepted), (6, 5));
    assert_eq!(quic.ttfb_us.as_ref().map(|l| l.p50), Some(20.0), "the median of 10, 30 and 20");
    assert_eq!(quic.zero_rtt_us.as_ref().map(|l| l.p50), Some(20.0), "the median of the two that offered");
}

#[test]
fn open_model_figures_and_steps_merge_like_the_scenario_s_own() {
    let rounds: Vec<Results> = [(1_900.0, 5, 10.0), (2_000.0, 0, 30.0), (1_950.0, 1, 20.0)]
        .into_iter()
        .map(|(achieved, dropped, p50)| {
            let mut s = scenario("open", achieved, p50, 0);
            s.rate = Some(loadbench::report::RateReport { requested: 2_000.0, achieved });
            s.dropped = dropped;
            s.steps = vec![StepReport {
                name: "insert".into(),
                iterations: 10,
                ok: 9,
                failed: 1,
                errors: ErrorCounts { io: 1, ..Default::default() },
                causes: Default::default(),
                latency_us: s.latency_us.clone(),
            }];
            round(vec![s])
        })
        .collect();
    let merged = merge(rounds, round(Vec::new()));
    let open = &merged.scenarios[0];
    assert_eq!(open.dropped, 6);
    assert_eq!(open.rate.map(|r| (r.requested, r.achieved)), Some((2_000.0, 1_950.0)));
    let insert = &open.steps[0];
    assert_eq!((insert.iterations, insert.ok, insert.failed, insert.errors.io), (30, 27, 3, 3));
    assert_eq!(insert.latency_us.as_ref().map(|l| l.p50), Some(20.0));
}

#[test]
fn warnings_and_asked_percentiles_survive_the_merge() {
    let rounds: Vec<Results> = [10.0, 30.0, 20.0]
        .into_iter()
        .enumerate()
        .map(|(i, p75)| {
            let mut s = scenario("hello", 100.0, 10.0, 0);
            if let Some(latency) = &mut s.latency_us {
                latency.percentiles.insert("p75".into(), p75);
            }
            if i == 1 {
                let kind = loadbench::report::WarningKind::TooFast;
                s.warnings = vec![Warning { kind, message: "too fast".into() }];
            }
            round(vec![s])
        })
        .collect();
    let merged = merge(rounds, round(Vec::new()));
    let hello = &merged.scenarios[0];
    assert_eq!(hello.warnings.iter().map(|w| w.message.as_str()).collect::<Vec<_>>(), ["too fast"]);
    assert_eq!(hello.latency_us.as_ref().and_then(|l| l.percentiles.get("p75")), Some(&20.0));
}

#[test]
fn named_requests_merge_like_steps_and_checks_add_up() {
    let rounds: Vec<Results> = [(10.0, 1, false), (30.0, 0, true), (20.0, 2, true)]
        .into_iter()
        .map(|(p50, fails, later_check)| {
            let mut s = scenario("items", 100.0, p50, 0);
            s.requests = vec![StepReport {
                name: "GET /items/{id}".into(),
                iterations: 10,
                ok: 10 - fails,
                failed: fails,
                errors: ErrorCounts { status: fails, ..Default::default() },
                causes: Default::default(),
                latency_us: s.latency_us.clone(),
            }];
            s.checks = vec![CheckReport { name: "has id".into(), passes: 10 - fails, fails }];
            if later_check {
                s.checks.push(CheckReport { name: "later".into(), passes: 1, fails: 0 });
            }
            round(vec![s])
        })
        .collect();
    let merged = merge(rounds, round(Vec::new()));
    let items = &merged.scenarios[0];
    assert!(items.steps.is_empty(), "{:?}", items.steps);
    let row = &items.requests[0];
    assert_eq!((row.name.as_str(), row.iterations, row.ok, row.failed), ("GET /items/{id}", 30, 27, 3));
    assert_eq!(row.errors.status, 3);
    assert_eq!(row.latency_us.as_ref().map(|l| l.p50), Some(20.0), "the median run's");
    let checks: Vec<(&str, u64, u64)> = items.checks.iter().map(|c| (c.name.as_str(), c.passes, c.fails)).collect();
    assert_eq!(checks, [("has id", 27, 3), ("later", 2, 0)], "in the order first made");
}

#[test]
fn one_run_keeps_its_figures_and_records_itself() {
    let merged = merge(vec![round(vec![scenario("hello", 123.0, 7.0, 0)])], round(Vec::new()));
    let hello = &merged.scenarios[0];
    assert_eq!((hello.rps, hello.iterations), (123.0, 10));
    assert_eq!(hello.runs.len(), 1);
    assert_eq!(hello.runs[0].rps, 123.0);
}

#[test]
fn one_run_keeps_its_histogram_and_several_keep_theirs_in_runs() {
    let with_histogram = |rps: f64| {
        let mut s = scenario("hello", rps, 7.0, 0);
        if let Some(latency) = &mut s.latency_us {
            latency.histogram = Some(format!("histogram of {rps}"));
        }
        s
    };
    let histogram = |latency: Option<&LatencyReport>| latency.and_then(|l| l.histogram.clone());
    let one = merge(vec![round(vec![with_histogram(1.0)])], round(Vec::new()));
    assert_eq!(histogram(one.scenarios[0].latency_us.as_ref()).as_deref(), Some("histogram of 1"));
    let two = merge(vec![round(vec![with_histogram(1.0)]), round(vec![with_histogram(2.0)])], round(Vec::new()));
    let hello = &two.scenarios[0];
    assert_eq!(histogram(hello.latency_us.as_ref()), None, "a median of runs is no one histogram");
    let runs: Vec<Option<String>> = hello.runs.iter().map(|r| histogram(r.latency_us.as_ref())).collect();
    assert_eq!(runs, [Some("histogram of 1".to_owned()), Some("histogram of 2".to_owned())]);
}

#[test]
fn runs_against_different_servers_stay_apart_in_the_order_they_first_ran() {
    let against = |target: &str, rps: f64| {
        let mut s = scenario("hello", rps, 1.0, 0);
        s.target_name = Some(target.into());
        s
    };
    let rounds = (0..3).map(|r| round(vec![against("fast", 300.0 + f64::from(r)), against("slow", 100.0)])).collect();
    let merged = merge(rounds, round(Vec::new()));
    let merged: Vec<(Option<&str>, usize, f64)> =
        merged.scenarios.iter().map(|s| (s.target_name.as_deref(), s.runs.len(), s.rps)).collect();
    assert_eq!(merged, [(Some("fast"), 3, 301.0), (Some("slow"), 3, 100.0)]);
}

#[test]
fn scenarios_of_different_targets_stay_apart_and_a_failed_run_is_a_setup_error() {
    let mut other = scenario("hello", 1.0, 1.0, 0);
    other.bench = Some("admin".into());
    let mut broken = scenario("hello", 0.0, 0.0, 0);
    broken.setup_error = Some("its bench binary failed".into());
    broken.latency_us = None;
    let merged =
        merge(vec![round(vec![scenario("hello", 100.0, 10.0, 0), other]), round(vec![broken])], round(Vec::new()));
    assert_eq!(merged.scenarios.len(), 2);
    let hello = &merged.scenarios[0];
    assert_eq!(hello.setup_error.as_deref(), Some("its bench binary failed"));
    assert_eq!(hello.runs.len(), 1, "only the run that ran has figures");
    assert_eq!(hello.rps, 100.0);
}

#[test]
fn a_saturated_round_keeps_what_limited_it() {
    let generator = |limit: Option<loadbench::report::GeneratorLimit>| loadbench::report::GeneratorReport {
        worker_threads: 2,
        cpu_seconds: Some(0.04),
        cpu_utilization: Some(0.02),
        lag_p99_us: Some(if limit.is_some() { 31_000 } else { 100 }),
        lag_max_us: None,
        saturated: limit.is_some(),
        waited_for_cpu: Some(if limit.is_some() { 0.4 } else { 0.0 }),
        limit,
        read_delay_p99_us: None,
        read_delay_max_us: None,
        late_reads: false,
    };
    let mut calm = scenario("hello", 100.0, 10.0, 0);
    calm.generator = Some(generator(None));
    let mut busy = scenario("hello", 90.0, 12.0, 0);
    busy.generator = Some(generator(Some(loadbench::report::GeneratorLimit::MachineBusy)));
    let merged = merge(vec![round(vec![calm]), round(vec![busy])], round(Vec::new()));
    let kept = merged.scenarios[0].generator.clone().unwrap_or_else(|| panic!("a self-check"));
    assert_eq!(kept.limit, Some(loadbench::report::GeneratorLimit::MachineBusy), "{kept:?}");
    assert_eq!(kept.waited_for_cpu, Some(0.4));
}
