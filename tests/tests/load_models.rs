//! Load models against real servers on 127.0.0.1. The open model (`rate = …`): the rate asked
//! is the rate applied, every arrival is either run or counted as dropped, and a stalled server
//! shows in the latency (no coordinated omission), where the closed model hides it. Warmups are
//! run but left out of the figures; think times pace users without entering their latency.
//!
//! A test binary of its own, one run at a time: these tests measure time, and another test's
//! load on the two cores of a small machine must not make the generator late.

use std::sync::Mutex;
use std::time::Duration;

use loadbench_tests::timing::{LATE, assert_count, assert_ran_for, assert_rate};
use loadbench_tests::{Behavior, TestServer, run_scenario as run};

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

#[loadbench::scenario(name = "steady_2000", rate = "2000/s", max_concurrency = 50, duration = "5s")]
#[loadbench::scenario(name = "open_stalled", rate = 200, max_concurrency = 20, duration = "3s")]
#[loadbench::scenario(name = "closed_stalled", concurrency = 10, duration = "3s")]
#[loadbench::scenario(name = "open_counted", rate = 1000, max_concurrency = 50, count = 500)]
async fn get_ok(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?.expect_status(200)?;
    Ok(())
}

#[test]
fn an_open_model_applies_the_rate_it_was_asked_for() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let server = TestServer::start(Behavior { delay: Duration::from_millis(1), ..Behavior::default() });
    let report = run("steady_2000", &server.url());

    let rate = report.rate.expect("an open model reports its rate");
    let per_second: Vec<u64> = report.timeline.iter().map(|s| s.requests).collect();
    eprintln!(
        "steady_2000: achieved {:.1}/s, {} iterations, {} dropped, {}µs, per second {per_second:?}",
        rate.achieved, report.iterations, report.dropped, report.duration_us
    );
    assert_eq!(rate.requested, 2_000.0);
    assert_rate(rate.achieved, 2_000.0, "steady_2000");
    assert_eq!(report.config.rate, Some(2_000.0));
    // What the server saw, not what loadbench believes it did.
    assert_eq!(server.requests(), report.iterations);
    assert_count(report.iterations, 10_000, "iterations of 5 s at 2000/s");
    assert_eq!(report.iterations + report.dropped, 10_000, "every arrival is run or dropped");
    assert_ran_for(report.duration_us, Duration::from_secs(5), "steady_2000");

    // Steady from second to second, not bursty: no full second after the first more than 10 %
    // above the rate (arrivals a busy moment made late run in the next second), none 20 % below.
    assert!(per_second.len() >= 5, "{per_second:?}");
    for (second, &n) in per_second.iter().enumerate().take(5).skip(1) {
        assert!((1_600..=2_200).contains(&n), "second {second}: {n} iterations; timeline {per_second:?}");
    }
    assert_eq!(per_second.iter().sum::<u64>(), report.iterations);
    assert!(report.timeline[1].p50_us.is_some_and(|p| p >= 1_000.0), "{:?}", report.timeline[1]);
}

/// A server that freezes for one second 1 s into the run. The open model keeps its schedule, so
/// the iterations due during the freeze are late (timed from their due time) or dropped; the
/// closed model just waits, so its percentiles hardly notice (what wrk2 calls coordinated
/// omission).
#[test]
fn a_stalled_server_shows_in_the_open_model_and_hides_in_the_closed_one() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let stall = Behavior { freeze_at: Some((200, Duration::from_secs(1))), ..Behavior::default() };

    let server = TestServer::start(stall.clone());
    let open = run("open_stalled", &server.url());
    assert_eq!(open.iterations + open.dropped, 600, "3 s at 200/s: every arrival run or dropped");
    assert_eq!(server.requests(), open.iterations);
    assert_eq!(open.failed, 0, "{:?}", open.errors);
    // 20 users fill up within 0.1 s of the freeze, the rest of its 200 arrivals find none free.
    assert!(open.dropped >= 100, "dropped {}", open.dropped);
    let latency = open.latency_us.as_ref().expect("latency");
    eprintln!("open_stalled: {} run, {} dropped, {latency:?}", open.iterations, open.dropped);
    assert!(latency.p99 >= 500_000.0, "open model p99 {}µs hides a 1 s stall", latency.p99);
    assert!(latency.max >= 900_000.0, "{latency:?}");
    let frozen = open.timeline.iter().map(|s| s.dropped).max().unwrap_or(0);
    assert!(frozen >= 100, "the drops are in the second of the freeze: {:?}", open.timeline);

    let server = TestServer::start(stall);
    let closed = run("closed_stalled", &server.url());
    let latency = closed.latency_us.as_ref().expect("latency");
    eprintln!("closed_stalled: {} run, {latency:?}", closed.iterations);
    assert!(latency.max >= 900_000.0, "the closed model did hit the stall: {latency:?}");
    assert!(latency.p99 < 200_000.0, "closed model p99 {}µs: it waited instead of measuring", latency.p99);
    assert_eq!(closed.dropped, 0);
    assert!(closed.rate.is_none());
}

#[test]
fn an_open_model_bounded_by_count_is_exact_under_errors() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let server = TestServer::start(Behavior { fail_every: Some(10), ..Behavior::default() });
    let report = run("open_counted", &server.url());

    assert_eq!(report.iterations + report.dropped, 500);
    assert_eq!(server.requests(), report.iterations);
    assert_eq!(report.errors.status, report.iterations / 10);
    assert_eq!(report.ok + report.failed, report.iterations);
    // 50 users for 1,000/s of instant responses are plenty: none dropped on an idle machine, a
    // few where the process was not scheduled for 50 ms.
    assert!(report.dropped <= 50, "dropped {} of 500", report.dropped);
    // 500 arrivals at 1,000/s take half a second.
    assert_ran_for(report.duration_us, Duration::from_millis(500), "open_counted");
    let rate = report.rate.expect("rate");
    assert_rate(rate.achieved, 1_000.0, "open_counted");
}

// Warmups. The server is slow at first (a cold cache); what the warmup covers must be absent
// from every figure, though the server did answer it.
#[loadbench::scenario(name = "warmup_count", concurrency = 1, count = 100, warmup = 5)]
#[loadbench::scenario(name = "warmup_time", concurrency = 4, duration = "1s", warmup = "300ms")]
#[loadbench::scenario(name = "warmup_open", rate = 1000, max_concurrency = 50, count = 300, warmup = 100)]
async fn warmed(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?.expect_status(200)?;
    Ok(())
}

#[test]
fn a_warmup_count_runs_first_and_is_left_out() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let server = TestServer::start(Behavior {
        slow_first: Some((5, Duration::from_millis(100))),
        fail_every: Some(10),
        ..Behavior::default()
    });
    let report = run("warmup_count", &server.url());

    assert_eq!(server.requests(), 105, "warmup and measured iterations all reached the server");
    assert_eq!(report.warmup_iterations, 5);
    assert_eq!(report.iterations, 100, "`count` counts measured iterations only");
    assert_eq!(report.config.warmup_count, Some(5));
    // Requests 10, 20, …, 100 failed; request 105 is measured too, but not a multiple of 10.
    assert_eq!(report.failed, 10, "{:?}", report.errors);
    let latency = report.latency_us.as_ref().expect("latency");
    assert!(latency.max < 100_000.0, "a 100 ms warmup request leaked into the figures: {latency:?}");
    assert!(report.duration_us < 500_000, "the measured part excludes the 0.5 s warmup: {}µs", report.duration_us);
}

#[test]
fn a_warmup_time_runs_first_and_is_left_out() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let server = TestServer::start(Behavior {
        slow_for: Some((Duration::from_millis(250), Duration::from_millis(200))),
        delay: Duration::from_millis(2),
        ..Behavior::default()
    });
    let report = run("warmup_time", &server.url());

    assert!(report.warmup_iterations > 0);
    assert_eq!(server.requests(), report.iterations + report.warmup_iterations);
    let latency = report.latency_us.as_ref().expect("latency");
    assert!(latency.max < 200_000.0, "a 200 ms warmup request leaked into the figures: {latency:?}");
    assert_ran_for(report.duration_us, Duration::from_secs(1), "warmup_time's measured part");
    assert_eq!(report.config.warmup_ms, Some(300));
    assert_eq!(report.timeline.iter().map(|s| s.requests).sum::<u64>(), report.iterations);
}

#[test]
fn an_open_model_warmup_is_the_first_arrivals() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let server =
        TestServer::start(Behavior { slow_first: Some((20, Duration::from_millis(100))), ..Behavior::default() });
    let report = run("warmup_open", &server.url());

    assert_eq!(report.iterations + report.dropped, 300, "measured arrivals, exactly");
    assert_eq!(server.requests(), report.iterations + report.warmup_iterations);
    assert!(report.warmup_iterations >= 20, "{}", report.warmup_iterations);
    let latency = report.latency_us.as_ref().expect("latency");
    assert!(latency.max < 100_000.0, "a 100 ms warmup request leaked into the figures: {latency:?}");
    assert_ran_for(report.duration_us, Duration::from_millis(300), "warmup_open's measured part");
    let rate = report.rate.expect("rate");
    assert_rate(rate.achieved, 1_000.0, "warmup_open");
}

// Think time: each user pauses between iterations; the pause is in no latency.
#[loadbench::scenario(name = "think_fixed", concurrency = 2, count = 20, think_time = "50ms")]
#[loadbench::scenario(name = "think_range", concurrency = 2, duration = "1s", think_time = "50ms..150ms")]
async fn thinking(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?.expect_status(200)?;
    Ok(())
}

#[test]
fn think_time_paces_users_and_stays_out_of_the_latency() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let server = TestServer::start(Behavior::default());
    let report = run("think_fixed", &server.url());

    assert_eq!(server.requests(), 20);
    assert_eq!(report.iterations, 20);
    // Each user runs 10 iterations with 9 pauses of 50 ms between them.
    assert!(report.duration_us >= 450_000, "ran {}µs", report.duration_us);
    assert!(report.duration_us < 450_000 + LATE.as_micros() as u64, "ran {}µs", report.duration_us);
    let latency = report.latency_us.as_ref().expect("latency");
    assert!(latency.p50 < 50_000.0, "the 50 ms pause is not latency: {latency:?}");
    assert_eq!(report.config.think_time_ms, Some((50, 50)));

    let server = TestServer::start(Behavior::default());
    let report = run("think_range", &server.url());
    // Pauses average 100 ms: about 10 iterations per user in the second, 20 in all.
    assert!((12..=30).contains(&server.requests()), "{} requests", server.requests());
    assert_eq!(server.requests(), report.iterations);
    assert_ran_for(report.duration_us, Duration::from_secs(1), "think_range");
    let latency = report.latency_us.as_ref().expect("latency");
    assert!(latency.p50 < 50_000.0, "the pause of 50 ms or more is not latency: {latency:?}");
}

// Ramps.
#[loadbench::scenario(name = "user_ramp", stages = [("300ms", 20), ("700ms", 20), ("300ms", 0)])]
#[loadbench::scenario(name = "rate_ramp", rate_stages = [("1s", 200), ("1s", 200)], max_concurrency = 50)]
async fn ramped(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?.expect_status(200)?;
    Ok(())
}

#[test]
fn a_user_ramp_reaches_its_target_and_comes_back_down() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let server = TestServer::start(Behavior { delay: Duration::from_millis(20), ..Behavior::default() });
    let report = run("user_ramp", &server.url());
    eprintln!(
        "user_ramp: {} iterations, {}µs, per second {:?}",
        report.iterations,
        report.duration_us,
        report.timeline.iter().map(|s| s.requests).collect::<Vec<_>>()
    );

    server.assert_peak(20, "the plateau's 20 users, in flight at once");
    assert_eq!(report.config.concurrency, 20);
    assert_eq!(server.requests(), report.iterations);
    // Ramps of 0.3 s up and down at half the users on average, 0.7 s at all 20: about 1,000
    // iterations of 20 ms (a user joins as the line passes its number, and ends its iteration
    // when it leaves, so a few more), where 20 users for the whole 1.3 s would run 1,300.
    assert!((600..=1_100).contains(&report.iterations), "{} iterations", report.iterations);
    assert_ran_for(report.duration_us, Duration::from_millis(1_300), "user_ramp");
    assert_eq!(report.config.stages, [(300, 20), (700, 20), (300, 0)]);
}

#[test]
fn a_rate_ramp_schedules_the_arrivals_under_its_line() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let server = TestServer::start(Behavior { delay: Duration::from_millis(1), ..Behavior::default() });
    let report = run("rate_ramp", &server.url());

    // 0 → 200/s over a second (100 arrivals), then 200/s for a second (200).
    assert_eq!(report.iterations + report.dropped, 300);
    assert_eq!(server.requests(), report.iterations);
    let per_second: Vec<u64> = report.timeline.iter().map(|s| s.requests).collect();
    eprintln!(
        "rate_ramp: {} run, {} dropped, per second {per_second:?}, {:?}",
        report.iterations, report.dropped, report.rate
    );
    assert!(per_second.first().is_some_and(|&n| (80..=115).contains(&n)), "{per_second:?}");
    assert!(per_second.get(1).is_some_and(|&n| (170..=220).contains(&n)), "{per_second:?}");
    let rate = report.rate.expect("an open model");
    assert_eq!(rate.requested, 150.0);
    assert_rate(rate.achieved, 150.0, "rate_ramp");
    assert_ran_for(report.duration_us, Duration::from_secs(2), "rate_ramp");
}
