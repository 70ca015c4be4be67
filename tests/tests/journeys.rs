//! User journeys against real servers on 127.0.0.1: named steps inside an iteration, and a setup
//! and teardown per virtual user, counted as the server sees them.
//!
//! One run at a time: some tests check durations, which other runs on a 2-core machine would
//! stretch.

use std::sync::Mutex;
use std::time::Duration;

use loadbench::report::{ScenarioReport, StepReport};
use loadbench_tests::timing::assert_ran_for;
use loadbench_tests::{Behavior, TestServer};

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn run(scenario: &str, target: &str) -> ScenarioReport {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    loadbench_tests::run_scenario(scenario, target)
}

fn step<'a>(report: &'a ScenarioReport, name: &str) -> &'a StepReport {
    report.steps.iter().find(|s| s.name == name).unwrap_or_else(|| panic!("no step `{name}`: {:?}", report.steps))
}

/// Two steps that always both run, so that each step's count is the iteration count; the
/// iteration fails if either did.
#[loadbench::scenario(name = "two_steps", concurrency = 4, count = 100)]
#[loadbench::scenario(name = "two_steps_warm", concurrency = 4, count = 50, warmup = 10)]
async fn insert_then_query(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    let inserted = ctx
        .step("insert", async |ctx| {
            ctx.post("/items").body("{}").send().await?.expect_status(200)?;
            Ok(())
        })
        .await;
    let found =
        ctx.step("query", async |ctx| Ok(ctx.get("/items").send().await?.expect_status(200)?.bytes().len())).await;
    inserted?;
    if found? == 0 {
        return Err(loadbench::Error::msg("empty answer"));
    }
    Ok(())
}

#[test]
fn each_step_is_counted_with_its_own_errors_and_latency() {
    let server = TestServer::start(Behavior { fail_every: Some(7), ..Behavior::default() });
    let report = run("two_steps", &server.url());

    assert_eq!(server.requests(), 200, "two requests per iteration");
    assert_eq!(report.iterations, 100);
    assert_eq!(report.steps.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["insert", "query"]);
    let (insert, query) = (step(&report, "insert"), step(&report, "query"));
    assert_eq!((insert.iterations, query.iterations), (100, 100), "iterations × steps");
    // Every 7th request the server answered 500, whichever step sent it.
    assert_eq!(insert.failed + query.failed, 200 / 7);
    assert_eq!(insert.errors.status + query.errors.status, 200 / 7);
    assert_eq!(insert.ok + insert.failed, 100);
    // An iteration fails when either step did; both may fail in the same iteration.
    assert!((14..=28).contains(&report.failed), "{} failed iterations", report.failed);
    assert!(insert.latency_us.as_ref().is_some_and(|l| l.min > 0.0 && l.min <= l.p50 && l.p50 <= l.max), "{insert:?}");

    let table = loadbench::report::table::render(&{
        let mut run = loadbench::report::RunReport::new(std::time::SystemTime::now());
        run.scenarios.push(report);
        run
    });
    assert!(table.contains("|   └ insert "), "{table}");
}

#[test]
fn steps_of_warmup_iterations_are_not_counted() {
    let server = TestServer::start(Behavior::default());
    let report = run("two_steps_warm", &server.url());

    assert_eq!(server.requests(), 2 * (50 + 10));
    assert_eq!(report.warmup_iterations, 10);
    assert_eq!((step(&report, "insert").iterations, step(&report, "query").iterations), (50, 50));
    // Nor are the warmup's exchanges: the responses are the measured iterations' own.
    assert_eq!(report.http.responses, 2 * 50, "{:?}", report.http);
    assert_eq!(report.http.status.get(&200), Some(&(2 * 50)), "{:?}", report.http);
}

/// Three requests an iteration, each its own step.
#[loadbench::scenario(name = "three_requests", concurrency = 4, count = 300)]
async fn three_requests(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.step("login", async |ctx| ctx.post("/login").send().await?.expect_status(200)).await?;
    ctx.get("/items").send().await?.expect_status(200)?;
    ctx.post("/logout").send().await?.expect_status(200)?;
    Ok(())
}

#[test]
fn a_journey_shows_its_iterations_and_its_http_requests_apart() {
    let server = TestServer::start(Behavior::default());
    let report = run("three_requests", &server.url());

    assert_eq!(server.requests(), 900, "three requests an iteration");
    // The JSON: iterations and HTTP responses, each as the server counted.
    let json = serde_json::to_value(&report).unwrap_or_default();
    assert_eq!((json["iterations"].as_u64(), json["ok"].as_u64()), (Some(300), Some(300)), "{json:#}");
    assert_eq!(json["http"]["responses"].as_u64(), Some(server.requests()), "{json:#}");
    // The table: both, and req/s counts HTTP requests (three times the iterations' rate).
    let (rps, seconds) = (report.rps, report.duration_us as f64 / 1e6);
    let table = loadbench::report::table::render(&{
        let mut run = loadbench::report::RunReport::new(std::time::SystemTime::now());
        run.scenarios.push(report);
        run
    });
    let row = loadbench_tests::cli::row(&table, "three_requests");
    assert_eq!(row[1..4], ["300", "0", "900"], "iterations, failed, HTTP responses: {table}");
    assert_eq!(row[4], loadbench::report::units::rate(900.0 / seconds), "{table}");
    // (`rps` was computed before the JSON's duration was rounded to microseconds.)
    assert!((900.0 / seconds / rps - 3.0).abs() < 1e-3, "req/s is three times the iterations' rate: {table}");
    // The step's row counts its runs, and its rate its successful runs.
    let login = loadbench_tests::cli::row(&table, "└ login");
    assert_eq!(login[1..4], ["300", "0", "-"], "{table}");
    assert_eq!(login[4], loadbench::report::units::rate(300.0 / seconds), "{table}");
}

/// Logs in slowly (150 ms), so that a setup counted in the figures would show.
async fn log_in(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.post("/login").send().await?.expect_status(200)?;
    tokio::time::sleep(Duration::from_millis(150)).await;
    Ok(())
}

async fn log_out(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.post("/logout").send().await?.expect_status(200)?;
    Ok(())
}

/// User 0 cannot log in.
async fn log_in_but_not_user_0(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    if ctx.user() == 0 {
        return Err(loadbench::Error::msg("user 0 has no account"));
    }
    log_in(ctx).await
}

#[loadbench::scenario(name = "logged_in", concurrency = 5, count = 50, setup = log_in, teardown = log_out)]
#[loadbench::scenario(name = "logged_in_for", concurrency = 2, duration = "500ms", setup = log_in, teardown = log_out)]
#[loadbench::scenario(name = "one_cannot_log_in", concurrency = 4, count = 40, setup = log_in_but_not_user_0, teardown = log_out)]
async fn browse(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?.expect_status(200)?;
    Ok(())
}

#[test]
fn setup_and_teardown_run_once_per_user_outside_the_figures() {
    let server = TestServer::start(Behavior::default());
    let report = run("logged_in", &server.url());

    assert_eq!(server.requests(), 5 + 50 + 5, "a login and a logout per user around the iterations");
    assert_eq!(report.iterations, 50);
    assert_eq!(report.http.responses, 50, "the setup's and teardown's exchanges are not the scenario's");
    let setup = report.user_setup.clone().expect("setup figures");
    assert_eq!((setup.runs, setup.failed), (5, 0));
    let teardown = report.user_teardown.clone().expect("teardown figures");
    assert_eq!((teardown.runs, teardown.failed), (5, 0));
    let latency = report.latency_us.as_ref().expect("latency");
    assert!(latency.max < 100_000.0, "the 150 ms login is not in the latency: {latency:?}");
    assert!(report.duration_us < 150_000, "nor in the duration: {}µs", report.duration_us);

    let server = TestServer::start(Behavior::default());
    let report = run("logged_in_for", &server.url());
    assert_ran_for(report.duration_us, Duration::from_millis(500), "500 ms after the logins");
    assert_eq!(server.requests(), 2 + report.iterations + 2);
}

#[test]
fn a_user_whose_setup_fails_runs_nothing_and_the_others_do_the_work() {
    let server = TestServer::start(Behavior::default());
    let report = run("one_cannot_log_in", &server.url());

    assert_eq!(report.iterations, 40, "count stays exact");
    assert_eq!(report.failed, 0);
    let setup = report.user_setup.clone().expect("setup figures");
    assert_eq!((setup.runs, setup.failed), (4, 1));
    assert_eq!(setup.first_error.as_deref(), Some("user 0 has no account"));
    assert_eq!(report.user_teardown.as_ref().map(|t| t.runs), Some(3), "only users that logged in log out");
    assert_eq!(server.requests(), 3 + 40 + 3);

    let mut run = loadbench::report::RunReport::new(std::time::SystemTime::now());
    run.scenarios.push(report);
    let table = loadbench::report::table::render(&run);
    assert!(
        table.contains("one_cannot_log_in: setup failed for 1 of 4 virtual users (first: user 0 has no account)"),
        "{table}"
    );
}

// Two kinds of users as one workload: 4 inserting while 6 query, for the same second.
#[loadbench::scenario(name = "shop_insert", group = "shop", concurrency = 4, duration = "1s")]
async fn shop_insert(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.post("/items").body("{}").send().await?.expect_status(200)?;
    Ok(())
}

#[loadbench::scenario(name = "shop_query", group = "shop", concurrency = 6, duration = "1s")]
async fn shop_query(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/items").send().await?.expect_status(200)?;
    Ok(())
}

#[test]
fn the_scenarios_of_a_group_run_at_the_same_time_and_are_reported_apart_and_together() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let server = TestServer::start(Behavior { delay: Duration::from_millis(50), ..Behavior::default() });
    let report = loadbench::Harness::new()
        .target(server.url())
        .only("shop_insert")
        .only("shop_query")
        .progress(false)
        .run_report()
        .unwrap_or_else(|e| panic!("{e}"));

    // One after the other, the server would never see more than 6 requests at once.
    server.assert_peak(10, "4 + 6 users in flight together");
    let names: Vec<&str> = report.scenarios.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["shop_insert", "shop_query"]);
    let (insert, query) = (&report.scenarios[0], &report.scenarios[1]);
    assert_eq!(server.requests(), insert.iterations + query.iterations);
    // 50 ms a request for a second: about 20 per user.
    assert!(insert.iterations.abs_diff(80) <= 20, "{} inserts", insert.iterations);
    assert!(query.iterations.abs_diff(120) <= 25, "{} queries", query.iterations);
    for s in &report.scenarios {
        assert_ran_for(s.duration_us, Duration::from_secs(1), &s.name);
        assert_eq!(s.config.group.as_deref(), Some("shop"));
    }
    let table = loadbench::report::table::render(&report);
    let together = format!(
        "group shop (shop_insert + shop_query, together): {} iterations, 0 failed, {} responses, ",
        insert.iterations + query.iterations,
        server.requests()
    );
    assert!(table.contains(&together), "{table}");
}

/// What `remember` leaves for the iterations of its user.
#[derive(Default)]
struct Session {
    token: Option<String>,
}

async fn remember(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/login").send().await?.expect_status(200)?;
    let token = format!("token-of-user-{}", ctx.user());
    ctx.user_data::<Session>().token = Some(token);
    Ok(())
}

#[loadbench::scenario(concurrency = 4, count = 40, setup = remember)]
async fn uses_its_token(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    let expected = format!("token-of-user-{}", ctx.user());
    if ctx.user_data::<Session>().token.as_deref() != Some(expected.as_str()) {
        return Err(loadbench::Error::msg(format!("user {} lost its token", ctx.user())));
    }
    ctx.get("/").send().await?.expect_status(200)?;
    Ok(())
}

#[test]
fn what_a_setup_keeps_in_user_data_is_there_in_every_iteration() {
    let server = TestServer::start(Behavior::default());
    let report = run("uses_its_token", &server.url());

    assert_eq!(report.ok, 40, "errors: {:?}", report.errors);
    assert_eq!(report.failed, 0);
    assert_eq!(server.requests(), 4 + 40, "one login per user, then the iterations");
}
