//! CSV: one row per scenario, followed by one row per named step of it (`step` set, the
//! scenario-wide columns empty), one per named request (`request` set, likewise) and one per
//! check (`check` set: `iterations` is the times it was made, `ok` its passes, `failed` its
//! failures, `error_rate` the fraction that failed), with a header row; figures in plain units (microseconds, per
//! second, fractions, percent) for spreadsheets and scripts. Per-run figures and the per-second
//! timeline are in the JSON.
//!
//! Against several targets, each row also names its `target` (after `scenario`) and ends with
//! the comparison with the first target: its name, the ratios of it/s, p50 and p99 to it and
//! the verdict. With one target the columns are as they always were.

use cargo_loadbench::{ComparedMetric, ScenarioResult};
use loadbench::report::{CheckReport, LatencyReport, StepReport, WarningKind};
use serde::Serialize;

use super::{Context, change_of, side_by_side};

/// One scenario. Field names are the header; `None` is an empty cell.
#[derive(Debug, Serialize)]
struct Row<'a> {
    package: Option<&'a str>,
    bench: Option<&'a str>,
    scenario: &'a str,
    /// The step's name on a step row; empty on the scenario's own row.
    step: Option<&'a str>,
    /// The request name on a named request's row (`.name(…)`); empty on the others.
    request: Option<&'a str>,
    /// The check's name on a check's row (`ctx.check`); empty on the others.
    check: Option<&'a str>,
    runs: usize,
    /// Iterations of a scenario, runs of a step or named request, times a check was made.
    iterations: u64,
    ok: u64,
    failed: u64,
    error_rate: Option<f64>,
    /// Open model: arrivals dropped because no user was free.
    dropped: u64,
    /// Successful iterations per second, as the JSON's `rps`.
    rps: Option<f64>,
    /// HTTP responses received whole (the JSON's `http.responses`); on a scenario's row only.
    responses: Option<u64>,
    /// Those responses per second: the table's `req/s`.
    responses_per_sec: Option<f64>,
    mean_us: Option<f64>,
    p50_us: Option<f64>,
    p90_us: Option<f64>,
    p95_us: Option<f64>,
    p99_us: Option<f64>,
    p99_9_us: Option<f64>,
    max_us: Option<f64>,
    bytes_received: u64,
    interrupted: bool,
    did_not_run: Option<&'a str>,
    /// `met`, `failed`, or empty when the scenario has no thresholds.
    thresholds: &'static str,
    failed_thresholds: String,
    /// The kinds of the warnings that the run measured nothing, `;`-separated (`no_requests`).
    warnings: String,
    baseline: Option<&'a str>,
    verdict: Option<&'static str>,
    rps_old: Option<f64>,
    rps_change_pct: Option<f64>,
    p50_old_us: Option<f64>,
    p50_change_pct: Option<f64>,
    p99_old_us: Option<f64>,
    p99_change_pct: Option<f64>,
}

impl<'a> Row<'a> {
    fn of(s: &'a ScenarioResult) -> Row<'a> {
        let change = |metric| change_of(s, metric);
        let failed: Vec<String> = s.thresholds.iter().filter(|o| !o.passed).map(ToString::to_string).collect();
        Row {
            iterations: s.iterations,
            ok: s.ok,
            failed: s.failed,
            error_rate: (s.iterations > 0).then(|| s.failed as f64 / s.iterations as f64),
            dropped: s.dropped,
            rps: Some(s.rps),
            responses: Some(s.http.responses),
            responses_per_sec: Some(s.responses_per_sec()),
            bytes_received: s.http.bytes_received,
            did_not_run: s.setup_error.as_deref(),
            thresholds: match (s.thresholds.is_empty(), failed.is_empty()) {
                (true, _) => "",
                (false, true) => "met",
                (false, false) => "failed",
            },
            failed_thresholds: failed.join("; "),
            warnings: s.warnings.iter().map(|w| warning_kind(w.kind)).collect::<Vec<_>>().join(";"),
            baseline: s.comparison.as_ref().map(|c| c.baseline.as_str()),
            verdict: s.comparison.as_ref().map(|c| c.verdict.label()),
            rps_old: change(ComparedMetric::Rps).map(|m| m.old),
            rps_change_pct: change(ComparedMetric::Rps).map(|m| m.change * 100.0),
            p50_old_us: change(ComparedMetric::P50).map(|m| m.old),
            p50_change_pct: change(ComparedMetric::P50).map(|m| m.change * 100.0),
            p99_old_us: change(ComparedMetric::P99).map(|m| m.old),
            p99_change_pct: change(ComparedMetric::P99).map(|m| m.change * 100.0),
            ..Row::under(s).with_latency(s.latency_us.as_ref())
        }
    }
}

impl<'a> Row<'a> {
    /// A row of `s` with no figures yet: what the scenario's own row, a step's, a named
    /// request's and a check's start from, so that each sets only what is its own. The columns
    /// about the scenario as a whole (rate, thresholds, baseline) stay empty on the rows under it.
    fn under(s: &'a ScenarioResult) -> Row<'a> {
        Row {
            package: s.package.as_deref(),
            bench: s.bench.as_deref(),
            scenario: &s.name,
            step: None,
            request: None,
            check: None,
            runs: s.runs.len().max(1),
            iterations: 0,
            ok: 0,
            failed: 0,
            error_rate: None,
            dropped: 0,
            rps: None,
            responses: None,
            responses_per_sec: None,
            mean_us: None,
            p50_us: None,
            p90_us: None,
            p95_us: None,
            p99_us: None,
            p99_9_us: None,
            max_us: None,
            bytes_received: 0,
            interrupted: s.interrupted,
            did_not_run: None,
            thresholds: "",
            failed_thresholds: String::new(),
            warnings: String::new(),
            baseline: None,
            verdict: None,
            rps_old: None,
            rps_change_pct: None,
            p50_old_us: None,
            p50_change_pct: None,
            p99_old_us: None,
            p99_change_pct: None,
        }
    }

    /// A step of `s`: its own counts and latency.
    fn of_step(s: &'a ScenarioResult, step: &'a StepReport) -> Row<'a> {
        Row {
            step: Some(&step.name),
            iterations: step.iterations,
            ok: step.ok,
            failed: step.failed,
            error_rate: (step.iterations > 0).then(|| step.failed as f64 / step.iterations as f64),
            ..Row::under(s).with_latency(step.latency_us.as_ref())
        }
    }

    /// This row with the latency columns of `latency` (empty when nothing succeeded).
    fn with_latency(self, latency: Option<&LatencyReport>) -> Row<'a> {
        let pick = |pick: fn(&LatencyReport) -> f64| latency.map(pick);
        Row {
            mean_us: pick(|l| l.mean),
            p50_us: pick(|l| l.p50),
            p90_us: pick(|l| l.p90),
            p95_us: pick(|l| l.p95),
            p99_us: pick(|l| l.p99),
            p99_9_us: pick(|l| l.p99_9),
            max_us: pick(|l| l.max),
            ..self
        }
    }

    /// A named request of `s`: a step's row, but under `request`.
    fn of_request(s: &'a ScenarioResult, request: &'a StepReport) -> Row<'a> {
        Row { step: None, request: Some(&request.name), ..Row::of_step(s, request) }
    }

    /// A check of `s`: the times it was made, passed and failed.
    fn of_check(s: &'a ScenarioResult, check: &'a CheckReport) -> Row<'a> {
        let made = check.passes + check.fails;
        Row {
            check: Some(&check.name),
            iterations: made,
            ok: check.passes,
            failed: check.fails,
            error_rate: (made > 0).then(|| check.fails as f64 / made as f64),
            ..Row::under(s)
        }
    }
}

/// The CSV document.
pub fn render(cx: &Context) -> Result<String, String> {
    let plain = plain(cx)?;
    match side_by_side::reference(cx) {
        Some(reference) => with_targets(cx, &plain, reference),
        None => Ok(plain),
    }
}

/// The columns of a side-by-side run's comparison with its first target, after the others.
const SIDE_BY_SIDE_COLUMNS: [&str; 5] = ["reference_target", "rps_ratio", "p50_ratio", "p99_ratio", "side_by_side"];

/// `plain` (the rows of [`plain`] for `cx`) with the target's name after `scenario` and the
/// comparison with the first target at the end, on scenario rows; step rows leave them empty
/// but for the target.
fn with_targets(cx: &Context, plain: &str, reference: &str) -> Result<String, String> {
    let mut reader = csv::Reader::from_reader(plain.as_bytes());
    let header = reader.headers().map_err(|e| e.to_string())?.clone();
    let at = header.iter().position(|h| h == "scenario").map_or(0, |i| i + 1);
    let mut records = reader.records();
    let mut writer = csv::Writer::from_writer(Vec::new());
    let mut write = |record: &csv::StringRecord, target: &str, tail: [String; 5]| {
        let cells =
            record.iter().take(at).chain([target]).chain(record.iter().skip(at)).chain(tail.iter().map(String::as_str));
        writer.write_record(cells).map_err(|e| e.to_string())
    };
    write(&header, "target", SIDE_BY_SIDE_COLUMNS.map(str::to_owned))?;
    for scenario in &cx.report.scenarios {
        let target = scenario.target_name.as_deref().unwrap_or_default();
        let ratio = |metric| {
            let ratio = if scenario.target_name.as_deref() == Some(reference) && scenario.setup_error.is_none() {
                Some(1.0)
            } else {
                side_by_side::ratio_of(scenario, metric)
            };
            ratio.map(|r| r.to_string()).unwrap_or_default()
        };
        let verdict = match &scenario.side_by_side {
            Some(c) => side_by_side::verdict_word(c),
            None if scenario.target_name.as_deref() == Some(reference) => "reference",
            None => "",
        };
        let tail = [
            reference.to_owned(),
            ratio(ComparedMetric::Rps),
            ratio(ComparedMetric::P50),
            ratio(ComparedMetric::P99),
            verdict.to_owned(),
        ];
        let rows = 1 + scenario.steps.len() + scenario.requests.len() + scenario.checks.len();
        for i in 0..rows {
            let record = records.next().ok_or("fewer CSV rows than scenarios and steps")?.map_err(|e| e.to_string())?;
            let tail = if i == 0 { tail.clone() } else { Default::default() };
            write(&record, target, tail)?;
        }
    }
    let bytes = writer.into_inner().map_err(|e| e.to_string())?;
    String::from_utf8(bytes).map_err(|e| e.to_string())
}

/// The rows of every scenario, step, named request and check, under the header, with no side-by-side columns.
fn plain(cx: &Context) -> Result<String, String> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    for scenario in &cx.report.scenarios {
        writer.serialize(Row::of(scenario)).map_err(|e| e.to_string())?;
        for step in &scenario.steps {
            writer.serialize(Row::of_step(scenario, step)).map_err(|e| e.to_string())?;
        }
        for request in &scenario.requests {
            writer.serialize(Row::of_request(scenario, request)).map_err(|e| e.to_string())?;
        }
        for check in &scenario.checks {
            writer.serialize(Row::of_check(scenario, check)).map_err(|e| e.to_string())?;
        }
    }
    if cx.report.scenarios.is_empty() {
        // The header still tells a reader what the columns would be.
        writer.serialize(None::<Row>).map_err(|e| e.to_string())?;
    }
    let bytes = writer.into_inner().map_err(|e| e.to_string())?;
    String::from_utf8(bytes).map_err(|e| e.to_string())
}

/// A warning's kind as the JSON names it.
fn warning_kind(kind: WarningKind) -> &'static str {
    match kind {
        WarningKind::NoRequests => "no_requests",
        WarningKind::TooFast => "too_fast",
        _ => "other",
    }
}

#[cfg(test)]
// A failed expectation is a failed test; `expect` says which.
#[allow(clippy::expect_used)]
mod tests {
    use super::super::tests::sample_report;
    use super::*;

    #[test]
    fn one_row_per_scenario_under_a_header() {
        let report = sample_report();
        let out = render(&Context::new(&report, 3, Some("main"), false)).expect("csv");
        let mut reader = csv::Reader::from_reader(out.as_bytes());
        let header = reader.headers().expect("header").clone();
        let rows: Vec<csv::StringRecord> = reader.records().collect::<Result<_, _>>().expect("rows");
        assert_eq!(rows.len(), 3);
        let cell = |row: &csv::StringRecord, name: &str| {
            let i = header.iter().position(|h| h == name).unwrap_or_else(|| panic!("no column {name}"));
            row[i].to_owned()
        };
        assert_eq!(cell(&rows[0], "scenario"), "hello");
        assert_eq!(
            ["iterations", "responses", "responses_per_sec", "rps"].map(|c| cell(&rows[0], c)),
            ["300", "600", "400.0", "245.0"],
            "iterations and HTTP responses apart; rps stays successful iterations per second"
        );
        assert_eq!(cell(&rows[0], "verdict"), "regressed");
        assert_eq!(cell(&rows[0], "p50_old_us"), "200.0");
        assert_eq!(cell(&rows[0], "thresholds"), "met");
        assert_eq!(cell(&rows[0], "warnings"), "");
        assert!(!cell(&rows[0], "p95_us").is_empty());
        assert_eq!(cell(&rows[1], "scenario"), "guarded|pipe");
        assert_eq!(cell(&rows[1], "thresholds"), "failed");
        assert_eq!(cell(&rows[1], "failed_thresholds"), "p50 < 10ms (was 20.0ms)");
        assert_eq!(cell(&rows[2], "verdict"), "new");
        assert_eq!(cell(&rows[2], "rps_change_pct"), "");
        assert!(rows.iter().all(|r| cell(r, "step").is_empty()), "no steps in this report");
    }

    #[test]
    fn several_targets_add_the_target_and_the_comparison_with_the_first() {
        let mut report = sample_report();
        report.scenarios.truncate(1);
        report.scenarios[0].comparison = None;
        report.scenarios[0].target_name = Some("fast".into());
        let mut slow = report.scenarios[0].clone();
        slow.target_name = Some("slow".into());
        slow.rps /= 4.0;
        for run in &mut slow.runs {
            run.rps /= 4.0;
        }
        slow.steps = vec![StepReport {
            name: "insert".into(),
            iterations: 10,
            ok: 10,
            failed: 0,
            errors: Default::default(),
            causes: Default::default(),
            latency_us: None,
        }];
        report.scenarios.push(slow);
        crate::targets::compare_with_first(&mut report, "fast", 0.05);
        let out = render(&Context::new(&report, 3, None, false)).expect("csv");
        let mut reader = csv::Reader::from_reader(out.as_bytes());
        let header = reader.headers().expect("header").clone();
        assert_eq!(header.iter().take(5).collect::<Vec<_>>(), ["package", "bench", "scenario", "target", "step"]);
        let rows: Vec<csv::StringRecord> = reader.records().collect::<Result<_, _>>().expect("rows");
        let cell = |row: &csv::StringRecord, name: &str| {
            let i = header.iter().position(|h| h == name).unwrap_or_else(|| panic!("no column {name}"));
            row[i].to_owned()
        };
        assert_eq!(rows.len(), 3);
        let side = |row| SIDE_BY_SIDE_COLUMNS.map(|c| cell(row, c));
        assert_eq!(side(&rows[0]), ["fast", "1", "1", "1", "reference"]);
        assert_eq!(side(&rows[1]), ["fast", "0.25", "1", "1", "worse"]);
        assert_eq!((cell(&rows[1], "target"), cell(&rows[1], "rps")), ("slow".to_owned(), "61.25".to_owned()));
        assert_eq!((cell(&rows[2], "target"), cell(&rows[2], "step")), ("slow".to_owned(), "insert".to_owned()));
        assert_eq!(side(&rows[2]), ["", "", "", "", ""]);

        report.scenarios.truncate(1);
        let one = render(&Context::new(&report, 3, None, false)).expect("csv");
        assert!(!one.lines().next().unwrap_or_default().contains("target"), "one target: the usual columns\n{one}");
    }

    #[test]
    fn each_step_follows_its_scenario_as_a_row_of_its_own() {
        let mut report = sample_report();
        let latency = report.scenarios[0].latency_us.clone();
        report.scenarios[0].steps = vec![
            StepReport {
                name: "insert".into(),
                iterations: 10,
                ok: 9,
                failed: 1,
                errors: Default::default(),
                causes: Default::default(),
                latency_us: latency,
            },
            StepReport {
                name: "query".into(),
                iterations: 10,
                ok: 10,
                failed: 0,
                errors: Default::default(),
                causes: Default::default(),
                latency_us: None,
            },
        ];
        let out = render(&Context::new(&report, 1, None, false)).expect("csv");
        let mut reader = csv::Reader::from_reader(out.as_bytes());
        let header = reader.headers().expect("header").clone();
        let rows: Vec<csv::StringRecord> = reader.records().collect::<Result<_, _>>().expect("rows");
        let cell = |row: &csv::StringRecord, name: &str| {
            let i = header.iter().position(|h| h == name).unwrap_or_else(|| panic!("no column {name}"));
            row[i].to_owned()
        };
        assert_eq!(rows.len(), 5);
        assert_eq!((cell(&rows[0], "scenario"), cell(&rows[0], "step")), ("hello".to_owned(), String::new()));
        assert_eq!((cell(&rows[1], "scenario"), cell(&rows[1], "step")), ("hello".to_owned(), "insert".to_owned()));
        assert_eq!((cell(&rows[1], "iterations"), cell(&rows[1], "failed")), ("10".to_owned(), "1".to_owned()));
        assert_eq!(cell(&rows[1], "error_rate"), "0.1");
        assert_eq!(cell(&rows[2], "step"), "query");
        assert_eq!(cell(&rows[2], "p50_us"), "");
        assert_eq!(cell(&rows[3], "step"), "");
    }

    #[test]
    fn named_requests_and_checks_follow_the_steps_as_rows_of_their_own() {
        let mut report = sample_report();
        report.scenarios.truncate(1);
        let latency = report.scenarios[0].latency_us.clone();
        let row = |name: &str| StepReport {
            name: name.into(),
            iterations: 10,
            ok: 9,
            failed: 1,
            errors: Default::default(),
            causes: Default::default(),
            latency_us: latency.clone(),
        };
        report.scenarios[0].steps = vec![row("browse")];
        report.scenarios[0].requests = vec![row("GET /items/{id}")];
        report.scenarios[0].checks = vec![CheckReport { name: "has id".into(), passes: 992, fails: 8 }];
        let out = render(&Context::new(&report, 1, None, false)).expect("csv");
        let mut reader = csv::Reader::from_reader(out.as_bytes());
        let header = reader.headers().expect("header").clone();
        let rows: Vec<csv::StringRecord> = reader.records().collect::<Result<_, _>>().expect("rows");
        let cell = |row: &csv::StringRecord, name: &str| {
            let i = header.iter().position(|h| h == name).unwrap_or_else(|| panic!("no column {name}"));
            row[i].to_owned()
        };
        let kinds: Vec<[String; 3]> = rows.iter().map(|r| ["step", "request", "check"].map(|c| cell(r, c))).collect();
        assert_eq!(
            kinds,
            [
                ["", "", ""].map(String::from),
                ["browse", "", ""].map(String::from),
                ["", "GET /items/{id}", ""].map(String::from),
                ["", "", "has id"].map(String::from),
            ]
        );
        assert_eq!(["iterations", "ok", "failed", "error_rate"].map(|c| cell(&rows[2], c)), ["10", "9", "1", "0.1"]);
        assert!(cell(&rows[2], "p50_us").parse::<f64>().is_ok(), "{out}");
        assert_eq!(
            ["iterations", "ok", "failed", "error_rate"].map(|c| cell(&rows[3], c)),
            ["1000", "992", "8", "0.008"]
        );
        assert_eq!(cell(&rows[3], "p50_us"), "");

        // Side by side, every row of a scenario still gets its target.
        report.scenarios[0].target_name = Some("fast".into());
        let mut slow = report.scenarios[0].clone();
        slow.target_name = Some("slow".into());
        report.scenarios.push(slow);
        let out = render(&Context::new(&report, 1, None, false)).expect("csv");
        let mut reader = csv::Reader::from_reader(out.as_bytes());
        let header = reader.headers().expect("header").clone();
        let target = header.iter().position(|h| h == "target").expect("a target column");
        let targets: Vec<String> = reader.records().map(|r| r.expect("row")[target].to_owned()).collect();
        assert_eq!(targets, ["fast", "fast", "fast", "fast", "slow", "slow", "slow", "slow"]);
    }
}
