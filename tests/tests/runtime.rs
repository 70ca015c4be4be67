//! The runtime against real hyper servers on 127.0.0.1: exact counts and concurrency as the
//! server observes them, and every kind of failure counted with the run still completing.

use std::time::Duration;

use loadbench_tests::timing::assert_ran_for;
use loadbench_tests::{Behavior, TestServer, closed_port_url, run_scenario as run};

// The body most tests share: one GET that must answer 200. Each attribute registers it again,
// under its own name and load.
#[loadbench::scenario(name = "exact_count", concurrency = 100, count = 10_000)]
#[loadbench::scenario(name = "server_errors", concurrency = 10, count = 1_000)]
#[loadbench::scenario(name = "refused", concurrency = 4, count = 200)]
#[loadbench::scenario(name = "server_closes", concurrency = 10, count = 1_000)]
#[loadbench::scenario(name = "server_resets", concurrency = 10, count = 1_000)]
#[loadbench::scenario(name = "stalls", concurrency = 1, count = 200, timeout = "200ms")]
#[loadbench::scenario(name = "timed", concurrency = 10, duration = "1s")]
async fn get_ok(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?.expect_status(200)?;
    Ok(())
}

#[test]
fn count_and_concurrency_are_exact_as_the_server_sees_them() {
    let server = TestServer::start(Behavior { delay: Duration::from_millis(1), ..Behavior::default() });
    let report = run("exact_count", &server.url());

    assert_eq!(server.requests(), 10_000, "requests the server received");
    server.assert_peak(100, "most requests in flight at once");
    assert_eq!(report.iterations, 10_000);
    assert_eq!(report.ok, 10_000);
    assert_eq!(report.failed, 0);
    assert_eq!(report.http.responses, 10_000);
    assert_eq!(report.http.status.get(&200), Some(&10_000));
    assert_eq!(report.http.bytes_received, 10_000 * "<p>hello, world!</p>".len() as u64);
    // One keep-alive connection per virtual user, never more.
    assert_eq!(report.http.connections, 100);
    assert_eq!(server.connections(), 100);
    let latency = report.latency_us.as_ref().expect("latency of successful iterations");
    assert!(latency.min >= 1_000.0, "each request waits 1 ms on the server: min {}µs", latency.min);
    assert!(latency.min <= latency.p50 && latency.p50 <= latency.p99 && latency.p99 <= latency.max);
    assert!(report.rps > 0.0);
    assert!(!report.interrupted);
}

#[test]
fn five_hundreds_are_counted_as_status_errors() {
    let server = TestServer::start(Behavior { fail_every: Some(10), ..Behavior::default() });
    let report = run("server_errors", &server.url());

    assert_eq!(server.requests(), 1_000);
    assert_eq!(report.iterations, 1_000);
    assert_eq!(report.errors.status, 100);
    assert_eq!(report.ok, 900);
    assert_eq!(report.failed, 100);
    assert_eq!(report.http.status.get(&500), Some(&100));
    assert_eq!(report.http.status.get(&200), Some(&900));
}

#[test]
fn connection_refused_is_counted_and_the_run_completes() {
    let report = run("refused", &closed_port_url());

    assert_eq!(report.iterations, 200);
    assert_eq!(report.errors.connect, 200);
    assert_eq!(report.ok, 0);
    assert!(report.latency_us.is_none(), "no successful iteration, so no latency");
    assert!(report.setup_error.is_none());
}

#[test]
fn connection_close_from_the_server_means_reconnect_not_error() {
    let server = TestServer::start(Behavior { close_every: Some(5), ..Behavior::default() });
    let report = run("server_closes", &server.url());

    assert_eq!(server.requests(), 1_000);
    assert_eq!(report.ok, 1_000, "errors: {:?}", report.errors);
    // 200 responses closed their connection; each user opened one more after each of those
    // (except after its last request).
    assert!(report.http.connections >= 200, "connections opened: {}", report.http.connections);
    assert_eq!(report.http.connections, server.connections());
}

#[test]
fn connections_dropped_mid_request_are_io_errors() {
    let server = TestServer::start(Behavior { reset_every: Some(10), ..Behavior::default() });
    let report = run("server_resets", &server.url());

    // The server reads each 10th request and drops its connection without a byte of response.
    // On a reused connection that is the keep-alive race a GET is retried once for (the README's
    // rule); on a connection just opened, or for the retry itself, it is an `io` error.
    let retries = report.http.retries;
    eprintln!("server_resets: {:?}, {retries} retries, {} requests seen", report.errors, server.requests());
    assert_eq!(report.iterations, 1_000);
    assert_eq!(server.requests(), 1_000 + retries, "each retry is one more request at the server");
    assert_eq!(report.errors.io + retries, server.requests() / 10, "every drop is retried or an io error");
    assert_eq!(report.ok + report.errors.io, 1_000, "errors: {:?}", report.errors);
    // Which drops meet a reused connection depends on how the users' requests interleave at the
    // server: on one worker thread they go round in step, and a user whose turn is the 10th keeps
    // meeting drops on the connections it has just opened, more so on a busy machine. Some drops
    // always meet a reused one.
    assert!(retries >= 10, "drops on reused connections are retried: {retries} retries");
}

// `stalls` has one user, so the four stalls come one after another, each followed by a reconnect.
#[test]
fn requests_past_the_timeout_are_timeouts() {
    let server = TestServer::start(Behavior { stall_every: Some((50, Duration::from_secs(3))), ..Behavior::default() });
    let report = run("stalls", &server.url());

    assert_eq!(report.iterations, 200);
    assert_eq!(report.errors.timeout, 4, "errors: {:?}", report.errors);
    assert_eq!(report.ok, 196);
    assert_eq!(server.requests(), 200);
    // A timed-out request abandons its connection; the user reconnects for the next one
    // (there is none after the last request, the 200th).
    assert_eq!(report.http.connections, 1 + 3);
    assert_eq!(server.connections(), 4);
    assert!(report.duration_us < 3_000_000, "timeouts cut the stalls short: {}µs", report.duration_us);
}

#[test]
fn a_duration_bound_run_stops_on_time() {
    let server = TestServer::start(Behavior { delay: Duration::from_millis(2), ..Behavior::default() });
    let report = run("timed", &server.url());

    assert!(report.duration_us >= 1_000_000, "ran {}µs", report.duration_us);
    assert_ran_for(report.duration_us, Duration::from_secs(1), "timed");
    assert_eq!(report.iterations, server.requests(), "every started request finished and was counted");
    assert!(report.iterations > 100, "{} iterations", report.iterations);
    assert_eq!(report.config.count, None);
    assert_eq!(report.config.duration_ms, Some(1_000));
}

#[loadbench::scenario(concurrency = 3, count = 30)]
async fn picky(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    let response = ctx.get("/").send().await?.expect_status(200)?;
    if ctx.user() == 0 {
        return Err(loadbench::Error::msg(format!("user 0 rejects {} bytes", response.bytes().len())));
    }
    let _: u32 = response.text()?.parse()?; // the body is HTML, so this fails for every other user
    Ok(())
}

#[test]
fn errors_of_the_scenario_itself_are_scenario_errors() {
    let server = TestServer::start(Behavior::default());
    let report = run("picky", &server.url());

    assert_eq!(report.iterations, 30);
    assert_eq!(report.errors.scenario, 30);
    assert_eq!(report.http.responses, 30);
}

#[loadbench::scenario(concurrency = 1_000_000, count = 1)]
async fn too_many_users(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?;
    Ok(())
}

#[test]
fn a_concurrency_beyond_the_file_limit_is_one_clear_error() {
    let server = TestServer::start(Behavior::default());
    let report = run("too_many_users", &server.url());

    let error = report.setup_error.expect("the run is refused up front");
    assert!(error.contains("concurrency 1000000"), "{error}");
    assert!(error.contains("ulimit -n"), "{error}");
    assert_eq!(report.iterations, 0);
    assert_eq!(server.requests(), 0);
}

#[test]
fn a_malformed_target_is_refused_before_anything_runs() {
    let err = loadbench::Harness::new().target("127.0.0.1:80").only("refused").progress(false).run_report();
    let message = err.expect_err("no scheme").to_string();
    assert!(message.contains("127.0.0.1:80"), "{message}");
}

#[test]
fn a_filter_that_matches_nothing_lists_what_exists() {
    let err = loadbench::Harness::new().target("http://127.0.0.1:1").only("nope").progress(false).run_report();
    let message = err.expect_err("nothing selected").to_string();
    assert!(message.contains("`nope`"), "{message}");
    assert!(message.contains("exact_count"), "{message}");
}

#[loadbench::scenario(concurrency = 2, count = 20)]
async fn panicky(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?.expect_status(200)?;
    if ctx.user() == 0 {
        panic!("user 0 gives up");
    }
    Ok(())
}

#[test]
fn a_panic_fails_its_iteration_and_the_user_goes_on() {
    let server = TestServer::start(Behavior::default());
    let report = run("panicky", &server.url());

    // Every iteration asked for ran: the panicking user was not lost after its first.
    assert_eq!(report.iterations, 20);
    assert_eq!(server.requests(), 20, "requests the server answered");
    assert_eq!(report.ok + report.errors.panic, 20);
    assert!(report.errors.panic >= 1, "{:?}", report.errors);
    assert_eq!(report.failed, report.errors.panic);
}
