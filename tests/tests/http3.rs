//! HTTP/3 end to end: loadbench's client over QUIC against the counting h3 server of
//! `loadbench_tests::h3server`, whose counts are first held exact against the h3 crates' own
//! client. Every count the server sees (connections, streams, requests) is asserted exactly, as
//! tests/http2.rs does for HTTP/2.

#![allow(clippy::expect_used)]

use std::time::Duration;

use loadbench::http::{ClientOptions, TlsOptions};
use loadbench::report::{HttpVersion, ScenarioReport};
use loadbench_tests::cli::{assert_fixture_refuses, url_json};
use loadbench_tests::h3server::{self, H3Server};
use loadbench_tests::tls::Pki;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_h3_server_counts_connections_streams_and_requests_exactly() {
    let pki = Pki::new();
    let server = H3Server::start(&pki);
    let first = tokio::time::timeout(Duration::from_secs(20), h3server::h3_get(&server, &pki, 5))
        .await
        .expect("five requests on one connection in time");
    let second = tokio::time::timeout(Duration::from_secs(20), h3server::h3_get(&server, &pki, 3))
        .await
        .expect("three requests on another connection in time");
    for response in first.iter().chain(&second) {
        assert_eq!(response.status, 200);
        assert_eq!(response.body, h3server::BODY);
    }
    assert_eq!((first.len(), second.len()), (5, 3));
    assert_eq!(server.connections(), 2, "one QUIC connection per h3_get");
    assert_eq!(server.streams(), 8, "one request stream per request");
    assert_eq!(server.requests(), 8);
    assert_eq!(server.responses(), 8);
    assert_eq!(server.requests_per_connection(), [5, 3]);
}

// `h3_own` over HTTP/3 by `--http3`'s option (`ClientOptions::http3`), as a bench binary applies
// it; `h3_shared` by the attribute.
#[loadbench::scenario(name = "h3_own", concurrency = 20, count = 2_000)]
#[loadbench::scenario(name = "h3_shared", concurrency = 50, count = 3_000, connections = 4, http3 = true)]
#[loadbench::scenario(name = "h3_plain", concurrency = 1, count = 1)]
#[loadbench::scenario(name = "h3_tls", concurrency = 2, count = 10)]
#[loadbench::scenario(name = "h3_mtls", concurrency = 2, count = 10)]
async fn get_ok(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    let response = ctx.get("/").send().await?.expect_status(200)?;
    if response.bytes() != h3server::BODY.as_bytes() {
        return Err(loadbench::Error::msg("not the server's body"));
    }
    Ok(())
}

#[test]
fn each_user_has_its_own_quic_connection_and_every_request_is_counted_once() {
    let pki = Pki::new();
    let server = H3Server::start(&pki);
    let report = h3server::run("h3_own", &server.url(), h3server::client(&pki, true));
    assert_eq!((report.iterations, report.ok, report.failed), (2_000, 2_000, 0), "{:?}", report.causes);
    assert_eq!(report.http.responses, 2_000);
    assert_eq!(report.http.version, Some(HttpVersion::Http3));
    assert!(report.config.http3);
    assert_eq!(report.http.bytes_received, 2_000 * h3server::BODY.len() as u64);
    assert_eq!((report.http.connections, server.connections()), (20, 20), "one connection per user");
    assert_eq!((server.streams(), server.requests(), server.responses()), (2_000, 2_000, 2_000));
    let per_connection = server.requests_per_connection();
    assert_eq!(per_connection.iter().sum::<u64>(), 2_000, "{per_connection:?}");
    // Connect and handshake are one figure under QUIC: no TCP connect, 20 handshakes.
    assert!(report.connect_us.is_none());
    let handshakes = report.tls_handshake_us.as_ref().expect("QUIC handshake times");
    assert!(handshakes.min > 0.0 && handshakes.min <= handshakes.max);
    assert_eq!(report.tls.as_ref().map(|t| t.handshakes), Some(20));
    let quic = report.quic.as_ref().expect("the QUIC part");
    let ttfb = quic.ttfb_us.as_ref().expect("time to first byte");
    let latency = report.latency_us.as_ref().expect("latency");
    assert!(ttfb.min > 0.0 && ttfb.p50 <= latency.max, "{ttfb:?} against {latency:?}");
    assert_eq!(quic.zero_rtt_offered, 0, "no connection was reopened");
}

#[test]
fn users_share_the_connections_asked_for_as_concurrent_streams() {
    let pki = Pki::new();
    let server = H3Server::start(&pki);
    let report = h3server::run("h3_shared", &server.url(), h3server::client(&pki, false));
    assert_eq!((report.iterations, report.ok, report.failed), (3_000, 3_000, 0), "{:?}", report.causes);
    assert_eq!(report.http.version, Some(HttpVersion::Http3));
    assert_eq!((report.http.connections, server.connections()), (4, 4));
    assert_eq!((server.streams(), server.requests(), server.responses()), (3_000, 3_000, 3_000));
    let per_connection = server.requests_per_connection();
    assert_eq!(per_connection.len(), 4);
    assert_eq!(per_connection.iter().sum::<u64>(), 3_000);
}

#[test]
fn http3_on_an_http_target_is_refused_before_any_load() {
    let server = loadbench_tests::TestServer::start(loadbench_tests::Behavior::default());
    let options = ClientOptions { http3: true, ..ClientOptions::default() };
    let refused = loadbench::Harness::new()
        .target(server.url())
        .only("h3_plain")
        .progress(false)
        .client(options)
        .run_report()
        .expect_err("refused");
    assert_eq!(
        refused.to_string(),
        format!(
            "`h3_plain` asks for HTTP/3, which runs over QUIC and TLS: its target must be https://, not {}",
            server.url()
        )
    );
    assert_eq!(server.requests(), 0);
}

/// Runs `h3_tls` against a counting server with `tls` as the client's TLS options.
fn run_tls(tls: TlsOptions) -> (ScenarioReport, H3Server) {
    let pki = Pki::new();
    let server = H3Server::start(&pki);
    let options = ClientOptions { http3: true, tls, ..ClientOptions::default() };
    (h3server::run("h3_tls", &server.url(), options), server)
}

#[test]
fn quic_takes_the_same_tls_options_and_a_refused_certificate_is_a_tls_failure() {
    // The test CA is not in the machine's trust store: every handshake is refused.
    let (refused, server) = run_tls(TlsOptions::default());
    assert_eq!((refused.iterations, refused.failed), (10, 10), "{:?}", refused.causes);
    assert_eq!(refused.errors.tls, 10, "{:?}", refused.causes);
    assert!(refused.causes.top[0].message.contains("TLS handshake with"), "{:?}", refused.causes);
    assert_eq!(refused.tls.as_ref().map(|t| t.unverified), Some(10));
    assert_eq!(server.requests(), 0);
    // `--insecure` skips the check, and says so in the config.
    let (insecure, server) = run_tls(TlsOptions::default().insecure(true));
    assert_eq!((insecure.ok, insecure.failed), (10, 0), "{:?}", insecure.causes);
    assert_eq!(insecure.config.tls.as_ref().map(|t| t.insecure), Some(true));
    assert_eq!((server.connections(), server.requests()), (2, 10));
}

#[test]
fn cargo_loadbench_url_speaks_http3_with_the_flag_and_counts_every_request() {
    let pki = Pki::new();
    let server = H3Server::start(&pki);
    let ca = pki.ca.to_str().expect("UTF-8 path");
    let (out, json) =
        url_json(&[&server.url(), "--http3", "-c", "40", "--connections", "2", "-n", "800", "--cacert", ca]);
    assert_eq!(out.code, Some(0), "{out:#?}");
    let s = &json["scenarios"][0];
    assert_eq!((&s["iterations"], &s["ok"], &s["failed"]), (&json!(800), &json!(800), &json!(0)), "{out:#?}");
    assert_eq!((&s["http"]["version"], &s["config"]["http3"]), (&json!("HTTP/3"), &json!(true)));
    assert_eq!((&s["http"]["connections"], server.connections()), (&json!(2), 2));
    assert_eq!((server.requests(), server.responses()), (800, 800));
    assert!(s["quic"]["ttfb_us"]["p50"].as_f64().is_some_and(|p50| p50 > 0.0), "{:#}", s["quic"]);
    assert!(out.stdout.contains("40 users on 2 connections, HTTP/3 streams"), "{}", out.stdout);
}

#[test]
fn cargo_loadbench_url_refuses_http3_on_an_http_target_before_any_request() {
    let server = loadbench_tests::TestServer::start(loadbench_tests::Behavior::default());
    let out = loadbench_tests::cli::cargo_loadbench(&["url", &server.url(), "--http3", "-n", "10"]);
    assert_eq!(out.code, Some(2), "{out:#?}");
    let errors: Vec<&str> = out.stderr.lines().filter(|l| l.starts_with("error")).collect();
    assert_eq!(errors.len(), 1, "{out:#?}");
    assert!(errors[0].contains("its target must be https://"), "{out:#?}");
    assert_eq!(server.requests(), 0);
}

#[test]
fn a_bench_built_without_http3_refuses_it_before_any_load() {
    let pki = Pki::new();
    let server = H3Server::start(&pki);
    let url = server.url();
    let wanted = "`http3` feature (`features = [\"http3\"]` on its line in Cargo.toml)";
    // The fixtures, like the quick start, build the runtime without `http3`.
    assert_fixture_refuses("causes", &["--quiet", "--http3", "--target", &url], wanted);
    assert_eq!(server.connections(), 0, "refused before any load");
}

#[test]
fn a_client_certificate_goes_over_quic_as_over_tcp() {
    let pki = Pki::new();
    let server =
        H3Server::start_with(&pki, h3server::H3Options { client_auth: true, ..h3server::H3Options::default() });
    let refused = h3server::run("h3_mtls", &server.url(), h3server::client(&pki, true));
    assert_eq!((refused.iterations, refused.failed), (10, 10), "{:?}", refused.causes);
    assert_eq!(refused.errors.tls, 10, "without --cert: {:?}", refused.causes);
    assert_eq!(server.requests(), 0);
    let with_cert = ClientOptions {
        tls: TlsOptions::default().ca_file(&pki.ca).client_cert(&pki.client.cert, &pki.client.key),
        ..h3server::client(&pki, true)
    };
    let accepted = h3server::run("h3_mtls", &server.url(), with_cert);
    assert_eq!((accepted.ok, accepted.failed), (10, 0), "{:?}", accepted.causes);
    assert_eq!(server.requests(), 10);
}
