//! Named requests (`.name(…)`) and checks (`ctx.check`) against real servers on 127.0.0.1: each
//! name's requests one row, counted as the server saw them; each check's passes and failures,
//! exactly; both only for measured iterations; the `checks` threshold.
//!
//! One run at a time, as in `journeys.rs`.

use std::sync::Mutex;

use loadbench::report::{CheckReport, ScenarioReport};
use loadbench_tests::request_row as request;
use loadbench_tests::{Behavior, TestServer};

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn run(scenario: &str, target: &str) -> ScenarioReport {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    loadbench_tests::run_scenario(scenario, target)
}

/// This user's iterations so far, this one included.
fn next(ctx: &mut loadbench::Ctx) -> u32 {
    let n = ctx.user_data::<u32>();
    *n += 1;
    *n
}

/// A table of `report` alone, as a bench binary prints it.
fn table(report: &ScenarioReport) -> String {
    let mut run = loadbench::report::RunReport::new(std::time::SystemTime::now());
    run.scenarios.push(report.clone());
    loadbench::report::table::render(&run)
}

/// A named GET of a URL of its own every iteration, then an unnamed one.
#[loadbench::scenario(name = "named_items", concurrency = 4, count = 200)]
#[loadbench::scenario(name = "named_items_warm", concurrency = 4, count = 100, warmup = 20)]
async fn items(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    let n = next(ctx);
    let path = format!("/items/{}-{n}", ctx.user());
    ctx.get(&path).name("GET /items/{id}").send().await?.expect_status(200)?;
    ctx.get("/").send().await?.expect_status(200)?;
    Ok(())
}

#[test]
fn requests_under_one_name_are_one_row() {
    let server = TestServer::start(Behavior::default());
    let report = run("named_items", &server.url());

    assert_eq!(server.requests(), 400, "a named and an unnamed request per iteration");
    let items: Vec<String> = server.seen().into_iter().map(|r| r.path).filter(|p| p.starts_with("/items/")).collect();
    let distinct: std::collections::BTreeSet<&String> = items.iter().collect();
    assert_eq!((items.len(), distinct.len()), (200, 200), "200 different URLs");
    assert_eq!(report.requests.len(), 1, "{:?}", report.requests);
    let row = request(&report, "GET /items/{id}");
    assert_eq!((row.iterations, row.ok, row.failed), (items.len() as u64, 200, 0));
    assert!(row.latency_us.as_ref().is_some_and(|l| l.min > 0.0 && l.min <= l.p50 && l.p50 <= l.max), "{row:?}");
    assert!(report.steps.is_empty(), "a name is not a step");

    let table = table(&report);
    assert!(table.contains("|   ↳ GET /items/{id} |"), "{table}");
    let json = serde_json::to_value(&report).unwrap_or_default();
    assert_eq!(json["requests"][0]["name"], "GET /items/{id}", "{json}");
    assert_eq!(json["requests"][0]["iterations"], 200, "{json}");
    assert_eq!(json["checks"], serde_json::json!([]), "{json}");
}

#[test]
fn requests_of_warmup_iterations_are_not_in_the_row() {
    let server = TestServer::start(Behavior::default());
    let report = run("named_items_warm", &server.url());

    assert_eq!(server.requests(), 2 * (100 + 20));
    assert_eq!(report.warmup_iterations, 20);
    assert_eq!(request(&report, "GET /items/{id}").iterations, 100);
}

/// Every fifth iteration of each user asks for an item that does not exist, and carries on.
#[loadbench::scenario(name = "named_not_found", concurrency = 2, count = 50)]
async fn sometimes_missing(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    let path = if next(ctx).is_multiple_of(5) { "/missing/item" } else { "/items/item" };
    ctx.get(path).name("GET item").send().await?;
    Ok(())
}

#[test]
fn a_404_fails_in_its_row_but_not_its_iteration() {
    let server = TestServer::start(Behavior::default());
    let report = run("named_not_found", &server.url());

    let missing = server.seen().iter().filter(|r| r.path.starts_with("/missing/")).count() as u64;
    assert!(missing >= 8, "every fifth of 50 iterations, however the users share them: {missing}");
    assert_eq!(server.requests(), 50);
    assert_eq!((report.ok, report.failed), (50, 0), "the body does not check the status");
    let row = request(&report, "GET item");
    assert_eq!((row.iterations, row.ok, row.failed), (50, 50 - missing, missing));
    assert_eq!(row.errors.status, missing, "{row:?}");
    assert!(report.http.status.get(&404) == Some(&missing), "{:?}", report.http.status);
}

/// A named request inside a step, with an unnamed one beside it.
#[loadbench::scenario(name = "named_in_step", concurrency = 2, count = 40)]
async fn in_a_step(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.step("fetch", async |ctx| {
        ctx.get("/a").name("GET /a").send().await?.expect_status(200)?;
        ctx.get("/b").send().await?.expect_status(200)?;
        Ok(())
    })
    .await
}

#[test]
fn a_named_request_inside_a_step_is_in_both_rows() {
    let server = TestServer::start(Behavior::default());
    let report = run("named_in_step", &server.url());

    assert_eq!(server.requests(), 80);
    assert_eq!(report.steps.iter().map(|s| (s.name.as_str(), s.iterations)).collect::<Vec<_>>(), [("fetch", 40)]);
    assert_eq!(report.requests.iter().map(|s| (s.name.as_str(), s.iterations)).collect::<Vec<_>>(), [("GET /a", 40)]);
    let table = table(&report);
    let at = |needle: &str| table.find(needle).unwrap_or_else(|| panic!("{needle}: {table}"));
    assert!(at("| named_in_step ") < at("└ fetch") && at("└ fetch") < at("↳ GET /a"), "{table}");
}

/// One user, so that its tenth, twentieth, … iteration are the run's: the check `not tenth`
/// fails exactly once in ten; the iteration never fails for it.
#[loadbench::scenario(name = "checked", concurrency = 1, count = 200, thresholds(checks >= 95%))]
#[loadbench::scenario(name = "checked_strict", concurrency = 1, count = 200, thresholds(checks > 0.96))]
#[loadbench::scenario(name = "checked_warm", concurrency = 1, count = 50, warmup = 10)]
async fn checked(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    let n = next(ctx);
    let response = ctx.get("/").send().await?;
    ctx.check("status is 200", response.status() == 200);
    if !ctx.check("not tenth", !n.is_multiple_of(10)) {
        return Ok(());
    }
    Ok(())
}

/// Makes no check, with a threshold on checks.
#[loadbench::scenario(name = "unchecked", concurrency = 1, count = 5, thresholds(checks > 0.5))]
async fn unchecked(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?.expect_status(200)?;
    Ok(())
}

fn checks(report: &ScenarioReport) -> Vec<(&str, u64, u64)> {
    report.checks.iter().map(|c: &CheckReport| (c.name.as_str(), c.passes, c.fails)).collect()
}

#[test]
fn checks_are_counted_exactly_and_never_fail_the_iteration() {
    let server = TestServer::start(Behavior::default());
    let report = run("checked", &server.url());

    assert_eq!(server.requests(), 200);
    assert_eq!((report.ok, report.failed), (200, 0));
    assert_eq!(checks(&report), [("status is 200", 200, 0), ("not tenth", 180, 20)]);
    // 380 of 400 checks passed: 95 %, which `checks >= 95%` accepts.
    let outcome = report.thresholds.first().cloned().expect("one threshold");
    assert!(outcome.passed, "{outcome}");
    assert_eq!(outcome.actual, Some(0.95));

    let table = table(&report);
    assert!(
        table.contains(
            "\nchecked: checks 95.0% passed: status is 200 100.0% (200 of 200), not tenth 90.0% (180 of 200)\n"
        ),
        "{table}"
    );
    assert!(table.contains("\nchecked: thresholds met: checks >= 0.95\n"), "{table}");
    let json = serde_json::to_value(&report).unwrap_or_default();
    assert_eq!(json["checks"][1], serde_json::json!({"name": "not tenth", "passes": 180, "fails": 20}), "{json}");
    assert_eq!(json["thresholds"][0]["metric"], "checks", "{json}");
}

#[test]
fn the_checks_threshold_fails_below_its_limit_and_when_no_check_was_made() {
    let server = TestServer::start(Behavior::default());
    let strict = run("checked_strict", &server.url());
    let outcome = strict.thresholds.first().cloned().expect("one threshold");
    assert!(!outcome.passed && outcome.actual == Some(0.95), "{outcome}");
    assert!(table(&strict).contains("\nchecked_strict: threshold failed: checks > 0.96 (was 0.95)\n"));

    let none = run("unchecked", &server.url());
    assert!(none.checks.is_empty());
    let outcome = none.thresholds.first().cloned().expect("one threshold");
    assert!(!outcome.passed && outcome.actual.is_none(), "{outcome}");
    assert_eq!(outcome.to_string(), "checks > 0.5 (not measured: no check was made)");
}

#[test]
fn checks_of_warmup_iterations_are_not_counted() {
    let server = TestServer::start(Behavior::default());
    let report = run("checked_warm", &server.url());

    assert_eq!(server.requests(), 60);
    // The user's 10 warmup iterations came first: its measured ones are its 11th to 60th.
    assert_eq!(checks(&report), [("status is 200", 50, 0), ("not tenth", 45, 5)]);
}

/// A setup and a teardown that make a named request, run a step and a check: the server sees
/// them, no figure counts them (as their time and exchanges are in no figure).
async fn hook_traffic(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.step("in a hook", async |ctx| {
        ctx.get("/hook").name("GET /items/{id}").send().await?.expect_status(200)?;
        Ok(())
    })
    .await?;
    ctx.check("has an id", false);
    Ok(())
}

#[loadbench::scenario(name = "named_with_hooks", concurrency = 2, count = 10, setup = hook_traffic, teardown = hook_traffic)]
async fn named_with_hooks(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/items/1").name("GET /items/{id}").send().await?.expect_status(200)?;
    ctx.check("has an id", true);
    Ok(())
}

#[test]
fn a_setup_s_and_a_teardown_s_names_steps_and_checks_are_in_no_figure() {
    let server = TestServer::start(Behavior::default());
    let report = run("named_with_hooks", &server.url());

    let hooks = server.seen().into_iter().filter(|r| r.path == "/hook").count();
    assert_eq!(hooks, 4, "two users' setups and teardowns reached the server");
    let row = request(&report, "GET /items/{id}");
    assert_eq!((row.iterations, row.ok), (10, 10), "the iterations' requests only");
    assert!(report.steps.is_empty(), "the hooks' step: {:?}", report.steps);
    let checks: Vec<(&str, u64, u64)> = report.checks.iter().map(|c| (c.name.as_str(), c.passes, c.fails)).collect();
    assert_eq!(checks, [("has an id", 10, 0)], "the hooks' failed checks are not counted");
}
