//! HTTP/3 against a server that misbehaves (`loadbench_tests::h3server::H3Options`): a server
//! that stops answering, lets QUIC's idle timeout pass, resets or refuses streams, closes the
//! connection with an application error mid-stream, sends a body past the limit, refuses 0-RTT
//! early data or is gone when a ticket's early data arrives; and against a
//! hostile one (`loadbench_tests::hostile_h3`) that announces endless frames. Each is counted by
//! kind, every iteration accounted for, in bounded time and memory.

#![allow(clippy::expect_used)]

use std::time::{Duration, Instant};

use loadbench::report::ScenarioReport;
use loadbench_tests::h3server::{self, H3Options, H3Server};
use loadbench_tests::hostile_h3::{H3Fault, HostileH3};
use loadbench_tests::tls::Pki;

#[loadbench::scenario(name = "h3_stalls", concurrency = 4, count = 40, timeout = "300ms")]
#[loadbench::scenario(name = "h3_idle", concurrency = 2, count = 10, timeout = "10s")]
#[loadbench::scenario(name = "h3_resets", concurrency = 4, count = 100)]
#[loadbench::scenario(name = "h3_rejects", concurrency = 4, count = 100)]
#[loadbench::scenario(name = "h3_closes", concurrency = 1, count = 12)]
#[loadbench::scenario(name = "h3_large", concurrency = 2, count = 4, max_body = 1_048_576)]
#[loadbench::scenario(name = "h3_early", concurrency = 1, count = 10)]
#[loadbench::scenario(name = "h3_hostile", concurrency = 2, count = 4, timeout = "10s")]
#[loadbench::scenario(name = "h3_gone", concurrency = 1, count = 6, timeout = "300ms")]
#[loadbench::scenario(name = "h3_silent", concurrency = 2, count = 4, timeout = "300ms")]
async fn get_ok(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?.expect_status(200)?;
    Ok(())
}

/// Each user a quarter of the timeout after the one before, so that users sharing a connection
/// reach their deadlines on it one after the other.
#[loadbench::scenario(name = "h3_gone_shared", concurrency = 4, connections = 1, count = 12, timeout = "300ms")]
async fn staggered(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    tokio::time::sleep(Duration::from_millis(75 * u64::from(ctx.user() % 4))).await;
    ctx.get("/").send().await?.expect_status(200)?;
    Ok(())
}

/// Runs scenario `name` over HTTP/3 against a server with `options`, trusting the test CA;
/// the run must end within `within`.
fn run_h3(name: &str, options: H3Options, within: Duration) -> (ScenarioReport, H3Server) {
    let pki = Pki::new();
    let server = H3Server::start_with(&pki, options);
    let started = Instant::now();
    let report = h3server::run(name, &server.url(), h3server::client(&pki, true));
    assert!(started.elapsed() < within, "{name} took {:?}", started.elapsed());
    (report, server)
}

#[test]
fn a_server_that_stops_answering_times_requests_out() {
    let options = H3Options { stall_after: Some(20), ..H3Options::default() };
    let (report, server) = run_h3("h3_stalls", options, Duration::from_secs(30));
    assert_eq!((report.iterations, report.ok), (40, 20), "{:?}", report.causes);
    assert_eq!(report.errors.timeout, 20, "{:?}", report.errors);
    assert_eq!(server.requests(), 40, "every request reached the server");
}

#[test]
fn quic_s_idle_timeout_is_a_kind_of_its_own() {
    let options =
        H3Options { stall_after: Some(4), idle_timeout: Some(Duration::from_millis(300)), ..H3Options::default() };
    let (report, server) = run_h3("h3_idle", options, Duration::from_secs(30));
    assert_eq!((report.iterations, report.ok, report.failed), (10, 4, 6), "{:?}", report.causes);
    assert_eq!(report.errors.quic_idle_timeout, 6, "{:?}", report.causes);
    // Each idle connection is replaced: the server saw every one the client opened.
    assert_eq!(report.http.connections, server.connections());
    assert_eq!(server.requests(), 10);
}

#[test]
fn a_reset_stream_fails_its_request_only() {
    let options = H3Options { reset_every: Some(10), ..H3Options::default() };
    let (report, server) = run_h3("h3_resets", options, Duration::from_secs(30));
    assert_eq!((report.iterations, report.ok, report.failed), (100, 90, 10), "{:?}", report.causes);
    assert_eq!(report.errors.stream_reset, 10);
    assert_eq!((server.requests(), server.responses()), (100, 90));
    assert_eq!(report.http.connections, 4, "a reset stream leaves its connection open");
}

#[test]
fn a_request_refused_unprocessed_is_sent_again() {
    let options = H3Options { reject_every: Some(10), ..H3Options::default() };
    let (report, server) = run_h3("h3_rejects", options, Duration::from_secs(30));
    assert_eq!((report.iterations, report.ok, report.failed), (100, 100, 0), "{:?}", report.causes);
    // The 10th, 20th, … request the server saw was refused and sent again: 100 answered of
    // 100 + 11 received (the resends shift the count, so the 110th is refused too).
    assert_eq!(server.responses(), 100);
    assert_eq!(server.requests(), 100 + report.http.retries);
    assert!(report.http.retries >= 10, "{}", report.http.retries);
}

#[test]
fn an_application_close_mid_stream_is_a_kind_of_its_own() {
    // H3_INTERNAL_ERROR after five requests on each connection.
    let options = H3Options { close_after: Some((5, 0x102)), ..H3Options::default() };
    let (report, server) = run_h3("h3_closes", options, Duration::from_secs(30));
    assert_eq!((report.iterations, report.ok, report.failed), (12, 10, 2), "{:?}", report.causes);
    assert_eq!(report.errors.quic_application_close, 2, "{:?}", report.causes);
    let cause = &report.causes.top[0];
    assert!(cause.message.contains("H3_INTERNAL_ERROR"), "{cause:?}");
    assert_eq!((report.http.connections, server.connections()), (2, 2));
    assert_eq!(server.requests_per_connection(), [6, 6]);
}

#[test]
fn a_body_past_the_limit_fails_without_being_kept() {
    let options = H3Options { body_size: Some(64 << 20), ..H3Options::default() };
    let (report, _server) = run_h3("h3_large", options, Duration::from_secs(30));
    assert_eq!((report.iterations, report.failed), (4, 4), "{:?}", report.causes);
    // Stopping a stream mid-read once panicked inside h3-quinn: each was a `panic`.
    assert_eq!((report.errors.body_too_large, report.errors.panic), (4, 0), "{:?}", report.errors);
}

#[test]
fn a_reconnect_sends_its_first_request_as_0_rtt_and_counts_it_apart() {
    // Closed with H3_NO_ERROR after three requests: each reconnect resumes with a ticket.
    let options = H3Options { zero_rtt: true, close_after: Some((3, 0x100)), ..H3Options::default() };
    let (report, server) = run_h3("h3_early", options, Duration::from_secs(30));
    // 3 answered, the 4th's arrival closes: on three connections, 3 + 3 + 2 answered.
    assert_eq!((report.iterations, report.ok, report.failed), (10, 8, 2), "{:?}", report.causes);
    assert_eq!(report.errors.io, 2, "a close with H3_NO_ERROR mid-request is an I/O failure");
    assert_eq!((report.http.connections, server.connections()), (3, 3));
    let quic = report.quic.as_ref().expect("the QUIC part");
    assert_eq!((quic.zero_rtt_offered, quic.zero_rtt_accepted), (2, 2), "{quic:?}");
    assert!(quic.zero_rtt_us.is_some());
    // Three handshakes, the two on tickets resumed; only the first is a 1-RTT handshake's time.
    let tls = report.tls.as_ref().expect("the TLS part");
    assert_eq!((tls.handshakes, tls.resumed), (3, 2), "{tls:?}");
    let one_rtt = report.tls_handshake_us.as_ref().expect("the first connection's handshake");
    assert!(one_rtt.stdev == 0.0, "one 1-RTT handshake, no spread: {one_rtt:?}");
}

#[test]
fn early_data_the_server_refuses_is_sent_again_and_counted_refused() {
    // Tickets allow early data, and the server honours none: each reconnect's first request
    // goes out as 0-RTT, is refused unprocessed, and must be sent again after the handshake.
    let options =
        H3Options { zero_rtt: true, refuse_early_data: true, close_after: Some((3, 0x100)), ..H3Options::default() };
    let (report, server) = run_h3("h3_early", options, Duration::from_secs(30));
    assert_eq!((report.iterations, report.ok, report.failed), (10, 8, 2), "{:?}", report.causes);
    assert_eq!(report.errors.io, 2, "only the two closes fail: {:?}", report.errors);
    assert_eq!((report.http.connections, server.connections()), (3, 3));
    assert_eq!(server.requests_per_connection(), [4, 4, 2], "3 answered and a 4th that closes, twice; then 2");
    let quic = report.quic.as_ref().expect("the QUIC part");
    assert_eq!((quic.zero_rtt_offered, quic.zero_rtt_accepted), (2, 0), "{quic:?}");
    // The refused ones are full handshakes: none resumed.
    let tls = report.tls.as_ref().expect("the TLS part");
    assert_eq!((tls.handshakes, tls.resumed), (3, 0), "{tls:?}");
}

#[test]
fn early_data_to_a_server_gone_is_a_handshake_timeout_and_no_connection() {
    // Three answered, the fourth's arrival closes the connection; then the server is gone, and
    // each reconnect offers its early data on a ticket to a port that answers nothing.
    let options =
        H3Options { zero_rtt: true, close_after: Some((3, 0x100)), silent_after: Some(1), ..H3Options::default() };
    let started = Instant::now();
    let (report, server) = run_h3("h3_gone", options, Duration::from_secs(30));
    assert_eq!((report.iterations, report.ok, report.failed), (6, 3, 3), "{:?}", report.causes);
    assert_eq!((report.errors.io, report.errors.quic_handshake_timeout), (1, 2), "{:?}", report.errors);
    assert_eq!((report.http.connections, server.connections()), (1, 1), "only the first was established");
    let quic = report.quic.as_ref().expect("the QUIC part");
    assert_eq!((quic.zero_rtt_offered, quic.zero_rtt_accepted), (2, 0), "{quic:?}");
    assert!(quic.zero_rtt_us.is_none(), "no answer came: {quic:?}");
    let tls = report.tls.as_ref().expect("the TLS part");
    assert_eq!((tls.handshakes, tls.resumed), (1, 0), "{tls:?}");
    // Two timeouts of 300 ms, one after the other.
    assert!(started.elapsed() < Duration::from_secs(10), "took {:?}", started.elapsed());
}

#[test]
fn users_sharing_a_0_rtt_connection_to_a_server_gone_all_time_out_its_handshake() {
    // Four users on one connection: the first is closed on the fourth request's arrival, then
    // each reconnect's handshake goes unanswered. The first user past its deadline gives the
    // connection up; the others waiting on the same handshake fail by the same kind.
    let options =
        H3Options { zero_rtt: true, close_after: Some((3, 0x100)), silent_after: Some(1), ..H3Options::default() };
    let started = Instant::now();
    let (report, server) = run_h3("h3_gone_shared", options, Duration::from_secs(30));
    let errors = &report.errors;
    assert_eq!(report.iterations, 12);
    assert_eq!(report.ok + errors.io + errors.quic_handshake_timeout, 12, "{:?}", report.causes);
    // The first connection carried at most the four users' requests at its close.
    assert!(report.ok <= 3 && errors.io <= 4 && report.ok + errors.io >= 4, "{:?}", report.causes);
    assert_eq!((errors.timeout, errors.quic_idle_timeout), (0, 0), "{:?}", report.causes);
    // Sent again: at most what the first close caught unsent. A request that went out in early
    // data to the server gone may have been taken, and is not sent twice.
    assert!(report.http.retries <= 3, "{} retries: {:?}", report.http.retries, report.causes);
    assert_eq!((report.http.connections, server.connections()), (1, 1), "only the first was established");
    assert!(started.elapsed() < Duration::from_secs(10), "took {:?}", started.elapsed());
}

/// Runs `h3_hostile` against a server sending what `fault` says; the run must end within 20 s.
fn run_hostile(fault: H3Fault) -> (ScenarioReport, HostileH3) {
    let pki = Pki::new();
    let server = HostileH3::start(&pki, fault);
    let started = Instant::now();
    let report = h3server::run("h3_hostile", &server.url(), h3server::client(&pki, true));
    assert!(started.elapsed() < Duration::from_secs(20), "took {:?}", started.elapsed());
    (report, server)
}

/// What the client may have taken of an endless frame before refusing it: QUIC's flow-control
/// windows (quinn's default stream window is 1.25 MB), never the 64 MiB the server would send.
const TAKEN_AT_MOST: u64 = 8 << 20;

#[test]
fn a_headers_frame_announced_past_the_limit_is_refused_before_it_is_buffered() {
    let (report, server) = run_hostile(H3Fault::EndlessHeaders);
    assert_eq!((report.iterations, report.failed), (4, 4), "{:?}", report.causes);
    assert_eq!(report.errors.protocol, 4, "{:?}", report.causes);
    let cause = &report.causes.top[0];
    assert!(cause.message.contains("HEADERS frame of 1073741824 bytes"), "{cause:?}");
    assert!(server.written() <= TAKEN_AT_MOST, "the client let the server write {} bytes", server.written());
}

#[test]
fn an_endless_frame_on_the_control_stream_ends_the_connection_not_the_client() {
    let (report, server) = run_hostile(H3Fault::EndlessUnknownFrame);
    assert_eq!((report.iterations, report.failed), (4, 4), "{:?}", report.causes);
    assert_eq!(report.errors.protocol, 4, "{:#?}", report.causes);
    assert!(server.written() <= TAKEN_AT_MOST, "the client let the server write {} bytes", server.written());
}

#[test]
fn a_handshake_nobody_answers_is_a_quic_handshake_timeout() {
    // A UDP port that takes every datagram and answers none.
    let silent = std::net::UdpSocket::bind("127.0.0.1:0").expect("bind UDP");
    let port = silent.local_addr().expect("local addr").port();
    let pki = Pki::new();
    let started = Instant::now();
    let report = &h3server::run("h3_silent", &format!("https://localhost:{port}/"), h3server::client(&pki, true));
    assert_eq!((report.iterations, report.failed), (4, 4), "{:?}", report.causes);
    assert_eq!(report.errors.quic_handshake_timeout, 4, "{:?}", report.causes);
    assert_eq!(report.http.connections, 0, "no connection was established");
    // Four timeouts of 300 ms, two users at once: well under the bound, however busy the machine.
    assert!(started.elapsed() < Duration::from_secs(10), "took {:?}", started.elapsed());
}

// Each request uploads 4 MiB, more than QUIC lets the client send before the server reads: a
// server that stops reading stops the upload mid-way.
#[loadbench::scenario(name = "h3_answered_early", concurrency = 2, count = 20)]
async fn upload(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.post("/").body(vec![0u8; 4 << 20]).send().await?.expect_status(200)?;
    Ok(())
}

#[test]
fn a_response_to_a_request_the_server_stopped_reading_is_kept() {
    let options = H3Options { stop_reading: true, ..H3Options::default() };
    let (report, server) = run_h3("h3_answered_early", options, Duration::from_secs(30));
    // The request's end fails (the server stopped reading), and its full answer still counts.
    assert_eq!((report.iterations, report.ok, report.failed), (20, 20, 0), "{:?}", report.causes);
    assert_eq!((server.requests(), server.responses()), (20, 20));
}
