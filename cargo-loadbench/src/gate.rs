//! The gates: thresholds (from attributes and `--threshold`) and regressions against a baseline,
//! and what they make of the exit code.

use std::fmt;

use cargo_loadbench::{Comparison, Results, ScenarioResult, Verdict};
use loadbench::report::check;
use loadbench::threshold::{Op, RowThreshold, Threshold, ThresholdError};

use crate::error::Error;

/// A `--threshold [SCENARIO:]METRIC OP VALUE`, or on a row, `[SCENARIO]{ROW}:METRIC OP VALUE`.
#[derive(Debug, Clone, PartialEq)]
pub struct CliThreshold {
    /// The scenario it applies to (an exact name); every selected scenario when `None`.
    pub scenario: Option<String>,
    /// The row (step or named request) it applies to, in that scenario; the scenario itself
    /// when `None`.
    pub row: Option<String>,
    /// The condition.
    pub threshold: Threshold,
}

impl CliThreshold {
    /// Parses `hello:p99<50ms` or `p99<50ms`. The scenario is what precedes the last `:` before
    /// the comparison, so names with `::` in them work. With a brace, the condition is on a row:
    /// `hello{login}:p99<1s`, or `{login}:p99<1s` in every scenario, whose `{ROW}:CONDITION` is
    /// the grammar's ([`RowThreshold`]), as the attribute's `"login": p99 < "1s"` is.
    pub fn parse(text: &str) -> Result<CliThreshold, String> {
        if let Some(brace) = text.find(['{', '}']) {
            let scenario = text[..brace].trim();
            let row: RowThreshold = text[brace..].parse().map_err(|e: loadbench::threshold::RowError| e.to_string())?;
            return Ok(CliThreshold {
                scenario: (!scenario.is_empty()).then(|| scenario.to_owned()),
                row: Some(row.row.into_owned()),
                threshold: row.threshold,
            });
        }
        let op_at = text.find(Op::CHARS).unwrap_or(text.len());
        let (scenario, condition) = match text[..op_at].rfind(':') {
            Some(colon) => (Some(text[..colon].trim()), &text[colon + 1..]),
            None => (None, text),
        };
        if scenario.is_some_and(str::is_empty) {
            return Err("the scenario name before `:` is empty".to_owned());
        }
        let threshold: Threshold = condition.parse().map_err(|e: ThresholdError| e.to_string())?;
        Ok(CliThreshold { scenario: scenario.map(str::to_owned), row: None, threshold })
    }

    fn applies_to(&self, scenario: &str) -> bool {
        self.scenario.as_deref().is_none_or(|name| name == scenario)
    }
}

impl fmt::Display for CliThreshold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.scenario, &self.row) {
            (scenario, Some(row)) => write!(f, "{}{{{row}}}:{}", scenario.as_deref().unwrap_or(""), self.threshold),
            (Some(name), None) => write!(f, "{name}:{}", self.threshold),
            (None, None) => write!(f, "{}", self.threshold),
        }
    }
}

/// Refuses a `--threshold` whose scenario is not among `selected`: a typo there would otherwise
/// leave the gate silently open.
pub fn check_scenarios(thresholds: &[CliThreshold], selected: &[&str]) -> Result<(), Error> {
    for t in thresholds {
        if let Some(name) = &t.scenario
            && !selected.contains(&name.as_str())
        {
            let mut available = selected.to_vec();
            available.sort_unstable();
            available.dedup();
            return Err(Error::ThresholdScenario { threshold: t.to_string(), selected: available.join(", ") });
        }
    }
    Ok(())
}

/// Adds the `--threshold`s that apply to `config` after the attribute's own: on the scenario to
/// its thresholds, on a row to its row thresholds.
pub fn add_to(config: &mut loadbench::report::ConfigReport, name: &str, thresholds: &[CliThreshold]) {
    for t in thresholds.iter().filter(|t| t.applies_to(name)) {
        match &t.row {
            None => config.thresholds.push(t.threshold),
            Some(row) => config.row_thresholds.push(RowThreshold { row: row.clone().into(), threshold: t.threshold }),
        }
    }
}

/// Adds the command-line thresholds to every scenario of `report` and judges it again with
/// [`loadbench::report::check::judge`], the function bench binaries use on their own: its
/// thresholds, and its conditions on the generator, which a `--threshold` on `dropped`, `rate` or
/// `saturated` replaces.
pub fn apply_thresholds(report: &mut Results, thresholds: &[CliThreshold]) {
    for scenario in &mut report.scenarios {
        let name = scenario.name.clone();
        add_to(&mut scenario.config, &name, thresholds);
        check::judge(scenario);
    }
}

/// What failed, for the exit code and the closing `error:` line.
#[derive(Debug, Default)]
pub struct GateResult {
    /// `label: p99 < 50ms (was 61.2ms)` per failed threshold.
    pub failed_thresholds: Vec<String>,
    /// Scenarios that regressed against the baseline, and their steps and named requests that
    /// did, each with what regressed, old → new: `hello (p50 5.21ms → 10.4ms (+99.6%))`,
    /// `checkout (step pay: p99 …)`.
    pub regressions: Vec<String>,
}

impl GateResult {
    /// Collects failed thresholds and regressions; `labels` are the table's names for
    /// `report.scenarios`.
    pub fn of(report: &Results, labels: &[String]) -> GateResult {
        let mut result = GateResult::default();
        for (scenario, label) in report.scenarios.iter().zip(labels) {
            for outcome in scenario.thresholds.iter().filter(|o| !o.passed && !o.threshold.metric.is_generator()) {
                result.failed_thresholds.push(format!("{label}: {outcome}"));
            }
            if let Some(c) = scenario.comparison.as_ref().filter(|c| c.verdict == Verdict::Regressed) {
                result.regressions.push(format!("{label} ({})", c.regressed_summary()));
            }
            // A step's or named request's regression gates as its scenario's does.
            result
                .regressions
                .extend(regressed_rows(scenario).map(|(row, c)| format!("{label} ({row}: {})", c.regressed_summary())));
        }
        result
    }

    /// Whether the gate fails: any threshold, or any regression when regressions count.
    pub fn failed(&self, fail_on_regression: bool) -> bool {
        !self.failed_thresholds.is_empty() || (fail_on_regression && !self.regressions.is_empty())
    }

    /// The one line that closes a failed run, such as `gate failed: threshold hello: p99 < 50ms
    /// (was 61.2ms); regressed against baseline `main`: api/hello (p50 …)`; `against` names what
    /// the run was compared with ([`Comparison::reference`]).
    pub fn describe(&self, fail_on_regression: bool, against: Option<&str>) -> String {
        let mut parts = Vec::new();
        if !self.failed_thresholds.is_empty() {
            let noun = if self.failed_thresholds.len() == 1 { "threshold" } else { "thresholds" };
            parts.push(format!("{noun} {}", self.failed_thresholds.join(", ")));
        }
        if fail_on_regression && !self.regressions.is_empty() {
            let against = against.map(|a| format!(" against {a}")).unwrap_or_default();
            parts.push(format!("regressed{against}: {}", self.regressions.join(", ")));
        }
        format!("gate failed: {}", parts.join("; "))
    }
}

/// Whether `scenario` regressed against its baseline (itself, not one of its steps: see
/// [`regressed_rows`]).
pub fn regressed(scenario: &ScenarioResult) -> bool {
    scenario.comparison.as_ref().is_some_and(|c| c.verdict == Verdict::Regressed)
}

/// The steps and named requests of `scenario` that regressed against the baseline, named as
/// `step pay` and `request GET /cart`, with their comparisons.
pub fn regressed_rows(scenario: &ScenarioResult) -> impl Iterator<Item = (String, &Comparison)> + '_ {
    let rows = scenario.comparison.iter().flat_map(|c| {
        let steps = c.steps.iter().map(|row| ("step", row));
        steps.chain(c.requests.iter().map(|row| ("request", row)))
    });
    rows.filter(|(_, row)| row.comparison.verdict == Verdict::Regressed)
        .map(|(kind, row)| (format!("{kind} {}", row.name), &row.comparison))
}

/// Whether `scenario` or any of its steps or named requests regressed against the baseline.
pub fn regressed_anywhere(scenario: &ScenarioResult) -> bool {
    regressed(scenario) || regressed_rows(scenario).next().is_some()
}

#[cfg(test)]
// A failed expectation is a failed test; `expect` says which.
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn the_scenario_is_what_precedes_the_last_colon_before_the_comparison() {
        let t = CliThreshold::parse("hello:p99<50ms").expect("valid");
        assert_eq!(t.scenario.as_deref(), Some("hello"));
        assert_eq!(t.threshold.to_string(), "p99 < 50ms");
        assert_eq!(t.to_string(), "hello:p99 < 50ms");
        let t = CliThreshold::parse("api::get: error_rate <= 1%").expect("valid");
        assert_eq!(t.scenario.as_deref(), Some("api::get"));
        assert_eq!(t.threshold.value, 0.01);
        let t = CliThreshold::parse("rps>=1000").expect("valid");
        assert_eq!(t.scenario, None);
        assert!(t.applies_to("anything"));
        assert_eq!(CliThreshold::parse(":p99<5ms").expect_err("empty"), "the scenario name before `:` is empty");
        assert!(CliThreshold::parse("hello:p99").expect_err("no op").starts_with("expected METRIC OP VALUE"));
    }

    #[test]
    fn a_row_is_named_in_braces_after_the_scenario_or_alone() {
        let t = CliThreshold::parse("checkout{GET /items/:id}:p99<50ms").expect("valid");
        assert_eq!((t.scenario.as_deref(), t.row.as_deref()), (Some("checkout"), Some("GET /items/:id")));
        assert_eq!(t.threshold.to_string(), "p99 < 50ms");
        assert_eq!(t.to_string(), "checkout{GET /items/:id}:p99 < 50ms");
        assert_eq!(CliThreshold::parse(&t.to_string()).expect("reads back"), t);
        let t = CliThreshold::parse("{login}: error_rate < 1%").expect("valid");
        assert_eq!((t.scenario, t.row.as_deref(), t.threshold.value), (None, Some("login"), 0.01));
        let t = CliThreshold::parse("api::get {a:b<c}:max<=1s").expect("valid");
        assert_eq!((t.scenario.as_deref(), t.row.as_deref()), (Some("api::get"), Some("a:b<c")));

        let refused = |text| CliThreshold::parse(text).expect_err(text);
        assert_eq!(
            refused("{}:p99<1s"),
            "the row name is empty; name a step or a named request, as in `{login}:p99<1s`"
        );
        let unpaired = "the braces in a row name on the command line must pair up, as in `{GET /items/{id}}`";
        assert_eq!(refused("hello{a{b}:p99<1s"), format!("{unpaired}: `a{{b`"));
        assert_eq!(refused("{a}b}:p99<1s"), format!("{unpaired}: `a}}b`"));
        let t = CliThreshold::parse("hello{GET /items/{id}}:p99<50ms").expect("a route template's braces");
        assert_eq!((t.scenario.as_deref(), t.row.as_deref()), (Some("hello"), Some("GET /items/{id}")));
        assert_eq!(refused("hello}:p99<1s"), "expected {ROW}:CONDITION, such as `{login}:p99<1s`");
        assert!(refused("{login}:checks>0.9").starts_with("`checks` means nothing for a row"));
    }

    #[test]
    fn a_row_threshold_is_added_to_its_scenarios_rows() {
        let thresholds = ["hello{login}:max<1s", "{pay}:failed<=0", "other{login}:p99<1ms", "hello:p99<5ms"]
            .map(|t| CliThreshold::parse(t).expect("valid"));
        let mut config = loadbench::report::ConfigReport::default();
        add_to(&mut config, "hello", &thresholds);
        assert_eq!(config.thresholds.iter().map(ToString::to_string).collect::<Vec<_>>(), ["p99 < 5ms"]);
        let rows: Vec<String> = config.row_thresholds.iter().map(ToString::to_string).collect();
        assert_eq!(rows, ["{login}: max < 1s", "{pay}: failed <= 0"]);
        let err = check_scenarios(&thresholds, &["hello"]).expect_err("other is not selected");
        assert_eq!(err.to_string(), "--threshold `other{login}:p99 < 1ms` names no selected scenario; selected: hello");
    }

    #[test]
    fn a_threshold_for_an_unselected_scenario_is_refused() {
        let thresholds = [CliThreshold::parse("helo:p99<5ms").expect("valid")];
        let err = check_scenarios(&thresholds, &["status", "hello"]).expect_err("typo");
        assert_eq!(err.to_string(), "--threshold `helo:p99 < 5ms` names no selected scenario; selected: hello, status");
        assert!(check_scenarios(&thresholds[..0], &["hello"]).is_ok());
        let everywhere = [CliThreshold::parse("p99<5ms").expect("valid")];
        assert!(check_scenarios(&everywhere, &["hello"]).is_ok());
    }

    #[test]
    fn the_closing_line_names_every_failure() {
        let result = GateResult {
            failed_thresholds: vec!["hello: p99 < 50ms (was 61.2ms)".into()],
            regressions: vec!["status".into()],
        };
        assert!(result.failed(false));
        assert_eq!(
            result.describe(false, Some("baseline `main`")),
            "gate failed: threshold hello: p99 < 50ms (was 61.2ms)"
        );
        assert_eq!(
            result.describe(true, Some("baseline `main`")),
            "gate failed: threshold hello: p99 < 50ms (was 61.2ms); regressed against baseline `main`: status"
        );
        let regression_only = GateResult { failed_thresholds: Vec::new(), regressions: vec!["status".into()] };
        assert!(!regression_only.failed(false), "regressions gate only with --fail-on-regression");
        assert!(regression_only.failed(true));
    }

    #[test]
    fn a_regression_is_named_with_its_figures_old_to_new() {
        let report = crate::output::tests::sample_report();
        let labels: Vec<String> = report.scenarios.iter().map(|s| s.name.clone()).collect();
        let result = GateResult::of(&report, &labels);
        assert_eq!(
            result.regressions,
            ["hello (it/s 1,000 → 245 (-75.5%), p50 200µs → 20.3ms (+10,050%), p99 400µs → 40.6ms (+10,050%))"]
        );
    }
}
