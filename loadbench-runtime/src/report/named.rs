//! What the results table shows of named requests and checks beyond a step's row: the marker of
//! a named request's row under its scenario (`  ↳ GET /items/{id}`, where a step's is
//! `  └ insert`; the row itself is `table::request_row`), and the line of a scenario that made
//! checks. The Markdown output of `cargo loadbench` uses the same.

use super::units::thousands;
use super::{CheckReport, ScenarioReport};

/// The marker before a named request's name in its row; a step's is `└`.
pub const REQUEST_MARKER: &str = "↳";

/// `checks 99.6% passed: has id 99.2% (992 of 1,000), status 100.0% (1,000 of 1,000)`, or `None`
/// when the scenario made no check. A percentage is rounded down, so a check that failed even
/// once never shows 100%.
pub fn checks_line(s: &ScenarioReport) -> Option<String> {
    if s.checks.is_empty() {
        return None;
    }
    let passes: u64 = s.checks.iter().map(|c| c.passes).sum();
    let made = passes + s.checks.iter().map(|c| c.fails).sum::<u64>();
    let each: Vec<String> = s
        .checks
        .iter()
        .map(|c: &CheckReport| {
            let made = c.passes + c.fails;
            format!("{} {} ({} of {})", c.name, percent(c.passes, made), thousands(c.passes), thousands(made))
        })
        .collect();
    Some(format!("checks {} passed: {}", percent(passes, made), each.join(", ")))
}

/// `part` of `whole` as a percentage to one decimal, rounded down: `99.9%`, `100.0%`.
pub fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "-".to_owned();
    }
    let tenths = u128::from(part) * 1_000 / u128::from(whole);
    format!("{}.{}%", tenths / 10, tenths % 10)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::ConfigReport;

    #[test]
    fn checks_are_one_line_and_a_failure_never_shows_100_percent() {
        let mut s = ScenarioReport::not_started("items", ConfigReport::default());
        assert_eq!(checks_line(&s), None, "no check made, no line");
        s.checks = vec![
            CheckReport { name: "has id".into(), passes: 992, fails: 8 },
            CheckReport { name: "fast".into(), passes: 9_999, fails: 1 },
            CheckReport { name: "status".into(), passes: 1_000, fails: 0 },
        ];
        assert_eq!(
            checks_line(&s).as_deref(),
            Some(
                "checks 99.9% passed: has id 99.2% (992 of 1,000), fast 99.9% (9,999 of 10,000), \
                 status 100.0% (1,000 of 1,000)"
            )
        );
    }
}
