//! End-to-end tests of HTTP/1.1 on shared connections (`--connections N`, `--pipeline D`): the
//! real binary against a raw server on 127.0.0.1 that counts connections, requests, responses
//! and, per connection, the peak of requests received and not yet answered.
//!
//! Every test here takes the same lock so that none of them shares the two CPUs with another.

// A broken test environment (the binary does not build, a file cannot be written) should fail
// loudly.
#![allow(clippy::expect_used)]

use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use cargo_loadbench::{Results, ScenarioResult};
use loadbench::report::HttpVersion;
use loadbench_tests::cli::{self, Output};
use loadbench_tests::pipelined::{Pipelined, PipelinedServer};

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(PoisonError::into_inner)
}

/// `cargo loadbench url --quiet ARGS…`, and the one scenario it reported.
fn url_json(args: &[&str]) -> (Output, ScenarioResult) {
    let all: Vec<&str> = ["--quiet"].into_iter().chain(args.iter().copied()).collect();
    let (out, raw) = cli::url_json(&all);
    let mut report: Results = serde_json::from_value(raw).expect("cargo loadbench's results");
    assert_eq!(report.scenarios.len(), 1, "{report:#?}");
    (out, report.scenarios.remove(0))
}

#[test]
fn pipelines_up_to_the_depth_on_exactly_n_connections() {
    let _serial = serial();
    let server = PipelinedServer::start(Pipelined::default());
    let (out, s) = url_json(&[&server.url(), "-c", "64", "--connections", "4", "--pipeline", "8", "-n", "2000"]);

    assert_eq!(out.code, Some(0), "{out:#?}");
    assert_eq!(server.connections(), 4, "connections the server accepted");
    assert_eq!(server.requests(), 2000, "requests the server received");
    let peaks = server.peaks();
    assert!(peaks.iter().all(|&p| p <= 8), "more than 8 requests queued on a connection: {peaks:?}");
    assert!(peaks.iter().any(|&p| p >= 4), "the pipeline never filled: {peaks:?}");
    assert_eq!((s.iterations, s.ok, s.failed), (2000, 2000, 0), "{s:#?}");
    assert_eq!(s.http.connections, 4);
    assert_eq!(s.http.retries, 0);
    assert_eq!(s.http.version, Some(HttpVersion::Http11));
    assert_eq!((s.config.connections, s.config.pipeline), (Some(4), Some(8)));
    let json = serde_json::to_value(&s).expect("JSON");
    assert_eq!(json["http"]["version"], "HTTP/1.1");
}

#[test]
fn without_a_depth_the_users_take_turns_on_each_connection() {
    let _serial = serial();
    let server = PipelinedServer::start(Pipelined::default());
    let (out, s) = url_json(&[&server.url(), "-c", "32", "--connections", "4", "-n", "400"]);

    assert_eq!(out.code, Some(0), "{out:#?}");
    assert_eq!(server.connections(), 4);
    assert_eq!(server.requests(), 400);
    let peaks = server.peaks();
    assert_eq!(peaks, [1, 1, 1, 1], "never more than one request in flight on a connection");
    assert_eq!((s.ok, s.http.connections, s.config.connections, s.config.pipeline), (400, 4, Some(4), None));
}

#[test]
fn idempotent_requests_on_connections_closed_mid_pipeline_are_all_answered() {
    let _serial = serial();
    let server = PipelinedServer::start(Pipelined { close_after: Some(5), ..Pipelined::default() });
    let (out, s) = url_json(&[&server.url(), "-c", "32", "--connections", "4", "--pipeline", "8", "-n", "600"]);

    assert_eq!(out.code, Some(0), "{out:#?}");
    assert_eq!((s.iterations, s.ok, s.failed), (600, 600, 0), "{:#?}", s.causes);
    assert_eq!(server.answered(), 600, "each request answered once");
    assert_eq!(s.http.responses, 600);
    assert_eq!(s.http.connections, server.connections());
    assert!(server.connections() >= 120, "a connection answers 5: {}", server.connections());
    // What the server received beyond its answers was sent again, and counted so.
    assert!(s.http.retries >= server.requests() - 600, "{} retries, {} requests", s.http.retries, server.requests());
    assert!(s.http.retries > 0);
}

#[test]
fn a_post_the_server_did_not_answer_fails_once_and_is_not_sent_again() {
    let _serial = serial();
    let server = PipelinedServer::start(Pipelined { close_after: Some(5), ..Pipelined::default() });
    let (out, s) = url_json(&[
        &server.url(),
        "-m",
        "POST",
        "--body",
        "{}",
        "-c",
        "32",
        "--connections",
        "4",
        "--pipeline",
        "8",
        "-n",
        "600",
    ]);

    assert_eq!(s.iterations, s.ok + s.failed, "{s:#?}");
    assert_eq!(s.iterations, 600);
    assert!(s.failed > 0, "a server closing after 5 responses left none behind: {s:#?}");
    assert_eq!(server.answered(), s.ok, "answered exactly the iterations that succeeded");
    assert_eq!(s.errors.io, s.failed, "{:#?}", s.errors);
    assert!(
        s.causes
            .top
            .iter()
            .all(|c| c.kind == "io" && c.message.contains("POST is not idempotent, so it was not sent again")),
        "{:#?}",
        s.causes
    );
    // None was sent twice: what the server read is at most every iteration once (it may not
    // have read some that failed before it closed).
    assert!(server.requests() <= s.iterations, "{} requests for {} iterations", server.requests(), s.iterations);
    assert!(out.stdout.contains("POST /: causes: "), "{}", out.stdout);
}

#[test]
fn techempowers_plaintext_setup_runs_on_16_connections() {
    let _serial = serial();
    let server = PipelinedServer::start(Pipelined { delay: Duration::from_millis(1), ..Pipelined::default() });
    let (out, s) = url_json(&[&server.url(), "-c", "256", "--connections", "16", "--pipeline", "16", "-n", "8000"]);

    assert_eq!(out.code, Some(0), "{out:#?}");
    assert_eq!(server.connections(), 16);
    assert_eq!(server.requests(), 8000);
    assert!(server.peaks().iter().all(|&p| p <= 16), "{:?}", server.peaks());
    assert_eq!((s.ok, s.http.connections, s.config.pipeline), (8000, 16, Some(16)));
}
