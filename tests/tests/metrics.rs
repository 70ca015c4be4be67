//! End to end: any latency percentile as a threshold and a table column, and runs that measure
//! nothing flagged, fatal with `--fail-on-warning`. Through the real
//! `cargo loadbench`, the fixture crate `fixtures/metrics` and its bench binary run alone, against
//! `TestServer`s on 127.0.0.1.

// A broken test environment (cargo missing, a fixture that does not build) should fail loudly.
#![allow(clippy::expect_used)]

use std::sync::{Mutex, MutexGuard, PoisonError};

use cargo_loadbench::Results;
use loadbench::report::WarningKind;
use loadbench_tests::cli::{
    Output, bench_binary_command, fixture_bench_binary, read_report, row, run_fixture, scenario,
};
use loadbench_tests::{Behavior, TestServer};

/// Serialises the tests of this file: they share the fixture's build, and a too-fast verdict
/// should not depend on a neighbour's load.
fn one_at_a_time() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(PoisonError::into_inner)
}

/// `cargo loadbench --manifest-path fixtures/metrics/Cargo.toml --quiet --target URL --json FILE
/// ARGS…`, and the results it wrote.
fn metrics(target: &TestServer, args: &[&str]) -> (Output, Results) {
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("out.json");
    let url = target.url();
    let mut all = vec!["--quiet", "--target", &url, "--json", json.to_str().expect("UTF-8 path")];
    all.extend_from_slice(args);
    let out = run_fixture("metrics", &all);
    let report = read_report(&json);
    (out, report)
}

/// The bench binary run alone: its exit code, stdout and stderr.
fn alone(args: &[&str]) -> (Option<i32>, String, String) {
    let output = bench_binary_command(&fixture_bench_binary("metrics"))
        .args(args)
        .env_remove(loadbench::cli::PERCENTILES_ENV)
        .output()
        .expect("run the bench binary");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn a_scenario_that_never_sends_is_flagged_and_fatal_only_with_fail_on_warning() {
    let _turn = one_at_a_time();
    let server = TestServer::start(Behavior::default());

    let (out, report) = metrics(&server, &["never_sends", "--exact"]);
    assert_eq!(out.code, Some(0), "a warning alone is not fatal: {out:#?}");
    let s = scenario(&report, "never_sends");
    assert_eq!((s.ok, s.http.responses), (2_000, 0));
    assert_eq!(s.warnings.iter().map(|w| w.kind).collect::<Vec<_>>(), [WarningKind::NoRequests], "{s:#?}");
    assert!(
        out.stdout.contains(
            "\nnever_sends: warning: 2,000 iterations succeeded without a single HTTP exchange (no response, no \
             connection): did the body forget `.send().await`?"
        ),
        "{out:#?}"
    );
    assert!(out.stderr.contains("note: never_sends measured nothing (see the warnings); add --fail-on-warning"));

    let (out, report) = metrics(&server, &["never_sends", "--exact", "--fail-on-warning"]);
    assert_eq!(out.code, Some(i32::from(loadbench::exit_code::GATE_FAILED)), "{out:#?}");
    assert!(out.stderr.contains("error: --fail-on-warning: never_sends measured nothing"), "{out:#?}");
    assert_eq!(scenario(&report, "never_sends").warnings.len(), 1);
    assert_eq!(server.requests(), 0, "nothing was ever sent");

    // The bench binary alone says the same, with the same exit codes.
    let url = server.url();
    let (code, stdout, stderr) = alone(&["--bench", "--quiet", "--target", &url, "never_sends"]);
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("\nnever_sends: warning: 2,000 iterations succeeded without"), "{stdout}");
    let (code, stdout, stderr) = alone(&["--bench", "--quiet", "--fail-on-warning", "--target", &url, "never_sends"]);
    assert_eq!(code, Some(1), "{stdout}\n{stderr}");
    assert!(stderr.contains("error: --fail-on-warning: never_sends measured nothing (see the warnings)"), "{stderr}");
    // A smoke run (one iteration, without --bench) measures nothing by design: not flagged.
    let (code, stdout, stderr) = alone(&["--quiet", "--fail-on-warning", "--target", &url, "never_sends"]);
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(!stdout.contains("warning"), "{stdout}");
}

#[test]
fn a_real_loopback_scenario_is_not_flagged() {
    let _turn = one_at_a_time();
    let server = TestServer::start(Behavior::default());
    let (out, report) = metrics(&server, &["loopback", "--exact", "--fail-on-warning"]);
    assert_eq!(out.code, Some(0), "{out:#?}");
    let s = scenario(&report, "loopback");
    assert_eq!(server.requests(), 300);
    assert!(s.warnings.is_empty(), "{:#?}", s.warnings);
    assert!(!out.stdout.contains("warning"), "{out:#?}");
    let latency = s.latency_us.as_ref().expect("latency");
    // What the too-fast bound (5µs) is set against: a real round trip on this machine.
    eprintln!("loopback round trip, one user: min {}µs, p50 {}µs", latency.min, latency.p50);
    assert!(latency.min > loadbench::report::warnings::TOO_FAST_MEDIAN_US, "{latency:?}");
}

#[test]
fn percentile_thresholds_from_the_attribute_pass_and_fail_measured() {
    let _turn = one_at_a_time();
    let server = TestServer::start(Behavior::default());

    let (out, report) = metrics(&server, &["p95_met", "--exact"]);
    assert_eq!(out.code, Some(0), "{out:#?}");
    let s = scenario(&report, "p95_met");
    let outcomes: Vec<(String, bool, bool)> =
        s.thresholds.iter().map(|o| (o.threshold.to_string(), o.passed, o.actual.is_some())).collect();
    assert_eq!(
        outcomes,
        [
            ("p95 < 10s".to_owned(), true, true),
            ("p75 < 10s".to_owned(), true, true),
            ("p99_99 < 10s".to_owned(), true, true)
        ]
    );
    let latency = s.latency_us.as_ref().expect("latency");
    assert!(latency.p50 <= latency.p95 && latency.p95 <= latency.p99, "{latency:?}");
    assert_eq!(latency.percentiles.keys().collect::<Vec<_>>(), ["p75", "p99_99"], "the ones asked for");

    let (out, report) = metrics(&server, &["p95_missed", "--exact"]);
    assert_eq!(out.code, Some(1), "{out:#?}");
    let outcome = &scenario(&report, "p95_missed").thresholds[0];
    assert!(!outcome.passed && outcome.actual.is_some_and(|p95| p95 > 0.0), "{outcome:?}");
    assert!(out.stderr.contains("p95_missed: p95 < 1ns (was "), "{out:#?}");
}

#[test]
fn a_command_line_percentile_threshold_is_measured_by_the_bench_binary() {
    let _turn = one_at_a_time();
    let server = TestServer::start(Behavior::default());
    let (out, report) = metrics(&server, &["loopback", "--exact", "--threshold", "p75 < 1h"]);
    assert_eq!(out.code, Some(0), "{out:#?}");
    let s = scenario(&report, "loopback");
    let outcome = &s.thresholds[0];
    assert_eq!(outcome.threshold.to_string(), "p75 < 1h");
    assert!(outcome.passed, "{outcome:?}");
    let p75 = s.latency_us.as_ref().and_then(|l| l.percentiles.get("p75").copied());
    assert_eq!(outcome.actual, p75, "measured, not `not measured`");
    assert!(p75.is_some_and(|p| p > 0.0), "{s:#?}");
    assert!(out.stdout.contains("loopback: thresholds met: p75 < 1h"), "{out:#?}");
}

#[test]
fn percentiles_choose_the_table_columns() {
    let _turn = one_at_a_time();
    let server = TestServer::start(Behavior::default());
    let (out, report) = metrics(&server, &["loopback", "--exact", "--percentiles", "75,99.9"]);
    assert_eq!(out.code, Some(0), "{out:#?}");
    assert_eq!(
        row(&out.stdout, "scenario"),
        ["scenario", "iterations", "failed", "responses", "req/s", "p75", "p99.9", "max", "bytes"]
    );
    let cells = row(&out.stdout, "loopback");
    assert!(cells[5..8].iter().all(|c| c != "-" && c.ends_with('s')), "{cells:?}");
    let latency = scenario(&report, "loopback").latency_us.clone().expect("latency");
    assert!(latency.percentiles.contains_key("p75"), "{latency:?}");

    // The default: p50, p95, p99 and max.
    let (out, _) = metrics(&server, &["loopback", "--exact"]);
    assert_eq!(row(&out.stdout, "scenario")[5..9], ["p50", "p95", "p99", "max"]);

    // The bench binary alone takes the same flag.
    let url = server.url();
    let (code, stdout, stderr) =
        alone(&["--bench", "--quiet", "--percentiles", "90,99.99", "--target", &url, "loopback"]);
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert_eq!(row(&stdout, "scenario")[5..8], ["p90", "p99.99", "max"]);
    let (code, _, stderr) = alone(&["--bench", "--percentiles", "100", "--target", &url, "loopback"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("`100` is not a percentile"), "{stderr}");
}
