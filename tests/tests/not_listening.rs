//! End-to-end tests of a target where nothing listens: `cargo loadbench url` against a free port
//! on 127.0.0.1 stops after a second or a few hundred refused connections, says so under its
//! row, and accounts for every iteration asked for. The connects the port saw are the JSON's
//! `errors.connect`: nothing else reaches it.

// A broken test environment (the binary does not build, a file cannot be written) should fail
// loudly.
#![allow(clippy::expect_used)]

use std::path::Path;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use cargo_loadbench::{Results, ScenarioResult};
use loadbench::report::units::thousands;
use loadbench_tests::cli::{Output, cargo_loadbench, cargo_loadbench_path, read_report};
use loadbench_tests::closed_port_url;

/// The runs are timed: one at a time, so that none shares the CPUs with another.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The most connects a stopped run may make: a few hundred (the bound, and each user's attempt
/// in flight when it was reached), far from the hundreds of thousands a second of refused
/// connects makes on this machine.
const FEW_HUNDRED: u64 = 1_000;

/// How long a stopped run may take, the binary's start included: it stops after about a second
/// at most, and this leaves room for a busy machine.
const QUICKLY: Duration = Duration::from_secs(5);

/// `cargo loadbench url URL ARGS… --json F -o F.xml` against a free port: what it printed, the
/// results, how long it took and the port's address.
fn refused(args: &[&str], dir: &Path) -> (Output, Results, Duration, String) {
    let url = closed_port_url();
    let address = url.trim_start_matches("http://").to_owned();
    let json = dir.join("out.json");
    let xml = dir.join("out.xml");
    let mut all = vec!["url", url.as_str()];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--json", json.to_str().expect("UTF-8 path"), "-o", xml.to_str().expect("UTF-8 path")]);
    // Built (or found built) before the clock starts: the run is timed, not the build.
    let _ = cargo_loadbench_path();
    let started = Instant::now();
    let out = cargo_loadbench(&all);
    let took = started.elapsed();
    assert!(json.exists(), "no JSON written: {out:#?}");
    assert!(xml.exists(), "no JUnit written: {out:#?}");
    (out, read_report(&json), took, address)
}

fn only(report: &Results) -> &ScenarioResult {
    assert_eq!(report.scenarios.len(), 1, "{report:#?}");
    &report.scenarios[0]
}

/// What every stopped run shows: refused connects only, a few hundred of them, none succeeded,
/// and the line under its row naming the address.
fn assert_stopped(out: &Output, s: &ScenarioResult, address: &str, took: Duration) -> u64 {
    assert!(took < QUICKLY, "took {took:?}: {out:#?}");
    assert_eq!((s.ok, s.cancelled), (0, 0), "{s:#?}");
    assert_eq!((s.failed, s.errors.connect), (s.iterations, s.iterations), "only refused connects: {s:#?}");
    assert!((1..=FEW_HUNDRED).contains(&s.errors.connect), "{} connects: {s:#?}", s.errors.connect);
    let nothing = s.nothing_listening.as_ref().unwrap_or_else(|| panic!("not stopped: {s:#?}"));
    assert_eq!((nothing.address.as_str(), nothing.refused), (address, s.errors.connect), "{s:#?}");
    let hint = format!(
        "GET /: nothing is listening at {address}: is the server started? (stopped after {} refused connections",
        thousands(s.errors.connect)
    );
    assert!(out.stdout.contains(&hint), "{hint}\nnot in:\n{}", out.stdout);
    s.errors.connect
}

#[test]
fn a_run_bounded_by_time_stops_at_once_and_says_why() {
    let _serial = serial();
    let dir = tempfile::tempdir().expect("tempdir");
    let (out, report, took, address) = refused(&["-d", "30s", "-c", "50"], dir.path());
    let s = only(&report);
    let connects = assert_stopped(&out, s, &address, took);
    // A time asked for no iterations in particular: none is "not started", and the run's
    // duration says how soon it ended.
    assert_eq!(s.not_started, 0, "{s:#?}");
    assert!(s.duration_us < 2_000_000, "{s:#?}");
    let line = out.stdout.lines().find(|l| l.contains("nothing is listening")).unwrap_or_default();
    assert!(line.contains(&format!("stopped after {connects} refused connections, ")), "{line}");
    assert!(line.ends_with(" into 30s)"), "{line}");
}

#[test]
fn a_count_is_accounted_for_as_run_or_not_started_whatever_the_model() {
    let _serial = serial();
    let dir = tempfile::tempdir().expect("tempdir");
    let count: u64 = 100_000;
    for model in [
        &["-c", "50"][..],
        // The open model: a rate too low for the few hundred attempts within a second.
        &["--rate", "200", "-c", "50"],
        // Users on shared connections: pipelined HTTP/1.1, and HTTP/2's lanes.
        &["-c", "50", "--connections", "4", "--pipeline", "8"],
        &["-c", "50", "--http2"],
    ] {
        let mut args = vec!["-n", "100000", "--quiet"];
        args.extend_from_slice(model);
        let (out, report, took, address) = refused(&args, dir.path());
        let s = only(&report);
        assert_stopped(&out, s, &address, took);
        assert!(s.not_started > 0, "{model:?}: {s:#?}");
        assert_eq!(s.iterations + s.dropped + s.not_started, count, "{model:?}: {s:#?}");
        let tail = format!("; {} iterations not started)", thousands(s.not_started));
        assert!(out.stdout.contains(&tail), "{model:?}: {tail} not in:\n{}", out.stdout);
    }
}

/// A run that measured nothing fails: nothing listening is the plainest case of it.
#[test]
fn a_run_where_nothing_listens_exits_1() {
    let _serial = serial();
    let dir = tempfile::tempdir().expect("tempdir");
    for load in [&["-d", "30s"][..], &["-n", "100000", "-c", "50"]] {
        let (out, report, took, address) = refused(load, dir.path());
        let s = only(&report);
        assert_stopped(&out, s, &address, took);
        assert_eq!(out.code, Some(1), "{load:?}: {out:#?}");
        assert!(
            out.errors().iter().any(|l| l
                .starts_with(&format!("error: GET /: no iteration succeeded: nothing is listening at {address}: "))),
            "{out:#?}"
        );
        assert_eq!(s.verdict.as_ref().map(|v| v.status), Some(cargo_loadbench::VerdictStatus::Failed), "{s:#?}");
        // Never inconclusive on top: the run stopped, it did not fall short.
        assert!(s.inconclusive.is_empty(), "{s:#?}");
        let junit = std::fs::read_to_string(dir.path().join("out.xml")).expect("JUnit");
        assert!(junit.contains("type=\"no success\""), "{junit}");
        assert!(junit.contains("nothing is listening at "), "the hint reaches JUnit too: {junit}");
    }
}
