//! JUnit XML, through quick-junit: one test suite per scenario (`shop/api: checkout`), holding
//! the scenario's own test case (`checkout`, classname `shop/api`) and, under it, one case per
//! step (`checkout / step login`) and per named request (`checkout / request GET /cart`), with
//! classname `shop/api.checkout`, so that CI screens (GitHub's test reporters, GitLab's test
//! report, Jenkins) group a scenario's rows together.
//!
//! A scenario's case fails (`<failure>`) on a failed threshold, a regression when
//! `--fail-on-regression` makes it a gate (its own, or one of its rows'), or a warning with
//! `--fail-on-warning`; the message names the top failure causes (`20 × scenario: item had the
//! wrong name; …`) and the text lists them all. A scenario that could not run or was interrupted
//! is an `<error>`. A step's or named request's case fails when its regression gates; its failed
//! runs and their causes are in its `<system-out>`, as a scenario's are when no gate judged them. Against several targets, each scenario is a suite per target
//! (`hello [fast]`), and the comparison with the first target is in its `<system-out>`: it gates
//! nothing. A scenario's checks (`ctx.check`) are a line of its `<system-out>`.

use std::time::Duration;

use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};

use super::status::{self, Row};
use super::{Context, side_by_side, verdict_cell};
use crate::gate::{regressed, regressed_rows};
use cargo_loadbench::{Comparison, ScenarioResult, Verdict};

/// Causes named in a `<failure message=…>`; the failure's text lists them all.
const CAUSES_IN_MESSAGE: usize = 3;

/// The JUnit document.
pub fn render(cx: &Context) -> Result<String, String> {
    // With `cargo loadbench ab`, CI screens name the run by its two commits.
    let mut report = match cx.commits {
        Some(commits) => Report::new(format!("loadbench: head {} compared with base {}", commits.head, commits.base)),
        None => Report::new("loadbench"),
    };
    let reference = side_by_side::reference(cx);
    for (scenario, _) in cx.scenarios() {
        let classname = match (&scenario.package, &scenario.bench) {
            (Some(package), Some(bench)) => format!("{package}/{bench}"),
            (None, Some(bench)) => bench.clone(),
            _ => "loadbench".to_owned(),
        };
        let name = match (&scenario.target_name, reference) {
            (Some(target), Some(_)) => format!("{} [{target}]", scenario.name),
            _ => scenario.name.clone(),
        };
        let mut suite = TestSuite::new(format!("{classname}: {name}"));
        if let Some(commits) = cx.commits {
            for (side, commit) in [("base", &commits.base), ("head", &commits.head)] {
                suite.add_property((format!("loadbench.{side}"), format!("{} {}", commit.sha, commit.subject)));
            }
        }
        suite.add_test_case(scenario_case(cx, scenario, &name, &classname));
        let row_class = format!("{classname}.{name}");
        suite.add_test_cases(status::rows(scenario).map(|row| row_case(cx, scenario, &row, &name, &row_class)));
        report.add_test_suite(suite);
    }
    report.to_string().map_err(|e| e.to_string())
}

/// `baseline `main`: regressed (p99)`, or `base `1a2b3c4`: …` with `cargo loadbench ab`.
fn baseline_line(comparison: &Comparison) -> String {
    format!("{}: {}", comparison.reference(), verdict_cell(comparison))
}

/// A regression that does not gate, as a `<skipped>` status. Why skipped rather than only a
/// `<system-err>` line: the CI screens people read show a skipped case with its message as a
/// status of its own (GitHub's test reporters such as dorny/test-reporter and
/// mikepenz/action-junit-report, GitLab's test report, Jenkins), while `<system-err>` is behind a
/// click at best and dropped by GitHub's reporters; and unlike a `<failure>` it fails no check,
/// as the exit code does not fail. The line stays in `<system-out>` too.
fn regression_note(comparison: &Comparison) -> TestCaseStatus {
    let mut status = TestCaseStatus::skipped();
    status
        .set_message(format!(
            "regression (not gated, add --fail-on-regression): {}: regressed: {}",
            comparison.reference(),
            comparison.regressed_figures()
        ))
        .set_type("regression");
    status
}

/// The failure's text: each reason on a line, then every cause.
fn failure(kind: String, reasons: &[String], causes: &loadbench::report::Causes) -> TestCaseStatus {
    let mut message = reasons.join("; ");
    if let Some(summary) = status::cause_summary(causes, CAUSES_IN_MESSAGE) {
        message.push_str(&format!("; causes: {summary}"));
    }
    let mut text = reasons.to_vec();
    let causes = status::cause_lines(causes);
    if !causes.is_empty() {
        text.push("causes:".to_owned());
        text.extend(causes.into_iter().map(|c| format!("  {c}")));
    }
    let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
    status.set_message(message).set_type(kind).set_description(text.join("\n"));
    status
}

/// The scenario's own test case.
fn scenario_case(cx: &Context, scenario: &ScenarioResult, name: &str, classname: &str) -> TestCase {
    let mut failures: Vec<String> = scenario
        .thresholds
        .iter()
        .filter(|o| !o.passed && !o.threshold.metric.is_generator())
        .map(|o| format!("threshold failed: {o}"))
        .collect();
    let mut out = Vec::new();
    let gated_rows: Vec<String> =
        if cx.fail_on_regression { regressed_rows(scenario).map(|(row, _)| row).collect() } else { Vec::new() };
    let against = scenario.comparison.as_ref().map_or_else(|| "the baseline".to_owned(), Comparison::reference);
    if let Some(comparison) = &scenario.comparison {
        let line = baseline_line(comparison);
        if regressed(scenario) && cx.fail_on_regression {
            // The failure's message carries the figures: old → new, the change and its interval.
            failures.push(format!("{}: regressed: {}", comparison.reference(), comparison.regressed_figures()));
        } else {
            out.push(line);
        }
    }
    failures.extend(
        regressed_rows(scenario)
            .filter(|_| cx.fail_on_regression)
            .map(|(row, c)| format!("{row} regressed against {against}: {}", c.regressed_figures())),
    );
    let nothing = loadbench::report::check::measured_nothing(scenario) && !cx.allow_failures;
    if nothing {
        failures.push(loadbench::report::check::measured_nothing_line(scenario));
    }
    let inconclusive = loadbench::report::inconclusive::reasons(scenario);
    if let Some(line) = loadbench::report::named::checks_line(scenario) {
        out.push(line);
    }
    for warning in &scenario.warnings {
        let line = format!("warning: {warning}");
        if cx.fail_on_warning {
            failures.push(line);
        } else {
            out.push(line);
        }
    }
    if let (Some(reference), Some(c)) = (side_by_side::reference(cx), &scenario.side_by_side) {
        out.push(format!("side by side against `{reference}`: {}", side_by_side::verdict_cell(c)));
    }
    let status = if let Some(error) = &scenario.setup_error {
        let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
        status.set_message(format!("did not run: {error}")).set_type("did not run");
        status
    } else if scenario.interrupted {
        let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
        status.set_message("interrupted").set_type("interrupted");
        status
    } else if !failures.is_empty() {
        let kinds = [
            ("threshold", loadbench::report::check::any_failed(scenario)),
            ("regression", (regressed(scenario) || !gated_rows.is_empty()) && cx.fail_on_regression),
            ("warning", !scenario.warnings.is_empty() && cx.fail_on_warning),
            ("no success", nothing),
        ];
        let kind = kinds.iter().filter(|(_, yes)| *yes).map(|(k, _)| *k).collect::<Vec<_>>().join(", ");
        out.extend(inconclusive.iter().map(|r| format!("inconclusive: {r}")));
        failure(kind, &failures, &scenario.causes)
    } else if !inconclusive.is_empty() && !cx.allow_inconclusive {
        // Neither passed nor failed: the figures are the generator's. An error, as CI screens show
        // a test that could not be judged, not a failure of the server.
        let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
        status
            .set_message(format!("inconclusive: {}", inconclusive.join("; ")))
            .set_type("inconclusive")
            .set_description(inconclusive.join("\n"));
        status
    } else if !inconclusive.is_empty() {
        out.extend(inconclusive.iter().map(|r| format!("inconclusive (--allow-inconclusive): {r}")));
        TestCaseStatus::success()
    } else {
        match scenario.comparison.as_ref().filter(|c| c.verdict == Verdict::Regressed) {
            Some(c) => regression_note(c),
            None => TestCaseStatus::success(),
        }
    };
    if failures.is_empty() {
        // Failed iterations that no threshold judged: their causes are still worth reading.
        let causes = status::cause_lines(&scenario.causes);
        if !causes.is_empty() {
            out.push(format!("causes of failed iterations: {}", causes.join("; ")));
        }
    }
    let mut case = TestCase::new(name, status);
    case.set_classname(classname).set_time(Duration::from_micros(scenario.duration_us));
    case.add_properties([
        Property::new("requests", scenario.iterations.to_string()),
        Property::new("failed", scenario.failed.to_string()),
        Property::new("rps", format!("{:.1}", scenario.rps)),
    ]);
    if let Some(target) = &scenario.target_name {
        case.add_property(Property::new("target", target.as_str()));
    }
    add_latency(&mut case, scenario.latency_us.as_ref());
    if !out.is_empty() {
        case.set_system_out(out.join("\n"));
    }
    case
}

/// The latency's p50 and p99 as properties of `case`, when anything succeeded.
fn add_latency(case: &mut TestCase, latency: Option<&loadbench::report::LatencyReport>) {
    if let Some(latency) = latency {
        case.add_properties([
            Property::new("p50_us", format!("{:.1}", latency.p50)),
            Property::new("p99_us", format!("{:.1}", latency.p99)),
        ]);
    }
}

/// The test case of a step or named request of `scenario` (named `scenario`).
fn row_case(cx: &Context, scenario: &ScenarioResult, row: &Row, scenario_name: &str, classname: &str) -> TestCase {
    let mut failures = Vec::new();
    let mut out: Vec<String> = row.comparison.map(baseline_line).into_iter().collect();
    // Failed runs fail the case no more than a scenario's failed iterations fail its own (only a
    // gate does, as the exit code): they and their causes are in `<system-out>`.
    if row.report.failed > 0 {
        let mut line = format!("{} of {} failed", row.report.failed, row.report.iterations);
        if let Some(summary) = status::cause_summary(&row.report.causes, CAUSES_IN_MESSAGE) {
            line.push_str(&format!("; causes: {summary}"));
        }
        out.push(line);
    }
    let regression = row.comparison.filter(|c| c.verdict == Verdict::Regressed);
    let status = match regression {
        Some(c) if cx.fail_on_regression => {
            failures.push(baseline_line(c));
            out.retain(|line| *line != baseline_line(c));
            None
        }
        Some(c) => Some(regression_note(c)),
        None => None,
    };
    let status = if !failures.is_empty() {
        failure("regression".to_owned(), &failures, &row.report.causes)
    } else {
        status.unwrap_or_else(TestCaseStatus::success)
    };
    let mut case = TestCase::new(format!("{scenario_name} / {} {}", row.kind, row.report.name), status);
    let per_second = if scenario.duration_us == 0 {
        0.0
    } else {
        row.report.iterations as f64 / (scenario.duration_us as f64 / 1_000_000.0)
    };
    case.set_classname(classname);
    case.add_properties([
        Property::new("requests", row.report.iterations.to_string()),
        Property::new("failed", row.report.failed.to_string()),
        Property::new("rps", format!("{per_second:.1}")),
    ]);
    add_latency(&mut case, row.report.latency_us.as_ref());
    if !out.is_empty() {
        case.set_system_out(out.join("\n"));
    }
    case
}

#[cfg(test)]
// A failed expectation is a failed test; `expect` says which.
#[allow(clippy::expect_used)]
mod tests {
    use super::super::tests::{sample_report, two_targets_report};
    use super::*;

    #[test]
    fn failed_gates_are_failures() {
        let report = sample_report();
        let gating = render(&Context::new(&report, 3, Some("main"), true)).expect("xml");
        assert!(
            gating.contains(r#"<testsuites name="loadbench" tests="3" skipped="0" failures="2" errors="0">"#),
            "{gating}"
        );
        assert!(gating.contains(r#"<testsuite name="shop/api: hello" tests="1""#), "a suite per scenario: {gating}");
        assert!(gating.contains(r#"<testcase name="hello" classname="shop/api""#), "{gating}");
        // The failure's message carries the numbers, old → new, and what made the change count.
        let figures = "it/s 1,000 → 245 (-75.5%, 95% CI -75.5% to -75.5%, beyond ±5%), p50 200µs → 20.3ms (+10,050%, \
                       95% CI +10,050% to +10,050%, beyond ±5%), p99 400µs → 40.6ms (+10,050%, 95% CI +10,050% to \
                       +10,050%, beyond ±5%)";
        assert!(
            gating.contains(&format!(r#"<failure message="baseline `main`: regressed: {figures}" type="regression">"#)),
            "{gating}"
        );
        assert!(
            gating.contains(r#"type="threshold">threshold failed: p50 &lt; 10ms (was 20.0ms)</failure>"#),
            "{gating}"
        );

        let informative = render(&Context::new(&report, 3, Some("main"), false)).expect("xml");
        assert!(!informative.contains(r#"name="target""#), "{informative}");
        assert!(informative.contains(r#"failures="1""#), "{informative}");
        assert!(
            informative.contains(
                r#"<skipped message="regression (not gated, add --fail-on-regression): baseline `main`: regressed: it/s 1,000 → 245"#
            ),
            "a regression without the gate is a visible note: {informative}"
        );
        assert!(
            informative.contains("<system-out>baseline `main`: regressed (it/s, p50, p99)</system-out>"),
            "{informative}"
        );
    }

    #[test]
    fn a_warning_is_output_or_with_fail_on_warning_a_failure() {
        let mut report = sample_report();
        report.scenarios.truncate(1);
        report.scenarios[0].warnings = vec![loadbench::report::Warning {
            kind: loadbench::report::WarningKind::NoRequests,
            message: "no HTTP exchange".into(),
        }];
        let lenient = render(&Context::new(&report, 1, None, false)).expect("xml");
        assert!(lenient.contains("warning: no HTTP exchange"), "{lenient}");
        assert!(!lenient.contains("<failure"), "{lenient}");
        let mut cx = Context::new(&report, 1, None, false);
        cx.fail_on_warning = true;
        let strict = render(&cx).expect("xml");
        assert!(strict.contains(r#"<failure message="warning: no HTTP exchange" type="warning">"#), "{strict}");
    }

    #[test]
    fn several_targets_are_a_case_each_with_the_comparison_as_output() {
        let report = two_targets_report("twin");
        let xml = render(&Context::new(&report, 3, None, false)).expect("xml");
        assert!(xml.contains(r#"<testcase name="hello [fast]" classname="shop/api""#), "{xml}");
        assert!(xml.contains(r#"<testcase name="hello [twin]" classname="shop/api""#), "{xml}");
        assert!(xml.contains(r#"<property name="target" value="twin"/>"#), "{xml}");
        assert!(xml.contains("<system-out>side by side against `fast`: within noise</system-out>"), "{xml}");
    }

    #[test]
    fn checks_are_a_line_of_the_scenario_s_output() {
        let mut report = sample_report();
        report.scenarios.truncate(1);
        report.scenarios[0].comparison = None;
        report.scenarios[0].checks =
            vec![loadbench::report::CheckReport { name: "has id".into(), passes: 992, fails: 8 }];
        let xml = render(&Context::new(&report, 1, None, false)).expect("xml");
        assert!(xml.contains("<system-out>checks 99.2% passed: has id 99.2% (992 of 1,000)</system-out>"), "{xml}");
        assert!(xml.contains(r#"failures="0""#), "a failed check fails nothing by itself: {xml}");
    }

    #[test]
    fn steps_and_requests_are_cases_under_their_scenario_and_failures_name_their_causes() {
        let mut report = sample_report();
        report.scenarios.truncate(1);
        report.scenarios[0].comparison = None;
        let scenario = &mut report.scenarios[0];
        scenario.failed = 23;
        scenario.config.thresholds = vec!["error_rate<0.01".parse().unwrap_or_else(|e| panic!("{e}"))];
        scenario.causes = loadbench::report::Causes {
            top: (0..4)
                .map(|i| loadbench::report::ErrorCause {
                    kind: "scenario".into(),
                    message: format!("item {i} had the wrong name"),
                    count: 5 - i,
                })
                .collect(),
            others: 9,
        };
        let row = |name: &str, failed: u64| loadbench::report::StepReport {
            name: name.into(),
            iterations: 30,
            ok: 30 - failed,
            failed,
            errors: Default::default(),
            causes: loadbench::report::Causes::from_counts(
                (failed > 0).then(|| (("io".to_owned(), "connection reset by peer".to_owned()), failed)),
            ),
            latency_us: None,
        };
        scenario.steps = vec![row("login", 0), row("pay", 2)];
        scenario.requests = vec![row("GET /cart", 0)];
        scenario.thresholds = loadbench::report::check::evaluate(scenario);
        let xml = render(&Context::new(&report, 1, None, false)).expect("xml");
        let doc = roxmltree::Document::parse(&xml).expect("well-formed");
        let suite = doc.descendants().find(|n| n.has_tag_name("testsuite")).expect("a suite");
        let cases: Vec<(&str, &str)> = suite
            .children()
            .filter(|n| n.has_tag_name("testcase"))
            .map(|c| (c.attribute("name").unwrap_or_default(), c.attribute("classname").unwrap_or_default()))
            .collect();
        assert_eq!(
            cases,
            [
                ("hello", "shop/api"),
                ("hello / step login", "shop/api.hello"),
                ("hello / step pay", "shop/api.hello"),
                ("hello / request GET /cart", "shop/api.hello"),
            ]
        );
        let failure = |case: &str| {
            suite
                .descendants()
                .find(|n| n.has_tag_name("testcase") && n.attribute("name") == Some(case))
                .and_then(|c| c.children().find(|n| n.has_tag_name("failure")))
        };
        let own = failure("hello").expect("the threshold fails the scenario");
        assert_eq!(
            own.attribute("message"),
            Some(
                "threshold failed: error_rate < 0.01 (was 0.0712); causes: 5 × scenario: item 0 had the wrong name; \
                 4 × scenario: item 1 had the wrong name; 3 × scenario: item 2 had the wrong name; 11 more"
            )
        );
        assert!(
            own.text().is_some_and(|t| t.contains("  2 × scenario: item 3 had the wrong name\n  9 × other messages")),
            "{xml}"
        );
        // A step's failed runs fail its case no more than the scenario's fail its own: only a gate
        // does. They and their causes are in its output.
        assert!(failure("hello / step pay").is_none(), "{xml}");
        let pay = suite
            .descendants()
            .find(|n| n.has_tag_name("testcase") && n.attribute("name") == Some("hello / step pay"))
            .and_then(|c| c.children().find(|n| n.has_tag_name("system-out")))
            .and_then(|n| n.text());
        assert_eq!(pay, Some("2 of 30 failed; causes: 2 × io: connection reset by peer"), "{xml}");
        assert!(failure("hello / step login").is_none() && failure("hello / request GET /cart").is_none(), "{xml}");
    }
}
