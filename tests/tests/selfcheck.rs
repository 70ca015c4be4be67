//! The generator's self-check: a run that starves loadbench itself is flagged, in the JSON and
//! the table; a run limited by a slow server is not.
//!
//! A test binary of its own, and one run at a time, so that no other test's load on the machine
//! is mistaken for (or hides) the generator's.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use loadbench::report::ScenarioReport;
use loadbench_tests::{Behavior, TestServer};

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn run(scenario: &str, target: &str) -> ScenarioReport {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let report = loadbench::Harness::new()
        .target(target)
        .only(scenario)
        .worker_threads(1)
        .progress(false)
        .run_report()
        .unwrap_or_else(|e| panic!("{scenario}: {e}"));
    loadbench_tests::schema::Schema::RunReport.assert_serializes_valid(&report, scenario);
    report.scenarios.into_iter().next().unwrap_or_else(|| panic!("{scenario}: no report"))
}

/// 50 users on one thread, each iteration burning 1 ms of CPU before its request: the thread
/// cannot keep up, whatever the server does.
#[loadbench::scenario(concurrency = 50, count = 1_500)]
async fn starved(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    let spin = Instant::now();
    while spin.elapsed() < Duration::from_millis(1) {
        std::hint::spin_loop();
    }
    ctx.get("/").send().await?.expect_status(200)?;
    Ok(())
}

#[loadbench::scenario(concurrency = 10, count = 500)]
async fn waits_on_the_server(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?.expect_status(200)?;
    Ok(())
}

#[test]
fn a_starved_generator_is_flagged() {
    let server = TestServer::start(Behavior::default());
    let report = run("starved", &server.url());

    assert_eq!(report.ok, 1_500);
    let generator = report.generator.clone().expect("self-check figures");
    assert!(generator.saturated, "{generator:?}");
    assert_eq!(generator.worker_threads, 1);
    assert!(generator.lag_p99_us.is_some_and(|lag| lag >= 20_000), "{generator:?}");

    let mut run = loadbench::report::RunReport::new(std::time::SystemTime::now());
    run.scenarios.push(report);
    let table = loadbench::report::table::render(&run);
    assert!(table.contains("starved: warning: the generator was saturated ("), "{table}");
    assert!(table.contains("may show loadbench's limit, not the server's"), "{table}");
}

#[test]
fn a_generator_waiting_on_a_slow_server_is_not_flagged() {
    let server = TestServer::start(Behavior { delay: Duration::from_millis(20), ..Behavior::default() });
    let report = run("waits_on_the_server", &server.url());

    assert_eq!(report.ok, 500);
    let generator = report.generator.clone().expect("self-check figures");
    assert!(!generator.saturated, "{generator:?}");
    assert!(generator.cpu_utilization.is_some_and(|u| u < 0.5), "{generator:?}");

    let mut run = loadbench::report::RunReport::new(std::time::SystemTime::now());
    run.scenarios.push(report);
    assert!(!loadbench::report::table::render(&run).contains("saturated"));
}
