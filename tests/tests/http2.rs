//! HTTP/2 on shared connections, end to end: `cargo loadbench url --http2` against hyper's
//! HTTP/2 server on 127.0.0.1 (`loadbench_tests::h2server`), in clear text with prior knowledge
//! and over TLS by ALPN, checked against what the server saw: connections, requests, the
//! protocol of each, and the peak of streams in progress per connection.

#![allow(clippy::expect_used)]

use std::path::Path;
use std::time::Duration;

use loadbench_tests::cli::Output;
use loadbench_tests::h2server::{H2Options, H2Server};
use loadbench_tests::tls::{Pki, TlsOptions, TlsServer};
use serde_json::{Value, json};

/// One `cargo loadbench url` run and the JSON it wrote.
struct Run {
    out: Output,
    raw: Value,
}

impl Run {
    /// The value at `pointer` under the only scenario.
    fn at(&self, pointer: &str) -> &Value {
        self.raw.pointer(&format!("/scenarios/0{pointer}")).unwrap_or(&Value::Null)
    }
}

fn path(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

/// `cargo loadbench url ARGS… --json FILE`, and the report it wrote.
fn url(args: &[&str]) -> Run {
    let (out, raw) = loadbench_tests::cli::url_json(args);
    Run { out, raw }
}

/// Every one of `n` iterations succeeded, over HTTP/2 (`http.version`, `config.http2`), on
/// `connections` connections (the report's count), and the server saw exactly `n` requests,
/// all HTTP/2, on as many connections.
#[track_caller]
fn all_ok_over_h2(run: &Run, server: &H2Server, n: u64, connections: u64) {
    assert_eq!(run.out.code, Some(0), "{:#?}", run.out);
    let counts = (run.at("/iterations"), run.at("/ok"), run.at("/failed"));
    assert_eq!(counts, (&json!(n), &json!(n), &json!(0)), "{:#}\n{}", run.at("/causes"), run.out.stderr);
    assert_eq!(run.at("/http/version"), &json!("HTTP/2"));
    assert_eq!(run.at("/config/http2"), &json!(true));
    assert_eq!(run.at("/http/connections"), &json!(connections), "{:#}", run.at("/http"));
    assert_eq!(server.connections(), connections, "connections the server accepted");
    assert_eq!(server.requests(), n, "requests the server saw");
    assert_eq!(server.versions(), [("HTTP/2.0".to_owned(), n)].into(), "the protocol of each request");
}

/// Handlers take 20 ms, so that the streams of a connection overlap even on a busy machine.
fn overlapping() -> H2Options {
    H2Options { delay: Duration::from_millis(20), ..H2Options::default() }
}

#[test]
fn users_share_the_connections_asked_for_as_concurrent_streams() {
    let server = H2Server::start(overlapping(), None);
    let run = url(&[&server.url(), "--http2", "-c", "100", "--connections", "4", "-n", "2000"]);
    all_ok_over_h2(&run, &server, 2000, 4);
    assert_eq!(run.at("/config/connections"), &json!(4));
    let peaks = server.peak_streams();
    assert_eq!(peaks.len(), 4, "{peaks:?}");
    // 100 users on 4 connections: 25 streams each at most, one per user.
    assert!(peaks.iter().all(|&p| p <= 25), "{peaks:?}");
    assert!(peaks.iter().any(|&p| p >= 23), "the users' streams should overlap: {peaks:?}");
}

#[test]
fn streams_never_exceed_the_server_s_max_concurrent_streams() {
    let server = H2Server::start(H2Options { max_concurrent_streams: Some(10), ..overlapping() }, None);
    let run = url(&[&server.url(), "--http2", "-c", "100", "--connections", "4", "-n", "2000"]);
    all_ok_over_h2(&run, &server, 2000, 4);
    let peaks = server.peak_streams();
    assert!(peaks.iter().all(|&p| p <= 10), "{peaks:?}");
    assert!(peaks.iter().any(|&p| p >= 9), "the limit should be reached: {peaks:?}");
}

#[test]
fn over_tls_alpn_chooses_h2() {
    let pki = Pki::new();
    let alpn = Some(vec!["h2", "http/1.1"]);
    let server = H2Server::start(H2Options { alpn, ..overlapping() }, Some(&pki));
    let run =
        url(&[&server.url(), "--http2", "-c", "100", "--connections", "4", "-n", "2000", "--cacert", path(&pki.ca)]);
    all_ok_over_h2(&run, &server, 2000, 4);
    assert_eq!(run.at("/tls/handshakes"), &json!(4), "{:#}", run.at("/tls"));
    let peaks = server.peak_streams();
    assert!(peaks.iter().all(|&p| p <= 25) && peaks.iter().any(|&p| p >= 23), "{peaks:?}");
}

#[test]
fn over_tls_a_server_without_h2_is_answered_over_http_1_1() {
    let pki = Pki::new();
    let server = TlsServer::start(&pki, TlsOptions::default());
    let run =
        url(&[&server.url(), "--http2", "-c", "20", "--connections", "2", "-n", "400", "--cacert", path(&pki.ca)]);
    assert_eq!(run.out.code, Some(0), "{:#?}", run.out);
    assert_eq!((run.at("/ok"), run.at("/failed")), (&json!(400), &json!(0)), "{:#}", run.at("/causes"));
    assert_eq!(run.at("/http/version"), &json!("HTTP/1.1"));
    assert_eq!((server.requests(), server.alpn_http11()), (400, 2));
}

#[test]
fn without_connections_each_user_has_a_connection_of_its_own() {
    let server = H2Server::start(overlapping(), None);
    let run = url(&[&server.url(), "--http2", "-c", "8", "-n", "400"]);
    all_ok_over_h2(&run, &server, 400, 8);
    assert_eq!(server.peak_streams(), vec![1; 8], "one stream at a time on each user's connection");
}

#[test]
fn prior_knowledge_to_a_server_without_http2_says_so() {
    let server = loadbench_tests::TestServer::start(loadbench_tests::Behavior::default());
    let run = url(&[&server.url(), "--http2", "-c", "2", "-n", "10", "--quiet"]);
    assert_eq!((run.at("/ok"), run.at("/failed")), (&json!(0), &json!(10)), "{:#?}", run.out);
    let causes = run.at("/causes/top");
    assert_eq!(causes[0]["kind"], "io", "{causes:#}");
    let message = causes[0]["message"].as_str().unwrap_or_default();
    assert!(message.contains("does it speak HTTP/2 without TLS?"), "{message}");
    assert!(run.out.stdout.contains("does it speak HTTP/2 without TLS?"), "{}", run.out.stdout);
    assert_eq!(server.requests(), 0, "an HTTP/1.1 server reads no request in HTTP/2's preface");
}

#[test]
fn a_goaway_moves_the_requests_not_yet_processed_to_a_new_connection() {
    let server = H2Server::start(H2Options { goaway_after: Some(50), ..overlapping() }, None);
    let run = url(&[&server.url(), "--http2", "-c", "20", "--connections", "2", "-n", "1000"]);
    assert_eq!(run.out.code, Some(0), "{:#?}", run.out);
    assert_eq!((run.at("/ok"), run.at("/failed")), (&json!(1000), &json!(0)), "{:#}", run.at("/causes"));
    assert_eq!(server.requests(), 1000, "each iteration processed once: {:?}", server.requests_per_connection());
    let connections = server.connections();
    assert_eq!(run.at("/http/connections"), &json!(connections));
    // Each connection answers at least its 50 requests before its GOAWAY, except the last of
    // each lane.
    assert!((1000 / 60..=1000 / 50 + 2).contains(&connections), "{:?}", server.requests_per_connection());
    // hyper's graceful shutdown first says GOAWAY with the highest stream id: every stream
    // opened before it is processed, and the client opens no stream after it, so nothing needs
    // sending again here. Streams above a GOAWAY's last id are sent again: the HTTP/2 client's
    // own tests (loadbench-runtime/src/http/wire/shared/h2/tests.rs) have a server that refuses one.
    assert_eq!(run.at("/http/version"), &json!("HTTP/2"));
}

#[test]
fn a_reset_stream_fails_its_iteration_as_stream_reset() {
    let server = H2Server::start(H2Options { reset_every: Some(10), ..overlapping() }, None);
    let run = url(&[&server.url(), "--http2", "-c", "20", "--connections", "2", "-n", "500"]);
    assert_eq!(run.out.code, Some(0), "{:#?}", run.out);
    assert_eq!(server.resets(), 50);
    assert_eq!((run.at("/ok"), run.at("/failed")), (&json!(450), &json!(50)), "{:#}", run.at("/causes"));
    assert_eq!(run.at("/errors/stream_reset"), &json!(50), "{:#}", run.at("/errors"));
    assert_eq!(run.at("/causes/top/0/kind"), &json!("stream_reset"), "{:#}", run.at("/causes"));
    assert_eq!(run.at("/causes/top/0/message"), &json!("the server reset the stream: INTERNAL_ERROR"));
    assert_eq!(server.requests(), 500, "a reset stream is not sent again");
    assert_eq!(server.connections(), 2, "a reset stream leaves its connection open");
}

#[test]
fn redirects_are_followed_over_http2_to_the_location_asked() {
    let server = H2Server::start(H2Options::default(), None);
    let target = format!("{}chain/3", server.url());
    let args = [&target, "--http2", "-c", "4", "--connections", "1", "-n", "8", "--follow-redirects", "5"];
    let run = url(&args);
    assert_eq!(run.out.code, Some(0), "{:#?}", run.out);
    assert_eq!((run.at("/ok"), run.at("/failed")), (&json!(8), &json!(0)), "{:#}", run.at("/causes"));
    assert_eq!(run.at("/http/redirects"), &json!(24), "{:#}", run.at("/http"));
    let hops = ["GET /chain/3", "GET /chain/2", "GET /chain/1", "GET /chain/0"].map(|hop| (hop.to_owned(), 8));
    assert_eq!(server.paths(), hops.into(), "each hop asked for where its redirect pointed");
    assert_eq!(server.versions(), [("HTTP/2.0".to_owned(), 32)].into());
}
