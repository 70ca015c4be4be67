//! Every example of the README and docs/benchmarks.md, run as its bench binary at a tenth of its size
//! (`--bench --scale 0.1`, what `LOADBENCH_SCALE=0.1` does): each scenario must have run exactly
//! the iterations its reduced load asks for, every one of them successful, with the responses
//! (and, in the journey, the steps) that its body sends per iteration.
//!
//! One example at a time: each starts its own server, and two at once on a 2-core machine would
//! only slow each other down.

// A broken test environment (an example that does not build) should fail loudly.
#![allow(clippy::expect_used)]

use std::path::Path;
use std::sync::Mutex;

use cargo_loadbench::Results;
use loadbench::report::ScenarioReport;
use loadbench_tests::cli::{read_report, run_example_bench, scenario};

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// The size of each disk example answer (`loadbench_examples::disk::SIZE`; this package does
/// not depend on the examples).
const DISK_ANSWER: u64 = 108 * 1024;

/// Runs example `bench` at scale 0.1 against its own server; it must exit with 0.
fn run_example(bench: &str) -> Results {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("out.json");
    run_example_bench(bench, &["--scale", "0.1"], &json);
    read_report(&json)
}

/// A scenario that ran `concurrency` users, every iteration of which succeeded and sent
/// `requests` requests; returns its iterations.
fn all_succeeded(s: &ScenarioReport, concurrency: u32, requests: u64) -> u64 {
    assert_eq!(s.setup_error, None, "{}", s.name);
    assert_eq!(s.config.scale, Some(0.1), "{}", s.name);
    assert_eq!(s.config.concurrency, concurrency, "{}: users", s.name);
    assert!(s.iterations > 0, "{}: nothing ran", s.name);
    assert_eq!((s.ok, s.failed, s.errors.total()), (s.iterations, 0, 0), "{}: {:?}", s.name, s.errors);
    assert_eq!(s.http.responses, s.iterations * requests, "{}: responses", s.name);
    assert!(s.http.status.keys().all(|code| (200..300).contains(code)), "{}: {:?}", s.name, s.http.status);
    s.iterations
}

/// [`all_succeeded`], for a scenario bounded by a count: it ran exactly `count` iterations.
fn counted(s: &ScenarioReport, concurrency: u32, count: u64, requests: u64) {
    assert_eq!(s.config.count, Some(count), "{}: the count, scaled", s.name);
    assert_eq!(all_succeeded(s, concurrency, requests), count, "{}: iterations", s.name);
}

/// [`all_succeeded`], for a scenario bounded by a time: it ran for `ms` (scaled, at least 100 ms).
fn timed(s: &ScenarioReport, concurrency: u32, ms: u64) {
    assert_eq!(s.config.duration_ms, Some(ms), "{}: the duration, scaled", s.name);
    all_succeeded(s, concurrency, 1);
}

#[test]
fn hello() {
    let report = run_example("hello");
    counted(scenario(&report, "hello"), 100, 10_000, 1);
}

#[test]
fn api() {
    let report = run_example("api");
    counted(scenario(&report, "create_item"), 5, 2_000, 1);
    timed(scenario(&report, "get_item"), 2, 300);
}

#[test]
fn disk() {
    let report = run_example("disk");
    let disk = scenario(&report, "disk_round_trip");
    counted(disk, 20, 200, 1);
    assert_eq!(disk.http.bytes_received, 200 * DISK_ANSWER, "108 KB back each time");
}

#[test]
fn techempower() {
    let report = run_example("techempower");
    for name in ["json", "plaintext", "single query", "multiple queries (20)"] {
        timed(scenario(&report, name), 6, 300);
    }
}

#[test]
fn websocket() {
    let report = run_example("websocket");
    let echoes = scenario(&report, "echoes");
    // No HTTP exchange: each iteration is four WebSocket round trips, each a run of its row.
    counted(echoes, 5, 500, 0);
    let named: Vec<(&str, u64, u64)> = echoes.requests.iter().map(|r| (r.name.as_str(), r.ok, r.failed)).collect();
    assert_eq!(named, [("ws echo", 4 * 500, 0)], "one row for every message echoed");
    let hooks = [&echoes.user_setup, &echoes.user_teardown].map(|h| h.as_ref().map(|h| (h.runs, h.failed)));
    assert_eq!(hooks, [Some((5, 0)); 2], "each user connected once and closed once");
}

#[test]
fn grpc() {
    let report = run_example("grpc");
    let lookup = scenario(&report, "lookup");
    // Unary calls through tonic, not loadbench's HTTP client: no response of its own.
    counted(lookup, 2, 2_000, 0);
    let rows: Vec<(&str, u64, u64)> = lookup.requests.iter().map(|r| (r.name.as_str(), r.ok, r.failed)).collect();
    assert_eq!(rows, [("grpc lookup", 2_000, 0)], "one call per iteration, each a success");
    let checks: Vec<(&str, u64, u64)> = lookup.checks.iter().map(|c| (c.name.as_str(), c.passes, c.fails)).collect();
    assert_eq!(checks, [("the value is the key's", 2_000, 0)]);
    assert!(lookup.warnings.is_empty(), "measured calls are exchanges: {:?}", lookup.warnings);
}

#[test]
fn journey() {
    let report = run_example("journey");
    let (writer, reader) = (scenario(&report, "writer"), scenario(&report, "reader"));
    // Log in, three inserts or queries, log out: five requests per journey.
    counted(writer, 10, 500, 5);
    counted(reader, 15, 750, 5);
    for (s, middle) in [(writer, "insert"), (reader, "query")] {
        let steps: Vec<(&str, u64, u64)> = s.steps.iter().map(|st| (st.name.as_str(), st.ok, st.failed)).collect();
        let n = s.iterations;
        assert_eq!(steps, [("login", n, 0), (middle, 3 * n, 0), ("logout", n, 0)], "{}: iterations × steps", s.name);
        assert_eq!(s.config.group.as_deref(), Some("journey"));
        // The accounts came from the CSV file, the session from the login's cookie: every check
        // passed, every record asked for answered.
        assert_eq!(s.config.feed.as_ref().map(|f| f.records), Some(250), "{}: data/users.csv", s.name);
        let checks: Vec<(&str, u64, u64)> = s.checks.iter().map(|c| (c.name.as_str(), c.passes, c.fails)).collect();
        let logins = [("login answers a token", n, 0), ("login sets the session cookie", n, 0)];
        let answers = if middle == "insert" {
            ("insert answers an id", 3 * n, 0)
        } else {
            ("the record is the one asked for", 3 * n, 0)
        };
        assert_eq!(checks, [logins[0], logins[1], answers], "{}: checks", s.name);
    }
    let named: Vec<(&str, u64, u64)> = reader.requests.iter().map(|r| (r.name.as_str(), r.ok, r.failed)).collect();
    assert_eq!(named, [("GET /records/{id}", 3 * reader.iterations, 0)], "one row for every record queried");
    assert!(reader.thresholds.iter().all(|t| t.passed), "{:?}", reader.thresholds);

    // The application ran as a process of its own, watched while the group ran, and stopped
    // with the bench.
    let [app] = writer.watched.as_slice() else { panic!("one watched process: {:?}", writer.watched) };
    assert_eq!(reader.watched, writer.watched, "one workload, one set of figures");
    assert_eq!(app.name, "app");
    assert_ne!(app.pid, std::process::id());
    assert!(app.note.is_none(), "{app:?}");
    assert!(app.cpu_avg_percent.is_some_and(|cpu| cpu > 0.0), "{app:?}");
    assert!(app.rss_peak_bytes.is_some_and(|rss| rss > 1_000_000), "{app:?}");
    assert!(!Path::new(&format!("/proc/{}", app.pid)).exists(), "the application outlived the bench: {app:?}");
}
