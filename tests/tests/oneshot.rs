//! End-to-end tests of `cargo loadbench url URL …`: the real binary sends one request under load
//! to a `TestServer`, and the tests compare what it reports (table, JSON, exit code) with what
//! the server saw.
//!
//! Some tests time the run (`-d`, `--rate`); every test here takes the same lock so that none of
//! them shares the two CPUs with another.

// A broken test environment (the binary does not build, a file cannot be written) should fail
// loudly.
#![allow(clippy::expect_used)]

use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use cargo_loadbench::{Results, ScenarioResult};
use loadbench::report::{Causes, ErrorCause};
use loadbench_tests::cli::{Output, cargo_loadbench, cargo_loadbench_in, read_report, row};
use loadbench_tests::{Behavior, TestServer, closed_port_url};

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(PoisonError::into_inner)
}

/// `cargo loadbench url ARGS… --json FILE` in the test's directory (inside the loadbench
/// workspace), and the report it wrote.
fn url_json(args: &[&str]) -> (Output, Results) {
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("out.json");
    let mut all = vec!["url"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--json", json.to_str().expect("UTF-8 path")]);
    let out = cargo_loadbench(&all);
    assert!(json.exists(), "no JSON written: {out:#?}");
    let report = read_report(&json);
    (out, report)
}

fn only(report: &Results) -> &ScenarioResult {
    assert_eq!(report.scenarios.len(), 1, "{report:#?}");
    &report.scenarios[0]
}

#[test]
fn sends_exactly_n_requests_with_at_most_c_in_flight() {
    let _serial = serial();
    let server = TestServer::start(Behavior { delay: Duration::from_millis(20), ..Behavior::default() });
    let url = format!("{}/", server.url());
    let pid = std::process::id().to_string();
    let (out, report) = url_json(&[&url, "-n", "500", "-c", "20", "--watch", &format!("tests={pid}")]);

    assert_eq!(out.code, Some(0), "{out:#?}");
    assert_eq!(server.requests(), 500, "requests the server received");
    server.assert_peak(20, "users in flight at the server");
    assert_eq!(server.connections(), 20, "one keep-alive connection per user");
    assert_eq!(row(&out.stdout, "GET /")[1..3], ["500", "0"], "{}", out.stdout);
    // Not --quiet: progress on stderr, as for scenarios.
    assert!(out.stderr.contains("GET /: done (500 iterations, 0 failed"), "{}", out.stderr);

    let s = only(&report);
    assert_eq!(s.name, "GET /");
    assert_eq!((s.iterations, s.ok, s.failed), (500, 500, 0), "{s:#?}");
    assert_eq!(s.http.status.get(&200), Some(&500));
    assert_eq!((s.package.as_deref(), s.bench.as_deref()), (None, None));
    assert_eq!((s.config.concurrency, s.config.count), (20, Some(500)));
    assert_eq!(s.config.target.as_deref(), Some(url.as_str()));
    assert!(s.generator.is_some(), "the generator's self-check ran");
    assert_eq!(s.watched.len(), 1, "--watch sampled the process");
    assert_eq!(s.watched[0].pid.to_string(), pid);
}

#[test]
fn without_n_or_d_it_sends_200_requests_from_50_users() {
    let _serial = serial();
    let server = TestServer::start(Behavior::default());
    let (out, report) = url_json(&[&server.url(), "--quiet"]);
    assert_eq!(out.code, Some(0), "{out:#?}");
    assert_eq!(server.requests(), 200);
    let s = only(&report);
    assert_eq!((s.iterations, s.config.concurrency), (200, 50));
    assert_eq!(out.stderr, "", "--quiet prints nothing on stderr");
}

#[test]
fn a_duration_run_ends_in_time() {
    let _serial = serial();
    let server = TestServer::start(Behavior { delay: Duration::from_millis(10), ..Behavior::default() });
    let started = Instant::now();
    let (out, report) = url_json(&[&server.url(), "-d", "1s", "-c", "5", "--quiet"]);
    let elapsed = started.elapsed();

    assert_eq!(out.code, Some(0), "{out:#?}");
    let s = only(&report);
    assert_eq!((s.config.duration_ms, s.config.count), (Some(1_000), None));
    let measured = Duration::from_micros(s.duration_us);
    assert!(measured >= Duration::from_millis(950) && measured < Duration::from_millis(1_500), "{measured:?}");
    // Room for a loaded machine's process start and JSON write; a run that did not stop at its
    // duration would take far longer.
    assert!(elapsed < Duration::from_secs(20), "the whole command took {elapsed:?}");
    assert_eq!(server.requests(), s.iterations, "the report counts what the server saw");
    // 5 users, 10 ms each: about 500; a generous floor for a busy 2-core machine.
    assert!(s.iterations > 100 && s.failed == 0, "{s:#?}");
}

#[test]
fn a_rate_is_achieved() {
    let _serial = serial();
    let server = TestServer::start(Behavior::default());
    let (out, report) = url_json(&[&server.url(), "--rate", "100/s", "-d", "2s", "-c", "10", "--quiet"]);

    assert_eq!(out.code, Some(0), "{out:#?}");
    let s = only(&report);
    let rate = s.rate.expect("an open-model run reports its rate");
    assert_eq!(rate.requested, 100.0);
    assert!((90.0..=110.0).contains(&rate.achieved), "{rate:?}");
    // 100/s for 2 s: 200 arrivals, each run or dropped.
    assert_eq!(s.iterations + s.dropped, 200, "{s:#?}");
    assert_eq!(server.requests(), s.iterations);
    assert!(s.iterations >= 180, "{s:#?}");
    assert_eq!(s.config.rate, Some(100.0));
}

#[test]
fn method_headers_and_a_file_body_reach_the_server() {
    let _serial = serial();
    let server = TestServer::start(Behavior::default());
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("body.bin");
    // Not UTF-8, and with a NUL: the file is sent byte for byte.
    let body: Vec<u8> = b"{\"name\":\"widget\"}\n\x00\xff\xfe".to_vec();
    std::fs::write(&file, &body).expect("write body");
    let body_arg = format!("@{}", file.display());
    let url = format!("{}/items?x=1", server.url());
    let (out, report) = url_json(&[
        &url,
        "-m",
        "post",
        "-H",
        "X-K: v",
        "-H",
        "content-type:application/octet-stream",
        "--body",
        &body_arg,
        "-n",
        "3",
        "-c",
        "1",
        "--quiet",
    ]);

    assert_eq!(out.code, Some(0), "{out:#?}");
    assert_eq!(only(&report).name, "POST /items?x=1");
    let seen = server.seen();
    assert_eq!(seen.len(), 3, "{seen:#?}");
    for request in &seen {
        assert_eq!((request.method.as_str(), request.path.as_str()), ("POST", "/items?x=1"));
        assert_eq!(request.header("x-k"), Some("v"));
        assert_eq!(request.header("content-type"), Some("application/octet-stream"));
        assert_eq!(request.header("content-length"), Some(body.len().to_string().as_str()));
        assert_eq!(request.body, body);
    }

    // A text body (and a Host header of one's own, which replaces the URL's), and a GET sends
    // no body.
    let server = TestServer::start(Behavior::default());
    let (out, _) = url_json(&[
        &server.url(),
        "-m",
        "PUT",
        "--body",
        "hello",
        "-H",
        "Host: example.test",
        "-n",
        "1",
        "-c",
        "1",
        "--quiet",
    ]);
    assert_eq!(out.code, Some(0), "{out:#?}");
    let (out, _) = url_json(&[&server.url(), "-n", "1", "-c", "1", "--quiet"]);
    assert_eq!(out.code, Some(0), "{out:#?}");
    let seen = server.seen();
    assert_eq!((seen[0].method.as_str(), seen[0].body.as_slice()), ("PUT", &b"hello"[..]));
    let hosts: Vec<&str> = seen[0].headers.iter().filter(|(n, _)| n == "host").map(|(_, v)| v.as_str()).collect();
    assert_eq!(hosts, ["example.test"]);
    assert_eq!((seen[1].method.as_str(), seen[1].body.len()), ("GET", 0));
}

#[test]
fn server_errors_are_failed_requests_and_the_run_still_succeeds() {
    let _serial = serial();
    let server = TestServer::start(Behavior { fail_every: Some(5), ..Behavior::default() });
    let (out, report) = url_json(&[&server.url(), "-n", "100", "-c", "4"]);

    assert_eq!(out.code, Some(0), "failed requests are results, not a failed run: {out:#?}");
    assert_eq!(server.requests(), 100);
    let s = only(&report);
    assert_eq!((s.iterations, s.ok, s.failed, s.errors.status), (100, 80, 20, 20), "{s:#?}");
    assert_eq!((s.http.status.get(&200), s.http.status.get(&500)), (Some(&80), Some(&20)));
    assert_eq!(row(&out.stdout, "GET /")[1..3], ["100", "20"], "{}", out.stdout);
    // The cause, in the JSON and in the table under the row.
    let cause = ErrorCause {
        kind: "status".into(),
        message: "expected a status below 400, got 500 Internal Server Error".into(),
        count: 20,
    };
    assert_eq!(s.causes, Causes { top: vec![cause], others: 0 });
    assert!(
        out.stdout
            .contains("\nGET /: causes: 20 × status: expected a status below 400, got 500 Internal Server Error\n"),
        "{}",
        out.stdout
    );
    assert!(!out.stderr.contains("first status error"), "{}", out.stderr);
}

#[test]
fn an_unreachable_port_counts_connect_errors() {
    let _serial = serial();
    let (out, report) = url_json(&[&closed_port_url(), "-n", "20", "-c", "2", "--quiet"]);
    // Counted by kind, and a run where nothing succeeded fails (20 attempts: under the bound that
    // stops a run where nothing listens).
    assert_eq!(out.code, Some(1), "{out:#?}");
    let s = only(&report);
    assert_eq!((s.iterations, s.failed, s.errors.connect), (20, 20, 20), "{s:#?}");
    assert!(s.setup_error.is_none());
}

#[test]
fn thresholds_gate_the_exit_code() {
    let _serial = serial();
    let server = TestServer::start(Behavior { fail_every: Some(2), ..Behavior::default() });
    let (out, report) = url_json(&[
        &server.url(),
        "-n",
        "50",
        "-c",
        "5",
        "--quiet",
        "--name",
        "home",
        "--threshold",
        "p99<10s",
        "--threshold",
        "home:error_rate<0.01",
    ]);
    assert_eq!(out.code, Some(1), "{out:#?}");
    assert_eq!(out.errors(), ["error: gate failed: threshold home: error_rate < 0.01 (was 0.5)"], "{out:#?}");
    let s = only(&report);
    let outcomes: Vec<bool> = s.thresholds.iter().map(|t| t.passed).collect();
    assert_eq!(outcomes, [true, false]);

    // A threshold naming another scenario is refused before any request.
    let before = server.requests();
    let out = cargo_loadbench(&["url", &server.url(), "--name", "home", "--threshold", "hme:p99<1s"]);
    assert_eq!(out.code, Some(2), "{out:#?}");
    assert_eq!(out.errors(), ["error: --threshold `hme:p99 < 1s` names no selected scenario; selected: home"]);
    assert_eq!(server.requests(), before);
}

#[test]
fn baselines_outside_a_workspace_live_in_target_under_the_current_directory() {
    let _serial = serial();
    let server = TestServer::start(Behavior::default());
    let dir = tempfile::tempdir().expect("tempdir");
    let url = server.url();

    let out =
        cargo_loadbench_in(dir.path(), &["url", &url, "-n", "50", "-c", "5", "--runs", "2", "--save-baseline", "main"]);
    assert_eq!(out.code, Some(0), "{out:#?}");
    assert_eq!(server.requests(), 100, "two runs of 50");
    let saved = dir.path().join("target/loadbench/baselines/main/report.json");
    let baseline = read_report(&saved);
    let s = only(&baseline);
    assert_eq!((s.name.as_str(), s.iterations, s.runs.len()), ("GET /", 100, 2));

    let out = cargo_loadbench_in(
        dir.path(),
        &["url", &url, "-n", "50", "-c", "5", "--baseline", "main", "--json", "new.json"],
    );
    assert_eq!(out.code, Some(0), "{out:#?}");
    let report = read_report(&dir.path().join("new.json"));
    let comparison = only(&report).comparison.as_ref().expect("compared with the baseline");
    assert_eq!(comparison.baseline, "main");
    assert!(out.stdout.contains("baseline `main`"), "{}", out.stdout);

    let out = cargo_loadbench_in(dir.path(), &["url", &url, "--baseline", "nope"]);
    assert_eq!(out.code, Some(2), "{out:#?}");
    assert_eq!(out.errors().len(), 1, "{out:#?}");
    assert!(out.errors()[0].starts_with("error: no baseline named `nope` in target/loadbench/baselines"), "{out:#?}");
    assert_eq!(server.requests(), 150, "a missing baseline costs no request");
}

#[test]
fn bad_input_is_one_line_naming_it_and_exit_2() {
    let _serial = serial();
    let server = TestServer::start(Behavior::default());
    let url = server.url();
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("missing.json");
    let missing_body = format!("@{}", missing.display());
    for (args, names) in [
        (vec!["url", "127.0.0.1:1/"], "`127.0.0.1:1/` is not a valid URL"),
        (vec!["url", "ftp://127.0.0.1/"], "`ftp://127.0.0.1/` is not a valid URL"),
        (vec!["url", "ws://127.0.0.1/"], "the scheme must be http:// or https://"),
        (vec!["url", "http://"], "`http://` is not a valid URL"),
        (vec!["url", &url, "--frobnicate"], "'--frobnicate'"),
        (vec!["url", &url, "-H", "x-k v"], "'--header <NAME: VALUE>': `x-k v` is not a valid header"),
        (vec!["url", &url, "--rate", "2000/d"], "'--rate <RATE>': unknown unit `/d`"),
        (vec!["url", &url, "-d", "30"], "'--duration <TIME>'"),
        (vec!["url", &url, "--timeout", "0s"], "'--timeout <TIME>': expected a time above zero"),
        (vec!["url", &url, "--body", &missing_body], "cannot read body file"),
        (vec!["url"], "<URL>"),
        (vec!["--bench", "api", "url", &url], "--bench"),
        (vec!["url", &url, "--pipeline", "16"], "--pipeline needs --connections"),
        (
            vec!["url", &url, "--connections", "4", "--pipeline", "4", "--http2"],
            "'--pipeline <D>' cannot be used with '--http2'",
        ),
        (vec!["url", &url, "--connections", "0"], "'--connections <N>'"),
    ] {
        let out = cargo_loadbench(&args);
        assert_eq!(out.code, Some(2), "{args:?}: {out:#?}");
        assert_eq!(out.stdout, "", "{args:?}");
        let lines: Vec<&str> = out.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{args:?}: one line: {out:#?}");
        assert!(lines[0].starts_with("error: ") && lines[0].contains(names), "{args:?}: {}", lines[0]);
        if names == "cannot read body file" {
            assert!(lines[0].contains(&missing.display().to_string()), "names the file: {}", lines[0]);
        }
    }
    assert_eq!(server.requests(), 0);
}
