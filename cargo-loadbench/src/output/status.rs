//! What a CI screen marks on each row: passed, a warning, inconclusive, or failed, and why, in
//! short phrases that Markdown (✅/⚠️/❓/❌ and the verdict line), JUnit (failures, errors, notes)
//! and HTML share.
//!
//! A scenario fails what fails the run: a threshold, a regression against the baseline with
//! `--fail-on-regression` (its own or one of its steps' or named requests'), no successful
//! iteration (unless `--allow-failures`), a warning with `--fail-on-warning`, not running, an
//! interruption. It is inconclusive when a condition on the generator failed (its figures are
//! the generator's: [`loadbench::report::inconclusive`]), whether or not `--allow-inconclusive`
//! lets the run exit 0. It is a warning when it passed with something worth a look: a regression
//! that does not gate, a warning that does not, a saturated generator that a scenario's own
//! `saturated` threshold allowed, or failed iterations that no threshold judged. A step or named
//! request fails when its regression gates, and is a warning when some of its runs failed or its
//! regression does not gate.

use cargo_loadbench::{Comparison, RowComparison, ScenarioResult, Verdict, VerdictStatus};
use loadbench::report::{Causes, StepReport, check, inconclusive, units};

use super::{Context, verdict_cell};

/// A row's mark, from best to worst.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Mark {
    /// Nothing to look at.
    Pass,
    /// Passed, with something worth a look.
    Warn,
    /// The figures are the generator's, not the server's: neither passed nor failed.
    Inconclusive,
    /// Failed.
    Fail,
}

impl Mark {
    /// `✅`, `⚠️`, `❓`, `❌`.
    pub fn emoji(self) -> &'static str {
        match self {
            Mark::Pass => "✅",
            Mark::Warn => "⚠️",
            Mark::Inconclusive => "❓",
            Mark::Fail => "❌",
        }
    }

    /// The mark as the JSON's `verdict.status` says it.
    pub fn status(self) -> VerdictStatus {
        match self {
            Mark::Pass => VerdictStatus::Passed,
            Mark::Warn => VerdictStatus::Warning,
            Mark::Inconclusive => VerdictStatus::Inconclusive,
            Mark::Fail => VerdictStatus::Failed,
        }
    }
}

/// A scenario's mark and the phrases that explain it (failures when it failed, else warnings).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    /// The mark.
    pub mark: Mark,
    /// Why: `p99 < 50ms (was 61.2ms)`, `regressed against baseline `main` (p99)`, …
    pub why: Vec<String>,
}

/// `regressed (p99) against baseline `main``, or against base `1a2b3c4` with `cargo loadbench ab`
/// (`against`, [`Comparison::reference`] of the scenario's comparison, which its rows share).
fn regression(comparison: &Comparison, against: &str) -> String {
    format!("{} against {against}", verdict_cell(comparison))
}

/// The status of `scenario`.
pub fn scenario(cx: &Context, scenario: &ScenarioResult) -> Status {
    let mut failures: Vec<String> = Vec::new();
    let mut warnings: Vec<String> = Vec::new();
    if let Some(error) = &scenario.setup_error {
        failures.push(format!("did not run: {error}"));
    }
    if scenario.interrupted {
        failures.push("interrupted".to_owned());
    }
    failures.extend(
        scenario.thresholds.iter().filter(|o| !o.passed && !o.threshold.metric.is_generator()).map(ToString::to_string),
    );
    let gate = if cx.fail_on_regression { &mut failures } else { &mut warnings };
    if let Some(c) = scenario.comparison.as_ref() {
        let against = c.reference();
        if c.verdict == Verdict::Regressed {
            gate.push(regression(c, &against));
        }
        for (kind, row) in compared_rows(scenario).filter(|(_, r)| r.comparison.verdict == Verdict::Regressed) {
            gate.push(format!("{kind} {} {}", row.name, regression(&row.comparison, &against)));
        }
    }
    let gate = if cx.fail_on_warning { &mut failures } else { &mut warnings };
    gate.extend(scenario.warnings.iter().map(|w| format!("warning: {w}")));
    let nothing = check::measured_nothing(scenario);
    if nothing {
        let line = check::measured_nothing_line(scenario);
        if cx.allow_failures {
            warnings.push(format!("{line} (--allow-failures)"));
        } else {
            failures.push(line);
        }
    }
    let inconclusive = inconclusive::reasons(scenario);
    // A saturated generator that the scenario's own threshold allowed: the table's words.
    warnings.extend(inconclusive::saturation_warning(scenario));
    if failures.is_empty() && scenario.failed > 0 && !nothing {
        warnings.push(format!(
            "{} of {} iterations failed",
            units::thousands(scenario.failed),
            units::thousands(scenario.iterations)
        ));
    }
    // A failure with inconclusive figures beside it: both said, failures first.
    if !failures.is_empty() {
        failures.extend(inconclusive.into_iter().map(|r| format!("inconclusive: {r}")));
        return Status { mark: Mark::Fail, why: failures };
    }
    if !inconclusive.is_empty() {
        return Status { mark: Mark::Inconclusive, why: inconclusive };
    }
    Status::of(failures, warnings)
}

impl Status {
    /// Failed when anything failed, else a warning when anything warns, else passed; `why` holds
    /// the reasons of the mark given.
    fn of(failures: Vec<String>, warnings: Vec<String>) -> Status {
        if !failures.is_empty() {
            Status { mark: Mark::Fail, why: failures }
        } else if !warnings.is_empty() {
            Status { mark: Mark::Warn, why: warnings }
        } else {
            Status { mark: Mark::Pass, why: Vec::new() }
        }
    }
}

/// The run's verdict, one mark and its words, as Markdown's first line and the HTML headline say
/// it: `1 of 5 failed: checkout (p99 < 50ms (was 61.0ms))`, `1 of 5 inconclusive: hello
/// (generator busy: …)`, `5 scenarios passed, 1 with warnings: …`, `5 scenarios passed`. `quote`
/// escapes a label or reason for the format.
pub fn run(cx: &Context, quote: impl Fn(&str) -> String) -> (Mark, String) {
    let statuses: Vec<(Status, &str)> = cx.scenarios().map(|(s, l)| (scenario(cx, s), l)).collect();
    let n = statuses.len();
    let listed = |mark: Mark| {
        statuses
            .iter()
            .filter(|(st, _)| st.mark == mark)
            .map(|(st, label)| format!("{} ({})", quote(label), quote(&st.why.join(", "))))
            .collect::<Vec<_>>()
    };
    let (failed, inconclusive, warned) = (listed(Mark::Fail), listed(Mark::Inconclusive), listed(Mark::Warn));
    let scenarios = if n == 1 { "1 scenario".to_owned() } else { format!("{n} scenarios") };
    let also = if inconclusive.is_empty() {
        String::new()
    } else {
        format!("; {} inconclusive: {}", inconclusive.len(), inconclusive.join("; "))
    };
    if !failed.is_empty() {
        (Mark::Fail, format!("{} of {n} failed: {}{also}", failed.len(), failed.join("; ")))
    } else if !inconclusive.is_empty() {
        let text = format!(
            "{} of {n} inconclusive, the generator's figures rather than the server's: {}",
            inconclusive.len(),
            inconclusive.join("; ")
        );
        (Mark::Inconclusive, text)
    } else if n == 0 {
        (Mark::Warn, "no scenario ran".to_owned())
    } else if !warned.is_empty() {
        (Mark::Warn, format!("{scenarios} passed, {} with warnings: {}", warned.len(), warned.join("; ")))
    } else {
        (Mark::Pass, format!("{scenarios} passed"))
    }
}

/// A step or a named request of a scenario, with its comparison with the baseline.
#[derive(Debug, Clone, Copy)]
pub struct Row<'a> {
    /// `step` or `request`.
    pub kind: &'static str,
    /// Its figures.
    pub report: &'a StepReport,
    /// Its comparison with the baseline, when the scenario was compared and had a verdict.
    pub comparison: Option<&'a Comparison>,
}

/// The steps, then the named requests, of `scenario`, as the table lists them.
pub fn rows(scenario: &ScenarioResult) -> impl Iterator<Item = Row<'_>> {
    let compared = |kind: &'static str, report: &StepReport| {
        compared_rows(scenario).find(|(k, r)| *k == kind && r.name == report.name).map(|(_, r)| &r.comparison)
    };
    let steps = scenario.steps.iter().map(move |r| Row { kind: "step", report: r, comparison: compared("step", r) });
    let requests =
        scenario.requests.iter().map(move |r| Row { kind: "request", report: r, comparison: compared("request", r) });
    steps.chain(requests)
}

/// The compared steps and named requests of `scenario`, each with its kind.
fn compared_rows(scenario: &ScenarioResult) -> impl Iterator<Item = (&'static str, &RowComparison)> {
    scenario
        .comparison
        .iter()
        .flat_map(|c| c.steps.iter().map(|r| ("step", r)).chain(c.requests.iter().map(|r| ("request", r))))
}

/// The status of a step or named request.
pub fn row(cx: &Context, row: &Row) -> Status {
    let mut failures = Vec::new();
    let mut warnings = Vec::new();
    // Failed runs of a row are a warning, as a scenario's failed iterations that no threshold
    // judged are: only a gate fails, so the marks agree with the exit code.
    if row.report.failed > 0 {
        warnings.push(format!(
            "{} of {} failed",
            units::thousands(row.report.failed),
            units::thousands(row.report.iterations)
        ));
    }
    if let Some(c) = row.comparison.filter(|c| c.verdict == Verdict::Regressed) {
        let against = cx.against().unwrap_or_else(|| "the baseline".to_owned());
        if cx.fail_on_regression { &mut failures } else { &mut warnings }.push(regression(c, &against));
    }
    Status::of(failures, warnings)
}

/// Each cause on a line of its own, the most frequent first (`20 × scenario: item had the wrong
/// name`), then `5 × other messages` for those not listed.
pub fn cause_lines(causes: &Causes) -> Vec<String> {
    let mut lines: Vec<String> =
        causes.top.iter().map(|c| format!("{} × {}: {}", units::thousands(c.count), c.kind, c.message)).collect();
    if causes.others > 0 {
        lines.push(format!("{} × other messages", units::thousands(causes.others)));
    }
    lines
}

/// The first `n` causes on one line, for a failure's message: `20 × scenario: item had the wrong
/// name; 3 × io: connection reset by peer; and 4 more`.
pub fn cause_summary(causes: &Causes, n: usize) -> Option<String> {
    let lines = cause_lines(causes);
    if lines.is_empty() {
        return None;
    }
    let mut summary = lines.iter().take(n).cloned().collect::<Vec<_>>().join("; ");
    if lines.len() > n {
        let more: u64 = causes.top.iter().skip(n).map(|c| c.count).sum::<u64>() + causes.others;
        summary.push_str(&format!("; {} more", units::thousands(more)));
    }
    Some(summary)
}

#[cfg(test)]
mod tests {
    use super::*;
    use loadbench::report::ErrorCause;

    fn causes(n: u64, others: u64) -> Causes {
        let top = (0..n)
            .map(|i| ErrorCause { kind: "scenario".into(), message: format!("cause {i}"), count: 10 - i })
            .collect();
        Causes { top, others }
    }

    #[test]
    fn causes_read_most_frequent_first_with_the_rest_summed() {
        assert_eq!(
            cause_lines(&causes(2, 5)),
            ["10 × scenario: cause 0", "9 × scenario: cause 1", "5 × other messages"]
        );
        assert_eq!(
            cause_summary(&causes(4, 5), 2).as_deref(),
            Some("10 × scenario: cause 0; 9 × scenario: cause 1; 20 more")
        );
        assert_eq!(cause_summary(&causes(1, 0), 3).as_deref(), Some("10 × scenario: cause 0"));
        assert_eq!(cause_summary(&Causes::default(), 3), None);
    }
}
