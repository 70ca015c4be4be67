//! One test per fault class: what a misbehaving server does to each request, counted by kind.

use super::*;

#[test]
fn refused_connections_are_connect_errors() {
    let _serial = serial();
    let run = url(&[&closed_port_url(), "-c", "2", "-n", "20", "--timeout", "1s", "--quiet"]);
    assert_eq!(run.out.code, Some(0), "{:#?}", run.out);
    assert_eq!(account(run.scenario(), Some(20)), outcomes(&[("connect", 20)]));
}

#[test]
fn a_reset_on_accept_fails_each_request_on_its_own_connection() {
    let _serial = serial();
    let server = HostileServer::start(Fault::ResetOnAccept);
    let (_, mut got) = fault_run(&server, 20);
    // A reset that reaches the client before its connect completes fails the connect; after it,
    // the exchange. Either way, one failure per request and nothing else.
    let failed = got.remove("connect").unwrap_or(0) + got.remove("io").unwrap_or(0);
    assert_eq!((failed, got), (20, BTreeMap::new()));
    // A fresh connection is never retried: one connection per request.
    assert_eq!(server.connections(), 20);
}

#[test]
fn a_reset_mid_body_is_an_io_error_per_request() {
    let _serial = serial();
    let server = HostileServer::start(Fault::ResetMidBody);
    let (_, got) = fault_run(&server, 20);
    assert_eq!(got, outcomes(&[("io", 20)]));
    assert_eq!(server.requests(), 20);
}

#[test]
fn a_short_body_is_an_io_error_per_request() {
    let _serial = serial();
    let server = HostileServer::start(Fault::ShortBody);
    let (_, got) = fault_run(&server, 20);
    assert_eq!(got, outcomes(&[("io", 20)]));
    assert_eq!(server.requests(), 20);
}

#[test]
fn a_garbage_head_is_a_protocol_error_per_request() {
    let _serial = serial();
    let server = HostileServer::start(Fault::GarbageHead);
    let (_, got) = fault_run(&server, 20);
    assert_eq!(got, outcomes(&[("protocol", 20)]));
    assert_eq!(server.requests(), 20);
}

#[test]
fn an_oversized_head_is_a_protocol_error_per_request() {
    let _serial = serial();
    let server = HostileServer::start(Fault::OversizedHead);
    let (_, got) = fault_run(&server, 20);
    assert_eq!(got, outcomes(&[("protocol", 20)]));
    assert_eq!(server.requests(), 20);
}

#[test]
fn a_5xx_storm_is_status_errors_on_kept_connections() {
    let _serial = serial();
    let server = HostileServer::start(Fault::ServerErrors);
    let (run, got) = fault_run(&server, 20);
    assert_eq!(got, outcomes(&[("status", 20)]));
    assert_eq!(server.requests(), 20);
    assert_eq!(n(run.scenario(), "http.status.500"), 20);
    // A 500 with a well-framed body does not cost the connection.
    assert_eq!(server.connections(), 2);
}

/// Silence, a trickle, endless 1xx, an endless body: each request ends at its timeout (row 3),
/// so `-c 2 -n 4 --timeout 1s` lasts about 2 s, not 26.
#[track_caller]
fn each_request_ends_at_its_timeout(fault: Fault) {
    let server = HostileServer::start(fault);
    let (run, got) = fault_run(&server, 4);
    assert_eq!(got, outcomes(&[("timeout", 4)]), "{fault:?}");
    let measured = Duration::from_micros(n(run.scenario(), "duration_us"));
    // Two rounds of 1 s; what a busy machine adds is well under a second.
    assert!(measured < Duration::from_millis(3_500), "{fault:?}: the run took {measured:?}");
    assert!(run.out.peak_rss_kib < RSS_LIMIT_KIB, "{fault:?}: peak RSS {} KiB", run.out.peak_rss_kib);
}

#[test]
fn silence_ends_at_the_timeout() {
    let _serial = serial();
    each_request_ends_at_its_timeout(Fault::Silence);
}

#[test]
fn a_trickle_ends_at_the_timeout() {
    let _serial = serial();
    each_request_ends_at_its_timeout(Fault::Trickle(Duration::from_millis(1)));
}

#[test]
fn endless_early_hints_end_at_the_timeout() {
    let _serial = serial();
    each_request_ends_at_its_timeout(Fault::EndlessEarlyHints);
}

#[test]
fn an_endless_chunked_body_ends_at_the_timeout() {
    let _serial = serial();
    each_request_ends_at_its_timeout(Fault::EndlessChunked);
}

/// Row 2: `url` discards bodies, so 2 GiB bodies to ten users cost no memory: each request reads
/// and drops what arrives until its timeout (or the body's end).
#[test]
fn huge_bodies_leave_url_mode_under_64_mb() {
    let _serial = serial();
    for fault in [Fault::HugeContentLength, Fault::EndlessChunked] {
        let server = HostileServer::start(fault);
        let run = url(&[&server.url(), "-c", "10", "-n", "10", "--timeout", "1s", "--quiet"]);
        assert_eq!(run.out.code, Some(0), "{fault:?}: {:#?}", run.out);
        assert!(run.out.wall < QUICK, "{fault:?}: took {:?}", run.out.wall);
        let mut got = account(run.scenario(), Some(10));
        // Within 1 s, a whole 2 GiB body is possible only on a fast machine; either way it is
        // read, not kept.
        got.remove("ok");
        got.remove("timeout");
        assert!(got.is_empty(), "{fault:?}: only ok or timeout, got {got:?}");
        assert!(run.out.peak_rss_kib < RSS_LIMIT_KIB, "{fault:?}: peak RSS {} KiB", run.out.peak_rss_kib);
    }
}

// A scenario keeps its bodies, under the default cap (16 MiB).
#[loadbench::scenario(name = "keeps_huge_bodies", concurrency = 2, count = 4, timeout = "5s")]
async fn keeps_bodies(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?;
    Ok(())
}

/// Row 2, in a scenario: a body past the cap is an error of its own kind, counted, and the run
/// goes on.
#[test]
fn a_kept_body_past_the_cap_is_body_too_large() {
    let _serial = serial();
    for fault in [Fault::HugeContentLength, Fault::EndlessChunked] {
        let server = HostileServer::start(fault);
        let started = Instant::now();
        let report = run_scenario("keeps_huge_bodies", &server.url());
        assert!(started.elapsed() < QUICK, "{fault:?}: took {:?}", started.elapsed());
        let report = serde_json::to_value(&report).expect("the report serializes");
        assert_eq!(account(&report, Some(4)), outcomes(&[("body_too_large", 4)]), "{fault:?}");
        assert_eq!(server.requests(), 4, "{fault:?}");
    }
}

/// Kill and restart on the same port mid-run: the gap is connect errors, the run goes on after
/// the restart, and every iteration is accounted for.
#[test]
fn a_server_killed_and_restarted_mid_run() {
    let _serial = serial();
    let dir = tempfile::tempdir().expect("tempdir");
    let mut server = HostileServer::start(Fault::None);
    let mut running =
        start_url(dir.path(), None, &[&server.url(), "-c", "4", "-d", "4s", "--timeout", "1s", "--quiet"]);
    assert!(running.wait_for(QUICK, || server.requests() > 0), "the load started");
    // A second of load, then the crash.
    assert!(!running.wait_for(Duration::from_secs(1), || false), "the run ended early");
    server.kill();
    let before = server.requests();
    std::thread::sleep(Duration::from_secs(1));
    // Read before the restart: the users, retrying their connects, are served as soon as it
    // listens again, before a count read after it.
    let at_restart = server.requests();
    server.restart();
    let run = finish(running, dir.path());

    assert_eq!(run.out.code, Some(0), "{:#?}", run.out);
    assert_eq!(at_restart, before, "nothing is served while the server is down");
    assert!(server.requests() > at_restart, "the run went on after the restart");
    let s = run.scenario();
    let mut got = account(s, None);
    assert!(got.remove("connect").is_some_and(|c| c > 0), "the gap is connect errors: {got:?}");
    // Each user loses at most its one exchange in flight when the server died.
    assert!(got.remove("io").unwrap_or(0) <= 4, "{s:#}");
    // Every success was served; what the server saw beyond them died with it or was cancelled.
    let (ok, cancelled) = (got.remove("ok").unwrap_or(0), got.remove("cancelled").unwrap_or(0));
    assert!(ok <= server.requests() && server.requests() <= ok + 4 + cancelled, "{s:#}");
    assert!(got.is_empty(), "no other outcome: {got:?}");
}
