//! Thresholds on a named row (`thresholds("home": p99 < "1s")`) against a real server on
//! 127.0.0.1: judged on that row's figures, met or missed as the attribute says, and failing,
//! with its reason, when no row of the name was recorded.
//!
//! One run at a time, as in `names_and_checks.rs`.

use std::sync::Mutex;

use loadbench::report::{ScenarioReport, ThresholdOutcome};
use loadbench_tests::{Behavior, TestServer};

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn run(scenario: &str, target: &str) -> ScenarioReport {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    loadbench_tests::run_scenario(scenario, target)
}

/// A table of `report` alone, as a bench binary prints it.
fn table(report: &ScenarioReport) -> String {
    let mut run = loadbench::report::RunReport::new(std::time::SystemTime::now());
    run.scenarios.push(report.clone());
    loadbench::report::table::render(&run)
}

/// 20 named requests `home` and 20 unnamed ones, each row held to limits it meets.
#[loadbench::scenario(
    name = "rows_met",
    concurrency = 2,
    count = 20,
    thresholds("home": p99 < "1h", "home": failed <= 0, "home": error_rate < 1%, "home": rps > 0, "home": max < "1h")
)]
async fn rows_met(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").name("home").send().await?.expect_status(200)?;
    ctx.get("/other").send().await?.expect_status(200)?;
    Ok(())
}

/// The same requests, with a latency limit no request can meet and a threshold on a name never
/// recorded; the scenario's own threshold still holds.
#[loadbench::scenario(
    name = "rows_missed",
    concurrency = 2,
    count = 20,
    thresholds(failed <= 0, "home": p99 < "1ns", "hmoe": max < "1h")
)]
async fn rows_missed(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").name("home").send().await?.expect_status(200)?;
    ctx.get("/other").send().await?.expect_status(200)?;
    Ok(())
}

/// A step and a named request of one name, both held to the threshold: the step's 404 fails it.
#[loadbench::scenario(name = "step_and_request", concurrency = 1, count = 5, thresholds("pair": failed <= 0))]
async fn step_and_request(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").name("pair").send().await?.expect_status(200)?;
    let _ = ctx.step("pair", async |ctx| ctx.get("/missing/pair").send().await?.expect_status(200)).await;
    Ok(())
}

fn passed(outcomes: &[ThresholdOutcome]) -> Vec<bool> {
    outcomes.iter().map(|o| o.passed).collect()
}

#[test]
fn a_named_requests_thresholds_are_judged_on_its_row_and_met() {
    let server = TestServer::start(Behavior::default());
    let report = run("rows_met", &server.url());

    assert_eq!(server.requests(), 40);
    assert_eq!(passed(&report.thresholds), [true; 5], "{:#?}", report.thresholds);
    assert!(!loadbench::report::check::any_failed(&report));
    assert!(report.thresholds.iter().all(|o| o.row.as_deref() == Some("home") && !o.row_missing));
    // `failed` and `error_rate` are the row's own: 0 of its 20.
    assert_eq!(report.thresholds[1].actual, Some(0.0));
    assert_eq!(report.thresholds[2].actual, Some(0.0));
    // The row's 20 runs over the scenario's time: more than 0, at most what the whole run did.
    let rps = report.thresholds[3].actual.unwrap_or_default();
    assert!(rps > 0.0 && rps <= 20.0 * 1e6 / report.duration_us as f64 + 1e-9, "{rps}");

    let table = table(&report);
    assert!(
        table.contains(
            "\nrows_met: thresholds met: {home}: p99 < 1h, {home}: failed <= 0, {home}: error_rate < 0.01, \
             {home}: rps > 0, {home}: max < 1h\n"
        ),
        "{table}"
    );
    let json = serde_json::to_value(&report).unwrap_or_default();
    assert_eq!(json["config"]["row_thresholds"][0]["row"], "home", "{json}");
    assert_eq!(json["thresholds"][0]["row"], "home", "{json}");
    assert!(json["thresholds"][0].get("row_missing").is_none(), "{json}");
}

#[test]
fn a_missed_row_threshold_and_one_on_an_unrecorded_name_fail_the_scenario() {
    let server = TestServer::start(Behavior::default());
    let report = run("rows_missed", &server.url());

    assert_eq!((report.ok, report.failed), (20, 0));
    assert_eq!(passed(&report.thresholds), [true, false, false], "{:#?}", report.thresholds);
    assert!(loadbench::report::check::any_failed(&report), "the run fails: exit code 1");
    let missed = &report.thresholds[1];
    assert!(missed.actual.is_some_and(|us| us > 0.001), "{missed}");
    assert!(missed.to_string().starts_with("{home}: p99 < 1ns (was "), "{missed}");
    let unrecorded = &report.thresholds[2];
    assert!(unrecorded.row_missing && unrecorded.actual.is_none(), "{unrecorded:?}");
    assert_eq!(unrecorded.to_string(), "{hmoe}: max < 1h (no step or named request `hmoe` was recorded)");

    let table = table(&report);
    let line =
        table.lines().find(|l| l.starts_with("rows_missed: thresholds failed: ")).unwrap_or_else(|| panic!("{table}"));
    assert!(line.contains("{home}: p99 < 1ns (was "), "{line}");
    assert!(line.ends_with(", {hmoe}: max < 1h (no step or named request `hmoe` was recorded)"), "{line}");
}

#[test]
fn a_step_and_a_request_of_one_name_are_both_held_to_it() {
    let server = TestServer::start(Behavior::default());
    let report = run("step_and_request", &server.url());

    assert_eq!(server.requests(), 10);
    let outcome = report.thresholds.first().cloned().expect("one threshold");
    assert!(!outcome.passed, "the step failed 5 times: {outcome}");
    assert_eq!(outcome.actual, Some(5.0), "the step's figure, not the request's 0");
}
