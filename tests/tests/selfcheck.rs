//! The generator's self-check: a run that starves loadbench itself is flagged, in the JSON and
//! the table; a run limited by a slow server is not.
//!
//! A test binary of its own, and one run at a time, so that no other test's load on the machine
//! is mistaken for (or hides) the generator's.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use loadbench::report::{GeneratorLimit, ScenarioReport};
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
    // Its own CPU, unless this machine is so busy that the thread mostly waited for one: then
    // the table says so, with the wait, rather than blaming the generator.
    match generator.limit {
        Some(GeneratorLimit::GeneratorCpu) => {
            assert!(table.contains("starved: warning: generator busy: its worker threads were at "), "{table}");
            assert!(
                table.contains("% CPU (1 thread); these figures may be its own limit, not the server's"),
                "{table}"
            );
        }
        Some(GeneratorLimit::MachineBusy) => {
            assert!(generator.waited_for_cpu.is_some_and(|w| w >= 0.05), "{generator:?}");
            assert!(table.contains("starved: warning: machine busy: timers fired "), "{table}");
        }
        other => panic!("a starved generator is busy, not {other:?}: {generator:?}"),
    }
}

#[test]
fn a_generator_waiting_on_a_slow_server_is_not_flagged() {
    let server = TestServer::start(Behavior { delay: Duration::from_millis(20), ..Behavior::default() });
    let report = run("waits_on_the_server", &server.url());

    assert_eq!(report.ok, 500);
    let generator = report.generator.clone().expect("self-check figures");
    assert!(!generator.saturated, "{generator:?}");
    assert_eq!(generator.limit, None);
    assert!(generator.cpu_utilization.is_some_and(|u| u < 0.5), "{generator:?}");

    let mut run = loadbench::report::RunReport::new(std::time::SystemTime::now());
    run.scenarios.push(report);
    assert!(!loadbench::report::table::render(&run).contains("saturated"));
}

/// Two users on one thread, an easy load: whatever limits it is not the generator.
#[loadbench::scenario(concurrency = 2, duration = "1500ms")]
async fn on_a_busy_machine(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?.expect_status(200)?;
    Ok(())
}

/// Where the child runs `on_a_busy_machine` and writes its report.
const CHILD_ENV: &str = "LOADBENCH_SELFCHECK_CHILD";

#[test]
#[ignore = "run by a_busy_machine_is_not_blamed_on_the_generator in a child process"]
fn child_runs_on_a_busy_machine() {
    let spec = std::env::var(CHILD_ENV).expect("started by a_busy_machine_is_not_blamed_on_the_generator");
    let (url, out) = spec.split_once(' ').expect("URL and output path");
    let report = run("on_a_busy_machine", url);
    std::fs::write(out, serde_json::to_vec(&report).expect("JSON")).expect("the report is written");
}

/// The generator, in a child process at the lowest priority (`nice -n 19`), runs an easy load
/// while this process keeps every core busy: its timers fire late though it uses little CPU, and
/// it waits for one. The table says the machine was busy, not the generator.
#[test]
fn a_busy_machine_is_not_blamed_on_the_generator() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let server = TestServer::start(Behavior::default());
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("report.json");
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let spinners: Vec<_> = (0..cores)
        .map(|_| {
            let stop = std::sync::Arc::clone(&stop);
            std::thread::spawn(move || {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            })
        })
        .collect();
    let exe = std::env::current_exe().expect("the test binary's path");
    let status = std::process::Command::new("nice")
        .args(["-n", "19"])
        .arg(exe)
        .args(["--exact", "child_runs_on_a_busy_machine", "--ignored", "--test-threads", "1"])
        .env(CHILD_ENV, format!("{} {}", server.url(), out.display()))
        .stdout(std::process::Stdio::null())
        .status();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for spinner in spinners {
        let _ = spinner.join();
    }
    assert!(status.expect("`nice` runs").success(), "the child ran");
    let report: ScenarioReport =
        serde_json::from_slice(&std::fs::read(&out).expect("the child's report")).expect("its JSON");
    let generator = report.generator.clone().expect("self-check figures");
    assert!(report.ok > 0, "{report:?}");
    assert_eq!(generator.limit, Some(GeneratorLimit::MachineBusy), "{generator:?}");
    assert!(generator.waited_for_cpu.is_some_and(|w| w >= 0.05), "{generator:?}");
    assert!(generator.cpu_utilization.is_some_and(|u| u < 0.9), "{generator:?}");

    let mut run = loadbench::report::RunReport::new(std::time::SystemTime::now());
    run.scenarios.push(report);
    let table = loadbench::report::table::render(&run);
    assert!(table.contains("on_a_busy_machine: warning: machine busy: timers fired "), "{table}");
    assert!(table.contains("another process (or the server, on the same cores) took the CPU"), "{table}");
    assert!(!table.contains("generator busy"), "{table}");
}
