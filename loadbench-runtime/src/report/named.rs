//! The results table's named requests and checks: a row per request name under its scenario,
//! after its steps (`  ↳ GET /items/{id}`, where a step's is `  └ insert`), and a line per
//! scenario that made checks. The Markdown output of `cargo loadbench` uses the same.

use super::units::thousands;
use super::{CheckReport, ScenarioReport, StepReport, table};

/// The marker before a named request's name in its row; a step's is `└`.
pub const REQUEST_MARKER: &str = "↳";

/// A named request's row, indented under its scenario as a step's is, with its own marker: its
/// requests, failures (errors and statuses of 400 or more), requests per second of the
/// scenario's wall time, the latencies of its successful requests, and `-` for bytes.
pub fn request_row(s: &ScenarioReport, request: &StepReport) -> Vec<String> {
    let mut cells = table::step_row(s, request);
    if let Some(first) = cells.first_mut() {
        *first = format!("  {REQUEST_MARKER} {}", request.name);
    }
    cells
}

/// `checks 99.6% passed: has id 99.2% (992 of 1,000), status 100% (1,000 of 1,000)`, or `None`
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
fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "-".to_owned();
    }
    let tenths = u128::from(part) * 1_000 / u128::from(whole);
    format!("{}.{}%", tenths / 10, tenths % 10)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{ConfigReport, ErrorCounts, LatencyReport, MachineInfo, RunReport, SCHEMA_VERSION, ToolInfo};

    fn scenario() -> ScenarioReport {
        let config = ConfigReport { concurrency: 2, count: Some(1_000), timeout_ms: 1_000, ..ConfigReport::default() };
        let mut s = ScenarioReport::not_started("items", config);
        s.duration_us = 1_000_000;
        (s.iterations, s.ok) = (1_000, 1_000);
        s.rps = 1_000.0;
        let latency = LatencyReport {
            mean: 900.0,
            stdev: 1.0,
            min: 1.0,
            p50: 800.0,
            p90: 1_000.0,
            p99: 2_000.0,
            p99_9: 3_000.0,
            max: 4_000.0,
        };
        s.latency_us = Some(latency);
        s.steps = vec![StepReport {
            name: "browse".into(),
            iterations: 1_000,
            ok: 1_000,
            failed: 0,
            errors: ErrorCounts::default(),
            latency_us: Some(latency),
        }];
        s.requests = vec![StepReport {
            name: "GET /items/{id}".into(),
            iterations: 1_000,
            ok: 990,
            failed: 10,
            errors: ErrorCounts { status: 10, ..ErrorCounts::default() },
            latency_us: Some(latency),
        }];
        s
    }

    fn render(s: ScenarioReport) -> String {
        table::render(&RunReport {
            schema_version: SCHEMA_VERSION,
            tool: ToolInfo { name: "loadbench".into(), version: "0.1.0".into() },
            started_at: "2026-01-01T00:00:00Z".into(),
            machine: MachineInfo { os: "linux".into(), arch: "x86_64".into(), cpus: 4, hostname: None, kernel: None },
            interrupted: false,
            scenarios: vec![s],
        })
    }

    #[test]
    fn named_requests_are_rows_after_the_steps_with_their_own_marker() {
        let out = render(scenario());
        let lines: Vec<&str> = out.lines().collect();
        let at =
            |needle: &str| lines.iter().position(|l| l.contains(needle)).unwrap_or_else(|| panic!("{needle}: {out}"));
        assert!(at("| items ") < at("└ browse") && at("└ browse") < at("↳ GET /items/{id}"), "{out}");
        let row: Vec<&str> = lines[at("↳ GET /items/{id}")].trim_matches('|').split('|').map(str::trim).collect();
        assert_eq!(row[..4], ["↳ GET /items/{id}", "1,000", "10", "1,000"], "{out}");
        assert!(!out.contains("checks"), "no check made, no line: {out}");
    }

    #[test]
    fn checks_are_one_line_under_the_table_and_a_failure_never_shows_100_percent() {
        let mut s = scenario();
        s.checks = vec![
            CheckReport { name: "has id".into(), passes: 992, fails: 8 },
            CheckReport { name: "fast".into(), passes: 9_999, fails: 1 },
            CheckReport { name: "status".into(), passes: 1_000, fails: 0 },
        ];
        let out = render(s);
        assert!(
            out.contains(
                "items: checks 99.9% passed: has id 99.2% (992 of 1,000), fast 99.9% (9,999 of 10,000), \
                 status 100.0% (1,000 of 1,000)\n"
            ),
            "{out}"
        );
    }
}
