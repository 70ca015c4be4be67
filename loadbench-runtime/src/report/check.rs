//! Checking a finished scenario against its thresholds, as k6 does: the one place that decides
//! whether a scenario met them. A bench binary run on its own and `cargo loadbench` both call
//! [`evaluate`], so they can never disagree. (How a threshold is written is the shared grammar's,
//! re-exported as [`crate::threshold`].)
//!
//! A threshold on a row (`thresholds("login": p99 < "1s")`) is judged on the figures of the
//! scenario's step and named request of that name ([`check_row`]); when neither was recorded it
//! fails, saying so, as a misspelt name would otherwise leave the gate silently open.
//!
//! Conditions on the generator (`dropped`, `rate`, `saturated`) are judged here too, by
//! [`inconclusive`]: when one fails, the figures are the generator's and the run is inconclusive,
//! not failed. Each has a default, which a threshold of the scenario's own on that metric
//! replaces.

use std::fmt::Write as _;

use loadbench_grammar::{Metric, Op, RowThreshold, Threshold};

use super::units::thousands;

use super::{ScenarioReport, StepReport, ThresholdOutcome};

/// The figure of `scenario` that `metric` tests, in the unit of [`Threshold::value`]; `None` when
/// it was not measured (a latency when no iteration succeeded, an error rate when none finished).
pub fn measure(metric: Metric, scenario: &ScenarioReport) -> Option<f64> {
    let latency = scenario.latency_us.as_ref();
    match metric {
        // A percentile the run was not asked for is not in the report: not measured.
        Metric::Percentile(p) => latency.and_then(|l| l.percentile(p)),
        Metric::Max => latency.map(|l| l.max),
        Metric::Mean => latency.map(|l| l.mean),
        // Of the iterations that ended in success or failure: one cancelled at the end of the run
        // is neither.
        Metric::ErrorRate => {
            let attempts = scenario.ok + scenario.failed;
            (attempts > 0).then(|| scenario.failed as f64 / attempts as f64)
        }
        // Successful iterations per second: `rps > 1000` is not met by a server failing fast.
        Metric::Rps => Some(scenario.rps),
        Metric::Failed => Some(scenario.failed as f64),
        // Of every check made, the fraction that passed; no check made, nothing measured.
        Metric::Checks => {
            let passes: u64 = scenario.checks.iter().map(|c| c.passes).sum();
            let made = passes + scenario.checks.iter().map(|c| c.fails).sum::<u64>();
            (made > 0).then(|| passes as f64 / made as f64)
        }
        // Open model only: of the arrivals due, the share no free user could take.
        Metric::Dropped => scenario.rate.map(|_| {
            let due = scenario.iterations + scenario.dropped;
            if due == 0 { 0.0 } else { scenario.dropped as f64 / due as f64 }
        }),
        Metric::Rate => scenario.rate.filter(|r| r.requested > 0.0).map(|r| r.achieved / r.requested),
        Metric::Saturated => scenario.generator.as_ref().map(|g| if g.saturated { 1.0 } else { 0.0 }),
        // The grammar's list is non-exhaustive; a metric this runtime cannot measure fails.
        _ => None,
    }
}

/// The conditions on the generator that hold unless a scenario sets its own on the same metric:
/// at most 1 % of the open model's arrivals dropped, at least 95 % of the asked rate reached, and
/// the self-check not saturated.
pub const GENERATOR_DEFAULTS: [Threshold; 3] = [
    Threshold { metric: Metric::Dropped, op: Op::Le, value: 0.01 },
    Threshold { metric: Metric::Rate, op: Op::Ge, value: 0.95 },
    Threshold { metric: Metric::Saturated, op: Op::Lt, value: 1.0 },
];

/// Whether `scenario` meets `threshold`, with the measured value.
pub fn check(threshold: &Threshold, scenario: &ScenarioReport) -> ThresholdOutcome {
    let actual = measure(threshold.metric, scenario);
    let passed = match actual {
        Some(a) => threshold.op.holds(a, threshold.value),
        // A condition on the generator judges it where it applies: `rate` and `dropped` in the
        // open model, `saturated` once the self-check ran.
        None if threshold.metric.is_generator() => true,
        // An unmeasured figure fails: "p99 < 50ms" is not met by a run where nothing succeeded.
        None => false,
    };
    ThresholdOutcome::scenario(*threshold, actual, passed)
}

/// The figure of `row` (a step or a named request of `scenario`) that `metric` tests, in the
/// unit of [`Threshold::value`]: its latencies, `error_rate` (its failed runs over its runs),
/// `rps` (its runs per second of the scenario's time) and `failed`; `None` when not measured (a
/// latency when no run succeeded) or not a row's figure ([`Metric::applies_to_rows`]).
pub fn measure_row(metric: Metric, row: &StepReport, scenario: &ScenarioReport) -> Option<f64> {
    let latency = row.latency_us.as_ref();
    match metric {
        Metric::Percentile(p) => latency.and_then(|l| l.percentile(p)),
        Metric::Max => latency.map(|l| l.max),
        Metric::Mean => latency.map(|l| l.mean),
        Metric::ErrorRate => (row.iterations > 0).then(|| row.failed as f64 / row.iterations as f64),
        Metric::Rps => (scenario.duration_us > 0).then(|| row.iterations as f64 * 1e6 / scenario.duration_us as f64),
        Metric::Failed => Some(row.failed as f64),
        _ => None,
    }
}

/// Whether the rows of `scenario` named `threshold.row` meet it: every step and named request of
/// that name is held to it, and the outcome carries the figure of the first that fails it, or,
/// when all meet it, of the one nearest its limit. No row of the name fails, saying so.
pub fn check_row(threshold: &RowThreshold, scenario: &ScenarioReport) -> ThresholdOutcome {
    let t = threshold.threshold;
    let judged: Vec<(Option<f64>, bool)> = scenario
        .steps
        .iter()
        .chain(&scenario.requests)
        .filter(|row| row.name == threshold.row)
        .map(|row| {
            let actual = measure_row(t.metric, row, scenario);
            (actual, actual.is_some_and(|a| t.op.holds(a, t.value)))
        })
        .collect();
    // The nearer a figure is to the limit, the larger this: a latency's own value under `<`.
    let nearness = |actual: Option<f64>| match (actual, t.op) {
        (Some(a), Op::Lt | Op::Le) => a,
        (Some(a), _) => -a,
        (None, _) => f64::INFINITY,
    };
    let chosen = judged
        .iter()
        .find(|(_, passed)| !passed)
        .or_else(|| judged.iter().max_by(|a, b| nearness(a.0).total_cmp(&nearness(b.0))));
    let (actual, passed) = chosen.copied().unwrap_or((None, false));
    ThresholdOutcome {
        threshold: t,
        actual,
        passed,
        row: Some(threshold.row.to_string()),
        row_missing: judged.is_empty(),
    }
}

/// Checks every threshold in `scenario.config.thresholds` against its figures, then those of
/// `scenario.config.row_thresholds` against its rows' ([`check_row`]).
///
/// A scenario that did not run at all ([`ScenarioReport::setup_error`]) has no outcomes: it is
/// reported as not run (exit code 3), which says more than a list of unmeasured figures.
pub fn evaluate(scenario: &ScenarioReport) -> Vec<ThresholdOutcome> {
    if scenario.setup_error.is_some() {
        return Vec::new();
    }
    let rows = scenario.config.row_thresholds.iter().map(|t| check_row(t, scenario));
    scenario.config.thresholds.iter().map(|t| check(t, scenario)).chain(rows).collect()
}

/// The conditions on the generator that `scenario` failed: its own thresholds on `dropped`,
/// `rate` and `saturated`, and [`GENERATOR_DEFAULTS`] on the metrics it has none on. Empty for a
/// scenario that did not run.
pub fn inconclusive(scenario: &ScenarioReport) -> Vec<ThresholdOutcome> {
    // A run that stopped because nothing listened fell short of its rate by stopping: it
    // measured nothing ([`measured_nothing`]), which says more.
    if scenario.setup_error.is_some() || scenario.nothing_listening.is_some() {
        return Vec::new();
    }
    let own = scenario.config.thresholds.iter().filter(|t| t.metric.is_generator());
    let defaults =
        GENERATOR_DEFAULTS.iter().filter(|d| !scenario.config.thresholds.iter().any(|t| t.metric == d.metric));
    own.chain(defaults).map(|t| check(t, scenario)).filter(|o| !o.passed).collect()
}

/// Judges a finished scenario: its [`ScenarioReport::thresholds`] ([`evaluate`]) and its
/// [`ScenarioReport::inconclusive`] conditions ([`inconclusive`]).
pub fn judge(scenario: &mut ScenarioReport) {
    scenario.thresholds = evaluate(scenario);
    scenario.inconclusive = inconclusive(scenario);
}

/// Whether any threshold on the server recorded in `scenario` failed (one on the generator makes
/// the scenario inconclusive instead: [`ScenarioReport::inconclusive`]).
pub fn any_failed(scenario: &ScenarioReport) -> bool {
    scenario.thresholds.iter().any(|o| !o.passed && !o.threshold.metric.is_generator())
}

/// Whether `scenario` ran and measured nothing of the server: not one iteration succeeded. Such a
/// run fails (unless `--allow-failures`): its figures say only that the server never answered as
/// the scenario expected. A scenario that could not run or was interrupted is judged as such.
pub fn measured_nothing(scenario: &ScenarioReport) -> bool {
    scenario.setup_error.is_none() && !scenario.interrupted && scenario.ok == 0
}

/// The line that says why a scenario [measured nothing](measured_nothing): `no iteration
/// succeeded (1,000 of 1,000 failed, most often 1,000 × status: GET /: status 404)`.
///
/// When nothing was listening, the hint: `no iteration succeeded: nothing is listening at
/// 127.0.0.1:18008: is the server started? (…)`.
pub fn measured_nothing_line(scenario: &ScenarioReport) -> String {
    if let Some(hint) = super::refused::line(scenario) {
        return format!("no iteration succeeded: {hint}");
    }
    let mut line = "no iteration succeeded".to_owned();
    if scenario.failed > 0 {
        let _ = write!(line, " ({} of {} failed", thousands(scenario.failed), thousands(scenario.iterations));
        if let Some(top) = scenario.causes.top.first() {
            let _ = write!(line, ", most often {} × {}: {}", thousands(top.count), top.kind, top.message);
        }
        line.push(')');
    }
    line
}

/// The line that closes a run for a scenario (`label`) that [measured nothing](measured_nothing):
/// `error: LABEL: no iteration succeeded (…); add --allow-failures to pass such a run`, or, when
/// `allowed_by` names the flag that lets it pass, `note: …; not failing the run (--allow-failures)`.
/// A bench binary and `cargo loadbench` close their runs with the same words.
pub fn measured_nothing_verdict(label: &str, scenario: &ScenarioReport, allowed_by: Option<&str>) -> String {
    let line = format!("{label}: {}", measured_nothing_line(scenario));
    match allowed_by {
        Some(flag) => format!("note: {line}; not failing the run ({flag})"),
        None => format!("error: {line}; add --allow-failures to pass such a run"),
    }
}

/// The line that closes a run whose scenarios `labels` were inconclusive (its exit code 4), or,
/// when `allowed_by` names the flag that lets it pass, the note that says so.
pub fn inconclusive_verdict(labels: &[&str], allowed_by: Option<&str>) -> String {
    let names = labels.join(", ");
    match allowed_by {
        Some(flag) => format!(
            "note: inconclusive: {names}: the figures are the generator's, not the server's; not failing the run ({flag})"
        ),
        None => format!(
            "error: inconclusive: {names}: the figures are the generator's, not the server's (see `inconclusive:` \
             above); exit code 4; add --allow-inconclusive to pass such a run"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{CheckReport, ConfigReport, LatencyReport};

    fn parse(s: &str) -> Threshold {
        s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn scenario() -> ScenarioReport {
        let config = ConfigReport { concurrency: 1, count: Some(100), timeout_ms: 1_000, ..ConfigReport::default() };
        let mut s = ScenarioReport::not_started("hello", config);
        s.iterations = 100;
        s.ok = 98;
        s.failed = 2;
        s.rps = 1_500.0;
        s.latency_us = Some(LatencyReport {
            mean: 900.0,
            stdev: 10.0,
            min: 100.0,
            p50: 800.0,
            p90: 1_000.0,
            p95: 1_500.0,
            p99: 2_000.0,
            p99_9: 3_000.0,
            max: 4_000.0,
            percentiles: [("p75".to_owned(), 850.0)].into_iter().collect(),
            spectrum: Vec::new(),
            histogram: None,
        });
        s.checks = vec![
            CheckReport { name: "status".into(), passes: 100, fails: 0 },
            CheckReport { name: "has id".into(), passes: 90, fails: 10 },
        ];
        s
    }

    #[test]
    fn evaluation_compares_the_measured_figures() {
        let mut s = scenario();
        s.config.thresholds =
            ["p99<2ms", "p99<=2ms", "error_rate<0.01", "error_rate<=2%", "rps>1000", "failed<2", "mean<1ms"]
                .map(parse)
                .to_vec();
        let outcomes = evaluate(&s);
        let passed: Vec<bool> = outcomes.iter().map(|o| o.passed).collect();
        assert_eq!(passed, [false, true, false, true, true, false, true]);
        assert_eq!(outcomes[0].to_string(), "p99 < 2ms (was 2.00ms)");
        assert_eq!(outcomes[2].to_string(), "error_rate < 0.01 (was 0.02)");
        assert_eq!(outcomes[5].to_string(), "failed < 2 (was 2)");
    }

    #[test]
    fn unmeasured_figures_fail_and_scenarios_that_did_not_run_have_no_outcomes() {
        let mut s = scenario();
        s.latency_us = None;
        s.config.thresholds = vec![parse("p99<1s"), parse("failed<=100")];
        let outcomes = evaluate(&s);
        assert!(!outcomes[0].passed, "{outcomes:?}");
        assert_eq!(outcomes[0].to_string(), "p99 < 1s (not measured: no iteration succeeded)");
        assert!(outcomes[1].passed);

        s.setup_error = Some("target does not resolve".into());
        assert!(evaluate(&s).is_empty());
    }

    #[test]
    fn checks_are_the_fraction_of_all_checks_that_passed() {
        let mut s = scenario();
        s.config.thresholds = ["checks > 0.95", "checks >= 95%", "checks > 0.9"].map(parse).to_vec();
        let outcomes = evaluate(&s);
        assert_eq!(outcomes.iter().map(|o| o.passed).collect::<Vec<_>>(), [false, true, true]);
        assert_eq!(outcomes[0].to_string(), "checks > 0.95 (was 0.95)");

        s.checks.clear();
        let outcomes = evaluate(&s);
        assert!(outcomes.iter().all(|o| !o.passed), "{outcomes:?}");
        assert_eq!(outcomes[2].to_string(), "checks > 0.9 (not measured: no check was made)");
    }

    #[test]
    fn any_percentile_the_run_computed_is_measured_and_others_are_not() {
        let mut s = scenario();
        s.config.thresholds = ["p95<2ms", "p95<1ms", "p75<=850us", "p99_99<1h"].map(parse).to_vec();
        let outcomes = evaluate(&s);
        assert_eq!(
            outcomes.iter().map(|o| o.actual).collect::<Vec<_>>(),
            [Some(1_500.0), Some(1_500.0), Some(850.0), None]
        );
        assert_eq!(outcomes.iter().map(|o| o.passed).collect::<Vec<_>>(), [true, false, true, false]);
        assert_eq!(outcomes[1].to_string(), "p95 < 1ms (was 1.50ms)");
        assert_eq!(
            outcomes[3].to_string(),
            "p99_99 < 1h (not measured: no iteration succeeded, or p99_99 was not computed)"
        );
    }

    #[test]
    fn every_metric_of_the_grammar_is_measured() {
        // An open-model run whose self-check ran: every condition on the generator applies.
        let mut s = scenario();
        s.rate = Some(crate::report::RateReport { requested: 1_000.0, achieved: 990.0 });
        s.generator = Some(crate::report::GeneratorReport {
            worker_threads: 1,
            cpu_seconds: None,
            cpu_utilization: None,
            lag_p99_us: None,
            lag_max_us: None,
            saturated: false,
            waited_for_cpu: None,
            limit: None,
            read_delay_p99_us: None,
            read_delay_max_us: None,
            late_reads: false,
        });
        for metric in Metric::ALL {
            assert!(measure(metric, &s).is_some(), "{metric} is not measured");
        }
        assert_eq!(measure(Metric::Rate, &s), Some(0.99));
        assert_eq!(measure(Metric::Saturated, &s), Some(0.0));
    }

    #[test]
    fn conditions_on_the_generator_judge_only_where_they_apply() {
        // Closed model, self-check not run: neither `rate` nor `dropped` nor `saturated` applies.
        let mut s = scenario();
        s.config.thresholds = ["rate >= 95%", "dropped <= 1%", "saturated < 1"].map(parse).to_vec();
        judge(&mut s);
        assert!(s.thresholds.iter().all(|o| o.passed && o.actual.is_none()), "{:?}", s.thresholds);
        assert!(s.inconclusive.is_empty());
    }

    #[test]
    fn a_run_closes_with_one_line_an_error_or_when_allowed_a_note() {
        let mut s = scenario();
        s.ok = 0;
        s.failed = 100;
        assert_eq!(
            measured_nothing_verdict("api/hello", &s, None),
            "error: api/hello: no iteration succeeded (100 of 100 failed); add --allow-failures to pass such a run"
        );
        assert_eq!(
            measured_nothing_verdict("api/hello", &s, Some("--allow-failures")),
            "note: api/hello: no iteration succeeded (100 of 100 failed); not failing the run (--allow-failures)"
        );
        assert!(inconclusive_verdict(&["a", "b"], None).starts_with("error: inconclusive: a, b: "));
        assert!(inconclusive_verdict(&["a"], None).contains("exit code 4; add --allow-inconclusive"));
        assert!(inconclusive_verdict(&["a"], Some("--no-gate")).ends_with("not failing the run (--no-gate)"));
    }

    #[test]
    fn a_scenario_with_no_success_measured_nothing() {
        let mut s = scenario();
        assert!(!measured_nothing(&s));
        s.ok = 0;
        s.failed = 100;
        s.causes = crate::report::Causes::from_counts([(("status".to_owned(), "GET /: status 404".to_owned()), 100)]);
        assert!(measured_nothing(&s));
        assert_eq!(
            measured_nothing_line(&s),
            "no iteration succeeded (100 of 100 failed, most often 100 × status: GET /: status 404)"
        );
        s.setup_error = Some("no target".to_owned());
        assert!(!measured_nothing(&s), "did not run: judged as such");
    }

    fn row(name: &str, iterations: u64, failed: u64, p99: Option<f64>) -> crate::report::StepReport {
        let latency = p99.map(|p99| LatencyReport { p99, max: p99 * 2.0, ..scenario().latency_us.unwrap() });
        crate::report::StepReport {
            name: name.to_owned(),
            iterations,
            ok: iterations - failed,
            failed,
            errors: Default::default(),
            causes: Default::default(),
            latency_us: latency,
        }
    }

    #[test]
    fn a_row_threshold_is_judged_on_that_rows_figures() {
        let mut s = scenario();
        s.duration_us = 2_000_000;
        s.requests = vec![row("GET /cart", 100, 5, Some(30_000.0)), row("login", 10, 0, Some(900.0))];
        s.config.row_thresholds =
            ["{GET /cart}: p99 < 50ms", "{GET /cart}: p99 < 10ms", "{GET /cart}: error_rate < 1%"]
                .into_iter()
                .chain([
                    "{GET /cart}: rps >= 50",
                    "{GET /cart}: failed <= 5",
                    "{login}: max < 1ms",
                    "{login}: max < 2ms",
                ])
                .map(|t| t.parse().unwrap_or_else(|e| panic!("{t}: {e}")))
                .collect();
        let outcomes = evaluate(&s);
        assert_eq!(
            outcomes.iter().map(|o| o.passed).collect::<Vec<_>>(),
            [true, false, false, true, true, false, true]
        );
        assert_eq!(outcomes[1].to_string(), "{GET /cart}: p99 < 10ms (was 30.0ms)");
        assert_eq!(outcomes[2].to_string(), "{GET /cart}: error_rate < 0.01 (was 0.05)");
        assert_eq!(outcomes[3].actual, Some(50.0), "100 runs in 2 s");
        assert_eq!(outcomes[5].actual, Some(1_800.0));
    }

    #[test]
    fn a_row_threshold_holds_a_step_and_a_request_of_the_name_and_fails_with_none() {
        let mut s = scenario();
        s.steps = vec![row("pay", 10, 0, Some(80_000.0))];
        s.requests = vec![row("pay", 10, 0, Some(20_000.0))];
        s.config.row_thresholds = ["{pay}: p99 < 100ms", "{pay}: p99 < 50ms", "{pya}: p99 < 1s", "{pay}: p99 > 1ms"]
            .map(|t| t.parse().unwrap_or_else(|e| panic!("{t}: {e}")))
            .to_vec();
        judge(&mut s);
        let outcomes = &s.thresholds;
        assert_eq!(outcomes.iter().map(|o| o.passed).collect::<Vec<_>>(), [true, false, false, true]);
        assert_eq!(outcomes[0].actual, Some(80_000.0), "the nearer its limit");
        assert_eq!(outcomes[1].actual, Some(80_000.0), "the step's, which failed");
        assert_eq!(outcomes[3].actual, Some(20_000.0), "the nearer its limit, from below");
        assert!(outcomes[2].row_missing);
        assert_eq!(outcomes[2].to_string(), "{pya}: p99 < 1s (no step or named request `pya` was recorded)");
        assert!(any_failed(&s));
        let json = serde_json::to_value(&outcomes[2]).unwrap_or_default();
        assert_eq!(json["row"], "pya");
        assert_eq!(json["row_missing"], true);
        assert!(serde_json::to_value(&outcomes[0]).unwrap_or_default().get("row_missing").is_none());

        s.steps = vec![row("pay", 10, 10, None)];
        assert_eq!(evaluate(&s)[0].to_string(), "{pay}: p99 < 100ms (not measured: no run of `pay` succeeded)");
    }

    #[test]
    fn json_names_the_metric_and_operator() {
        let json = serde_json::to_string(&parse("p99_9 >= 2ms")).unwrap_or_default();
        assert_eq!(json, r#"{"metric":"p99_9","op":">=","value":2000.0}"#);
        let back: Threshold = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back, parse("p99_9>=2ms"));
    }
}
