//! `ctx.measure`: any async operation as a named row, beside HTTP requests, counted exactly, its
//! failures by kind with their causes, its latency in the row's histogram; and shards whose
//! measured rows a merge adds up exactly.
//!
//! One run at a time, as in `names_and_checks.rs`.

#![allow(clippy::expect_used)]

use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use loadbench_tests::cli::{cargo_loadbench_in, read_report};
use loadbench_tests::request_row as row;
use loadbench_tests::{Behavior, TestServer};

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// This user's iterations so far, this one included.
fn next(ctx: &mut loadbench::Ctx) -> u32 {
    let n = ctx.user_data::<u32>();
    *n += 1;
    *n
}

/// A refusal of the kind another protocol's client returns.
#[derive(Debug)]
struct Refused(u32);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the queue refused message {}", self.0)
    }
}

impl std::error::Error for Refused {}

/// Per iteration: a named HTTP request, a measured wait, and a measured operation that fails on
/// every user's 4th iteration, which fails the iteration through `?`.
#[loadbench::scenario(concurrency = 4, count = 200, warmup = 8)]
async fn mixed(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    let n = next(ctx);
    ctx.get("/").name("GET /").send().await?.expect_status(200)?;
    ctx.measure("wait", async {
        tokio::time::sleep(Duration::from_millis(1)).await;
        Ok::<_, std::io::Error>(())
    })
    .await?;
    ctx.measure("enqueue", async move { if n.is_multiple_of(4) { Err(Refused(n)) } else { Ok(()) } }).await?;
    Ok(())
}

#[test]
fn measured_operations_are_rows_beside_the_requests_counted_exactly() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let server = TestServer::start(Behavior::default());
    let report = loadbench_tests::run_scenario("mixed", &server.url());

    // 8 warmup iterations and 200 measured ones, each with one request.
    assert_eq!(server.requests(), 208);
    let get = row(&report, "GET /");
    let wait = row(&report, "wait");
    let enqueue = row(&report, "enqueue");
    assert_eq!((get.iterations, get.ok, get.failed), (200, 200, 0), "as many as the server saw, less the warmup");
    assert_eq!((wait.iterations, wait.ok, wait.failed), (200, 200, 0));
    // Each user's 4th, 8th, … iteration fails: about one in four of the 200, whatever share of
    // them (and of the warmup's 8) each user ran.
    let refused = enqueue.failed;
    assert_eq!(enqueue.iterations, 200);
    assert_eq!(enqueue.ok + refused, 200);
    assert!((45..=55).contains(&refused), "about one in four of 200: {refused}");
    assert_eq!(enqueue.errors.custom, refused, "another client's error is `custom`");
    assert_eq!(enqueue.errors.total(), refused);
    let cause = &enqueue.causes.top[0];
    assert_eq!(cause.kind, "custom");
    assert!(cause.message.starts_with("the queue refused message "), "{cause:?}");
    // The row's error failed its iteration, through `?`, under the same kind.
    assert_eq!((report.iterations, report.failed, report.errors.custom), (200, refused, refused));
    // The wait's latency is the wait's: at least its millisecond, in its own histogram.
    let latency = wait.latency_us.as_ref().expect("the wait's latency");
    assert!(latency.p50 >= 1_000.0, "{latency:?}");
    assert!(enqueue.latency_us.as_ref().is_some_and(|l| l.p50 < latency.p50), "{:?}", enqueue.latency_us);
    // The table shows the rows under the scenario.
    let mut run = loadbench::report::RunReport::new(SystemTime::now());
    run.scenarios.push(report.clone());
    let table = loadbench::report::table::render(&run);
    for name in ["GET /", "wait", "enqueue"] {
        assert!(table.lines().any(|l| l.contains(name)), "{name}:\n{table}");
    }
}

/// A measured operation that never completes: the request timeout ends it.
#[loadbench::scenario(concurrency = 2, count = 6, timeout = "100ms")]
async fn stuck(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.measure("never", std::future::pending::<Result<(), std::io::Error>>()).await?;
    Ok(())
}

#[test]
fn an_operation_past_the_timeout_fails_as_timeout_in_bounded_time() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let server = TestServer::start(Behavior::default());
    let begun = std::time::Instant::now();
    let report = loadbench_tests::run_scenario("stuck", &server.url());
    // Three rounds of two users at 100 ms each; a busy machine may add, never this much.
    assert!(begun.elapsed() < Duration::from_secs(20), "{:?}", begun.elapsed());
    let never = row(&report, "never");
    assert_eq!((never.iterations, never.failed, never.errors.timeout), (6, 6, 6));
    assert_eq!((report.iterations, report.failed, report.errors.timeout), (6, 6, 6));
    assert!(never.latency_us.is_none(), "a row's latency is its successes': {:?}", never.latency_us);
}

/// Each user's requests, and a measured operation per request, for the shards below.
#[loadbench::scenario(concurrency = 4, count = 120)]
async fn sharded(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?.expect_status(200)?;
    ctx.measure("local work", async { Ok::<_, std::io::Error>(()) }).await?;
    Ok(())
}

#[test]
fn two_shards_merge_their_measured_rows_exactly() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let server = TestServer::start(Behavior::default());
    let dir = tempfile::tempdir().expect("a directory");
    let now = SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("after 1970").as_secs();
    let at = loadbench::cli::StartAt::parse(&now.to_string()).expect("now");
    let mut files = Vec::new();
    for index in 0..2 {
        let shard = loadbench::cli::Shard::new(index, 2).expect("a shard");
        let report = loadbench::Harness::new()
            .target(server.url())
            .only("sharded")
            .progress(false)
            .shard(shard)
            .start_at(at)
            .run_report()
            .unwrap_or_else(|e| panic!("shard {shard}: {e}"));
        assert_eq!(row(&report.scenarios[0], "local work").iterations, 60, "shard {shard}");
        let file = dir.path().join(format!("shard-{index}.json"));
        loadbench::report::write_json_atomic(&file, &report).expect("the shard's results");
        files.push(file);
    }
    let merged = dir.path().join("merged.json");
    let mut args = vec!["merge"];
    args.extend(files.iter().map(|f| f.to_str().expect("UTF-8 path")));
    args.extend(["--json", merged.to_str().expect("UTF-8 path"), "--quiet"]);
    let out = cargo_loadbench_in(dir.path(), &args);
    assert_eq!(out.code, Some(0), "{out:#?}");
    let results = read_report(&merged);
    let whole = &results.scenarios[0].report;
    assert_eq!(server.requests(), 120);
    let work = row(whole, "local work");
    assert_eq!((work.iterations, work.ok, work.failed), (120, 120, 0), "the shards' rows added");
    let histogram = work.latency_us.as_ref().and_then(|l| l.histogram.as_deref()).expect("a merged histogram");
    let decoded = loadbench::report::histogram::decode(histogram).expect("it decodes");
    assert_eq!(decoded.len(), 120, "every success in the merged histogram");
}

/// A measured operation of at least 5 ms, held to a limit it cannot meet and to one it meets.
#[loadbench::scenario(
    name = "measured_thresholds",
    concurrency = 2,
    count = 10,
    thresholds("slow op": p99 < "1ms", "slow op": failed <= 0)
)]
async fn measured_thresholds(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.measure("slow op", async {
        tokio::time::sleep(Duration::from_millis(5)).await;
        Ok::<_, std::io::Error>(())
    })
    .await?;
    Ok(())
}

#[test]
fn a_threshold_on_a_measured_operation_fails_the_run_when_it_should() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let server = TestServer::start(Behavior::default());
    let report = loadbench_tests::run_scenario("measured_thresholds", &server.url());
    assert_eq!(row(&report, "slow op").iterations, 10);
    let outcomes: Vec<(Option<&str>, String, bool)> =
        report.thresholds.iter().map(|t| (t.row.as_deref(), t.threshold.to_string(), t.passed)).collect();
    assert_eq!(
        outcomes,
        [(Some("slow op"), "p99 < 1ms".to_owned(), false), (Some("slow op"), "failed <= 0".to_owned(), true)],
        "the latency limit missed, the failures one met"
    );
    assert!(loadbench::report::check::any_failed(&report), "a missed threshold fails the run (exit code 1)");
}
