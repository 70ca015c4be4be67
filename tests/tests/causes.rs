//! The causes of failures end to end: the `causes` fixture's scenarios fail with messages of
//! their own against a `TestServer`; the JSON counts each message exactly (scenario, step, named
//! request), the table says them under `--quiet`, `--runs 2` adds them up, a message per
//! iteration stays bounded, and no message is said twice.
//!
//! One run at a time: each is a release build's load on the machine's few CPUs.

// A broken test environment (the fixture does not build, a file cannot be written) should fail
// loudly.
#![allow(clippy::expect_used)]

use std::sync::{Mutex, MutexGuard, PoisonError};

use loadbench::report::{Causes, ErrorCause, LISTED_CAUSES};
use loadbench_tests::cli::{Output, bench_binary_command, fixture_bench_binary, read_report, run_fixture};
use loadbench_tests::{Behavior, TestServer};
use serde_json::Value;

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(PoisonError::into_inner)
}

/// `cargo loadbench --quiet SCENARIO --exact --target URL ARGS… --json FILE` on the fixture: what
/// it printed, and the JSON as written.
fn run(scenario: &str, server: &TestServer, args: &[&str]) -> (Output, Value) {
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("out.json");
    let url = server.url();
    // Scenarios whose every iteration fails on purpose, to count their causes: a chaos test.
    let mut all = vec![
        "--quiet",
        "--allow-failures",
        scenario,
        "--exact",
        "--target",
        &url,
        "--json",
        json.to_str().expect("UTF-8"),
    ];
    all.extend_from_slice(args);
    let out = run_fixture("causes", &all);
    assert!(json.exists(), "no JSON written: {out:#?}");
    // The contract's types read it too.
    let _ = read_report(&json);
    let raw = serde_json::from_str(&std::fs::read_to_string(&json).expect("JSON")).expect("JSON");
    (out, raw)
}

/// The causes at `pointer` in `json` (`/scenarios/0/causes`), which the runtime's types read.
fn causes(json: &Value, pointer: &str) -> Causes {
    let value = json.pointer(pointer).unwrap_or_else(|| panic!("no {pointer} in {json:#}"));
    serde_json::from_value(value.clone()).unwrap_or_else(|e| panic!("{pointer}: {e}: {value:#}"))
}

fn cause(kind: &str, message: &str, count: u64) -> ErrorCause {
    ErrorCause { kind: kind.into(), message: message.into(), count }
}

/// A server answering every fifth request with a 500.
fn failing_every_fifth() -> TestServer {
    TestServer::start(Behavior { fail_every: Some(5), ..Behavior::default() })
}

#[test]
fn a_body_message_is_counted_in_the_json_and_shown_under_quiet() {
    let _serial = serial();
    let server = failing_every_fifth();
    let (out, json) = run("wrong_name", &server, &[]);
    assert_eq!(out.code, Some(0), "failures are results: {out:#?}");
    assert_eq!(server.requests(), 200);
    let s = &json["scenarios"][0];
    assert_eq!((s["failed"].as_u64(), s["errors"]["scenario"].as_u64()), (Some(40), Some(40)), "{s:#}");
    let wrong = cause("scenario", "item had the wrong name", 40);
    assert_eq!(causes(&json, "/scenarios/0/causes"), Causes { top: vec![wrong.clone()], others: 0 });
    assert_eq!(causes(&json, "/scenarios/0/steps/0/causes"), Causes { top: vec![wrong], others: 0 });
    let status = cause("status", "expected a status below 400, got 500 Internal Server Error", 40);
    assert_eq!(causes(&json, "/scenarios/0/requests/0/causes"), Causes { top: vec![status], others: 0 });
    assert_eq!(s["requests"][0]["failed"].as_u64(), Some(40), "{s:#}");

    // The table, on stdout even under --quiet, says them under the failure line.
    for line in [
        "wrong_name: causes: 40 × scenario: item had the wrong name",
        "wrong_name (step check name): causes: 40 × scenario: item had the wrong name",
        "wrong_name (request GET /items/{id}): causes: 40 × status: expected a status below 400, got 500 Internal \
         Server Error",
    ] {
        assert!(out.stdout.lines().any(|l| l == line), "no line {line:?} in\n{}", out.stdout);
    }
    // The old stderr line is gone: the results carry the cause.
    assert!(!out.stderr.contains("first scenario error"), "{}", out.stderr);
}

#[test]
fn runs_add_up_their_causes() {
    let _serial = serial();
    let server = failing_every_fifth();
    let (out, json) = run("wrong_name", &server, &["--runs", "2"]);
    assert_eq!(out.code, Some(0), "{out:#?}");
    assert_eq!(server.requests(), 400, "two runs of 200");
    let report = &json["scenarios"][0];
    assert_eq!(report["runs"].as_array().map(Vec::len), Some(2), "{report:#}");
    assert_eq!(report["failed"].as_u64(), Some(80), "{report:#}");
    let wrong = cause("scenario", "item had the wrong name", 80);
    assert_eq!(causes(&json, "/scenarios/0/causes"), Causes { top: vec![wrong.clone()], others: 0 });
    assert_eq!(causes(&json, "/scenarios/0/steps/0/causes"), Causes { top: vec![wrong], others: 0 });
    let status = cause("status", "expected a status below 400, got 500 Internal Server Error", 80);
    assert_eq!(causes(&json, "/scenarios/0/requests/0/causes"), Causes { top: vec![status], others: 0 });
    assert!(
        out.stdout.lines().any(|l| l == "wrong_name: causes: 80 × scenario: item had the wrong name"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_message_per_iteration_keeps_the_causes_bounded() {
    let _serial = serial();
    let server = TestServer::start(Behavior::default());
    let (out, json) = run("every_message_new", &server, &[]);
    assert_eq!(out.code, Some(0), "{out:#?}");
    assert_eq!(server.requests(), 5_000);
    let s = &json["scenarios"][0];
    assert_eq!((s["failed"].as_u64(), s["errors"]["scenario"].as_u64()), (Some(5_000), Some(5_000)), "{s:#}");
    let causes = causes(&json, "/scenarios/0/causes");
    assert_eq!(causes.top.len(), LISTED_CAUSES, "{causes:?}");
    assert!(causes.top.iter().all(|c| c.count == 1 && c.kind == "scenario"), "{causes:?}");
    assert!(causes.top.iter().all(|c| c.message.ends_with(": item had the wrong name")), "{causes:?}");
    assert_eq!((causes.others, causes.total()), (5_000 - 10, 5_000), "every failure is counted once");
    let more = "… and 4,990 more failures with other messages";
    assert!(out.stdout.lines().any(|l| l.trim_start() == more), "no {more:?} in\n{}", out.stdout);
    let listed = out.stdout.lines().filter(|l| l.contains(" × scenario: user ")).count();
    assert_eq!(listed, LISTED_CAUSES, "{}", out.stdout);
}

#[test]
fn a_converted_error_is_said_once() {
    let _serial = serial();
    let server = TestServer::start(Behavior::default());
    let (out, json) = run("missing_file", &server, &[]);
    assert_eq!(out.code, Some(0), "{out:#?}");
    // "No such file or directory (os error 2)", as this system says it.
    let os = std::fs::read("/nonexistent/loadbench/items.csv").err().map(|e| e.to_string()).expect("no such file");
    assert_eq!(causes(&json, "/scenarios/0/causes"), Causes { top: vec![cause("scenario", &os, 3)], others: 0 });
    let line = format!("missing_file: causes: 3 × scenario: {os}");
    assert!(out.stdout.lines().any(|l| l == line), "no {line:?} in\n{}", out.stdout);
    assert!(!format!("{}{}", out.stdout, out.stderr).contains("scenario error"), "{out:#?}");
}

#[test]
fn a_bench_binary_shows_the_causes_under_quiet() {
    let _serial = serial();
    let server = failing_every_fifth();
    let output = bench_binary_command(&fixture_bench_binary("causes"))
        .args(["--bench", "--quiet", "--target", &server.url(), "wrong_name"])
        .output()
        .expect("run the bench binary");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.lines().any(|l| l == "wrong_name: causes: 40 × scenario: item had the wrong name"), "{stdout}");
    assert!(!stderr.contains("wrong name") && !stderr.contains("first"), "the causes are in the table: {stderr}");
}
