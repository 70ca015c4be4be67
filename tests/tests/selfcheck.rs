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
            assert!(table.contains("starved: inconclusive: generator busy: its worker threads were at "), "{table}");
            assert!(
                table.contains("% CPU (1 thread); these figures may be its own limit, not the server's"),
                "{table}"
            );
        }
        Some(GeneratorLimit::MachineBusy) => {
            assert!(generator.waited_for_cpu.is_some_and(|w| w >= 0.05), "{generator:?}");
            assert!(table.contains("starved: inconclusive: machine busy: timers fired "), "{table}");
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

/// With the server on this machine (127.0.0.1), a run's default is half the CPUs, so that the
/// server keeps cores of its own.
#[test]
fn a_server_on_this_machine_keeps_half_the_cores_by_default() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let server = TestServer::start(Behavior::default());
    let report = loadbench::Harness::new()
        .target(server.url())
        .only("waits_on_the_server")
        .progress(false)
        .run_report()
        .expect("the run");
    let generator = report.scenarios[0].generator.clone().expect("self-check figures");
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    // `LOADBENCH_THREADS` would set it: this test runs without it.
    if std::env::var_os("LOADBENCH_THREADS").is_none() {
        assert_eq!(generator.worker_threads, (cpus / 2).clamp(1, 10), "{cpus} CPUs");
    }
}

/// A megabyte: more than a socket's receive buffer holds, so a response waits for its reader.
fn megabyte() -> &'static str {
    static BODY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    BODY.get_or_init(|| "x".repeat(1 << 20))
}

/// A server that answers after 50 ms with a megabyte, sent as fast as the loopback takes it. The
/// wait keeps the generator's CPU low, and a latency of 50 ms or more needs reads 10 ms late to
/// flag a run: a worker that reads as data comes is nowhere near.
fn large_bodies() -> TestServer {
    TestServer::start(Behavior { delay: Duration::from_millis(50), body: megabyte(), ..Behavior::default() })
}

/// Four users on one thread fetch a megabyte each; user 0's body then blocks the thread for 80 ms
/// (`std::thread::sleep`), while the other users' responses arrive and wait, unread.
#[loadbench::scenario(concurrency = 4, count = 24)]
async fn blocks_while_bodies_arrive(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    let response = ctx.get("/").send().await?.expect_status(200)?;
    assert_eq!(response.bytes().len(), 1 << 20);
    if ctx.user() == 0 {
        std::thread::sleep(Duration::from_millis(80));
    }
    Ok(())
}

/// The same load without the block.
#[loadbench::scenario(concurrency = 4, count = 40)]
async fn reads_bodies_as_they_arrive(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    let response = ctx.get("/").send().await?.expect_status(200)?;
    assert_eq!(response.bytes().len(), 1 << 20);
    Ok(())
}

/// What the table says of a scenario's report.
fn table_of(report: ScenarioReport) -> String {
    let mut run = loadbench::report::RunReport::new(std::time::SystemTime::now());
    run.scenarios.push(report);
    loadbench::report::table::render(&run)
}

/// A short run in which a body blocks the worker while responses arrive: the
/// responses waited in the generator's sockets, and the self-check says so, naming the reads.
#[test]
#[cfg(target_os = "linux")]
fn responses_left_unread_by_a_blocked_worker_are_flagged() {
    let server = large_bodies();
    let report = run("blocks_while_bodies_arrive", &server.url());

    // A short run (user 0 blocks 6 times), in which the timer probe has few samples.
    assert_eq!(report.ok, 24);
    let generator = report.generator.clone().expect("self-check figures");
    assert!(generator.saturated, "{generator:?}");
    assert!(generator.late_reads, "{generator:?}");
    // The block is the generator's own, unless the machine was so busy that it mostly waited.
    match generator.limit {
        Some(GeneratorLimit::GeneratorStalled | GeneratorLimit::GeneratorCpu) => {}
        Some(GeneratorLimit::MachineBusy) => assert!(generator.waited_for_cpu >= Some(0.05), "{generator:?}"),
        other => panic!("a blocked worker is the generator's limit, not {other:?}: {generator:?}"),
    }
    let table = table_of(report);
    assert!(table.contains("blocks_while_bodies_arrive: inconclusive: "), "{table}");
    assert!(table.contains("before it was read"), "{table}");
}

/// The same server and load, nothing blocking: reads keep up with the responses, and nothing is
/// flagged (but what a machine busy enough to make the thread wait for a CPU is entitled to).
#[test]
#[cfg(target_os = "linux")]
fn responses_read_as_they_arrive_are_not_flagged() {
    let server = large_bodies();
    let report = run("reads_bodies_as_they_arrive", &server.url());

    assert_eq!(report.ok, 40);
    let generator = report.generator.clone().expect("self-check figures");
    assert!(generator.read_delay_p99_us.is_some(), "reads were sampled: {generator:?}");
    if generator.waited_for_cpu < Some(0.05) {
        assert!(!generator.late_reads, "{generator:?}");
        assert!(!generator.saturated, "{generator:?}");
        let table = table_of(report);
        assert!(!table.contains("warning") && !table.contains("inconclusive"), "{table}");
    } else {
        assert_ne!(generator.limit, Some(GeneratorLimit::GeneratorStalled), "{generator:?}");
    }
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
    // Its evidence is whichever the busy machine showed first: late timers, or what the server
    // sent waiting to be read.
    assert!(table.contains("on_a_busy_machine: inconclusive: machine busy: "), "{table}");
    assert!(table.contains("another process (or the server, on the same cores) took the CPU"), "{table}");
    assert!(!table.contains("generator busy"), "{table}");
}
