//! JUnit XML, through quick-junit: one test suite per bench target, one test case per scenario.
//! A failed threshold, or a regression when `--fail-on-regression` makes it a gate, is a
//! `<failure>`; a scenario that could not run or was interrupted is an `<error>`. A regression
//! that does not gate is mentioned in the case's `<system-out>`, so the test results agree with
//! the exit code. Against several targets, each scenario is a case per target (`hello [fast]`),
//! and the comparison with the first target is in its `<system-out>`: it gates nothing. A
//! scenario's checks (`ctx.check`) are a line of its `<system-out>` (the table's `checks …
//! passed: …`): a failed check fails nothing unless a `checks` threshold makes it a `<failure>`.

use std::time::Duration;

use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};

use super::{Context, side_by_side, verdict_cell};
use crate::gate::regressed;

/// The JUnit document.
pub fn render(cx: &Context) -> Result<String, String> {
    let mut report = Report::new("loadbench");
    let mut suites: Vec<TestSuite> = Vec::new();
    let reference = side_by_side::reference(cx);
    for (scenario, _) in cx.scenarios() {
        let suite_name = match (&scenario.package, &scenario.bench) {
            (Some(package), Some(bench)) => format!("{package}/{bench}"),
            (None, Some(bench)) => bench.clone(),
            _ => "loadbench".to_owned(),
        };

        let mut failures: Vec<String> =
            scenario.thresholds.iter().filter(|o| !o.passed).map(|o| format!("threshold failed: {o}")).collect();
        let mut out = Vec::new();
        if let Some(comparison) = &scenario.comparison {
            let line = format!("baseline `{}`: {}", comparison.baseline, verdict_cell(comparison));
            if regressed(scenario) && cx.fail_on_regression {
                failures.push(line);
            } else {
                out.push(line);
            }
        }
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
        if let (Some(reference), Some(c)) = (reference, &scenario.side_by_side) {
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
        } else if failures.is_empty() {
            TestCaseStatus::success()
        } else {
            let kinds = [
                ("threshold", scenario.thresholds.iter().any(|o| !o.passed)),
                ("regression", regressed(scenario) && cx.fail_on_regression),
                ("warning", !scenario.warnings.is_empty() && cx.fail_on_warning),
            ];
            let kind = kinds.iter().filter(|(_, yes)| *yes).map(|(k, _)| *k).collect::<Vec<_>>().join(", ");
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
            status.set_message(failures.join("; ")).set_type(kind).set_description(failures.join("\n"));
            status
        };

        let name = match (&scenario.target_name, reference) {
            (Some(target), Some(_)) => format!("{} [{target}]", scenario.name),
            _ => scenario.name.clone(),
        };
        let mut case = TestCase::new(name.as_str(), status);
        case.set_classname(suite_name.as_str()).set_time(Duration::from_micros(scenario.duration_us));
        case.add_properties([
            Property::new("requests", scenario.iterations.to_string()),
            Property::new("failed", scenario.failed.to_string()),
            Property::new("rps", format!("{:.1}", scenario.rps)),
        ]);
        if let Some(target) = &scenario.target_name {
            case.add_property(Property::new("target", target.as_str()));
        }
        if let Some(latency) = &scenario.latency_us {
            case.add_properties([
                Property::new("p50_us", format!("{:.1}", latency.p50)),
                Property::new("p99_us", format!("{:.1}", latency.p99)),
            ]);
        }
        if !out.is_empty() {
            case.set_system_out(out.join("\n"));
        }
        match suites.iter_mut().find(|s| s.name.as_str() == suite_name) {
            Some(suite) => {
                suite.add_test_case(case);
            }
            None => {
                let mut suite = TestSuite::new(suite_name.as_str());
                suite.add_test_case(case);
                suites.push(suite);
            }
        }
    }
    report.add_test_suites(suites);
    report.to_string().map_err(|e| e.to_string())
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
        assert!(gating.contains(r#"<testcase name="hello" classname="shop/api""#), "{gating}");
        assert!(
            gating.contains(r#"<failure message="baseline `main`: regressed (req/s, p50, p99)" type="regression">"#),
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
            informative.contains("<system-out>baseline `main`: regressed (req/s, p50, p99)</system-out>"),
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
}
