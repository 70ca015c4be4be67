//! Distributed runs end to end: `--shard I/N` processes against one counting server add up to
//! exactly the load asked for, started together by `--start-at`, their users numbered across the
//! shards, and their results carrying the histograms a merge adds up.
//!
//! The tests take one lock: the shards' peak in flight is only checked on a machine where no
//! other test of this file is running.

// A broken test environment (the binary does not build, a file cannot be written) should fail
// loudly.
#![allow(clippy::expect_used)]

use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use cargo_loadbench::Results;
use loadbench::cli::{Shard, StartAt};
use loadbench::report::histogram::decode;
use loadbench::report::{LatencyReport, ScenarioReport, ShardReport};
use loadbench_tests::cli::{cargo_loadbench_in, cargo_loadbench_path, read_report, run_fixture};
use loadbench_tests::schema::Schema;
use loadbench_tests::{Behavior, TestServer};

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Seven users numbered as they are across the shards, each request saying whose it is.
#[loadbench::scenario(concurrency = 7, count = 70)]
async fn numbered(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    let path = format!("/?user={}", ctx.user());
    ctx.get(&path).send().await?.expect_status(200)?;
    Ok(())
}

/// The samples in the histogram of `latency`, which must be there and decode.
#[track_caller]
fn samples(latency: Option<&LatencyReport>, what: &str) -> u64 {
    let text = latency.and_then(|l| l.histogram.as_deref()).unwrap_or_else(|| panic!("{what}: no histogram"));
    decode(text).unwrap_or_else(|e| panic!("{what}: {e}")).len()
}

/// The samples of every second of `scenario`'s timeline, each second with successes having a
/// histogram that decodes.
#[track_caller]
fn timeline_samples(scenario: &ScenarioReport) -> u64 {
    scenario
        .timeline
        .iter()
        .filter(|s| s.requests > s.errors)
        .map(|s| {
            let text = s.histogram.as_deref().unwrap_or_else(|| panic!("second {} has no histogram", s.second));
            decode(text).unwrap_or_else(|e| panic!("second {}: {e}", s.second)).len()
        })
        .sum()
}

/// `at` as Unix seconds with milliseconds, as `--start-at` takes it.
fn unix_seconds(at: SystemTime) -> String {
    let since = at.duration_since(UNIX_EPOCH).expect("after 1970");
    format!("{}.{:03}", since.as_secs(), since.subsec_millis())
}

/// `cargo loadbench ARGS… --shard I/3 --start-at AT --json DIR/shard-I.json` for I = 0, 1, 2, at
/// once, outside any workspace (no `cargo metadata` before the start); what each printed, and its
/// results file.
fn run_shards(
    dir: &std::path::Path,
    at: &str,
    args: &[&str],
) -> Vec<(loadbench_tests::cli::Output, std::path::PathBuf)> {
    std::thread::scope(|scope| {
        let runs: Vec<_> = (0..3)
            .map(|i| {
                scope.spawn(move || {
                    let json = dir.join(format!("shard-{i}.json"));
                    let shard = format!("{i}/3");
                    let json_path = json.to_str().expect("UTF-8 path");
                    let distributed = ["--shard", &shard, "--start-at", at, "--json", json_path];
                    (cargo_loadbench_in(dir, &[args, &distributed[..]].concat()), json)
                })
            })
            .collect();
        runs.into_iter().map(|run| run.join().expect("a shard's thread")).collect()
    })
}

#[test]
fn three_url_shards_started_together_send_exactly_the_whole_load() {
    let _serial = serial();
    // Every request takes 10 ms: each shard's users keep the server busy for about a second, so
    // that the three processes overlap and the peak in flight is the whole run's.
    let server = TestServer::start(Behavior { delay: Duration::from_millis(10), ..Behavior::default() });
    let url = format!("{}/", server.url());
    // Built before the clock starts: the start is two seconds after the processes are launched.
    let _ = cargo_loadbench_path();
    let dir = tempfile::tempdir().expect("tempdir");
    let at = SystemTime::now() + Duration::from_secs(2);
    let at_text = unix_seconds(at);
    let outputs = run_shards(dir.path(), &at_text, &["url", &url, "-c", "10", "-n", "1000", "--quiet"]);
    let reports: Vec<Results> = outputs
        .iter()
        .map(|(out, json)| {
            assert_eq!(out.code, Some(0), "{out:#?}");
            read_report(json)
        })
        .collect();

    assert_eq!(server.requests(), 1_000, "requests the server received from the three shards");
    server.assert_peak(10, "users of the three shards in flight at the server");

    let at_millis = StartAt::parse(&at_text).expect("a start time").millis();
    let at_ms = u64::try_from(at.duration_since(UNIX_EPOCH).expect("after 1970").as_millis()).expect("ms");
    let mut shares = Vec::new();
    for (index, report) in reports.iter().enumerate() {
        assert_eq!(report.shard, Some(ShardReport { index: index as u32, count: 3 }));
        let start = report.start.as_ref().unwrap_or_else(|| panic!("shard {index}: no start"));
        assert_eq!(start.at, at_millis);
        assert!(start.late_ms < 500, "shard {index} started {} ms late", start.late_ms);
        assert_eq!(report.scenarios.len(), 1);
        let scenario = &report.scenarios[0];
        // `config` is the whole load, `share` this shard's part of it.
        assert_eq!((scenario.config.concurrency, scenario.config.count), (10, Some(1_000)));
        let share = scenario.share.unwrap_or_else(|| panic!("shard {index}: no share"));
        assert_eq!((scenario.iterations, scenario.ok), (share.count.unwrap_or_default(), scenario.iterations));
        let started = scenario.started_unix_ms.unwrap_or_else(|| panic!("shard {index}: no started_unix_ms"));
        assert!(started.abs_diff(at_ms) < 1_000, "shard {index} started at {started}, the start was {at_ms}");
        // The histograms add up to the shard's successes, the whole and second by second.
        assert_eq!(samples(scenario.latency_us.as_ref(), "latency_us"), scenario.ok);
        assert_eq!(timeline_samples(scenario), scenario.ok);
        assert_eq!(samples(scenario.connect_us.as_ref(), "connect_us"), scenario.http.connections);
        shares.push((share.concurrency, share.count, share.first_user));
    }
    assert_eq!(shares, [(4, Some(334), 0), (3, Some(333), 4), (3, Some(333), 7)]);
    assert_eq!(shares.iter().map(|s| s.0).sum::<u32>(), 10);
    assert_eq!(shares.iter().filter_map(|s| s.1).sum::<u64>(), 1_000);

    // Merged, they are the whole run: one scenario of 1,000 iterations, percentiles from all of
    // them (the merge's own tests check those value for value).
    let files: Vec<&std::path::Path> = outputs.iter().map(|(_, json)| json.as_path()).collect();
    let merged = merge(&files, dir.path());
    assert_eq!(merged.shard, None, "a merged document is whole");
    let whole = &merged.scenarios[0];
    assert_eq!((whole.iterations, whole.ok, whole.failed), (1_000, 1_000, 0));
    assert_eq!(samples(whole.latency_us.as_ref(), "merged latency_us"), 1_000);
    assert_eq!(whole.share, None);
}

/// `cargo loadbench merge FILES… --json DIR/merged.json`, which must succeed; what it wrote.
fn merge(files: &[&std::path::Path], dir: &std::path::Path) -> Results {
    let merged = dir.join("merged.json");
    let mut args = vec!["merge"];
    args.extend(files.iter().map(|f| f.to_str().expect("UTF-8 path")));
    args.extend(["--json", merged.to_str().expect("UTF-8 path"), "--quiet"]);
    let out = cargo_loadbench_in(dir, &args);
    assert_eq!(out.code, Some(0), "{out:#?}");
    read_report(&merged)
}

#[test]
fn three_open_model_shards_merge_into_the_rate_asked() {
    let _serial = serial();
    let server = TestServer::start(Behavior::default());
    let url = format!("{}/", server.url());
    let _ = cargo_loadbench_path();
    let dir = tempfile::tempdir().expect("tempdir");
    let at_text = unix_seconds(SystemTime::now() + Duration::from_secs(2));
    let outputs = run_shards(dir.path(), &at_text, &["url", &url, "--rate", "300", "-d", "3s", "-c", "30", "--quiet"]);
    for (out, _) in &outputs {
        assert_eq!(out.code, Some(0), "{out:#?}");
    }
    let files: Vec<&std::path::Path> = outputs.iter().map(|(_, json)| json.as_path()).collect();
    let merged = merge(&files, dir.path());
    let whole = &merged.scenarios[0];
    let rate = whole.rate.unwrap_or_else(|| panic!("no rate: {whole:#?}"));
    assert_eq!(rate.requested, 300.0, "the shards' rates add up to the one asked");
    assert!((rate.achieved - 300.0).abs() <= 9.0, "achieved {} of 300 per second", rate.achieved);
    // Every arrival is accounted for: run (and seen by the server) or dropped.
    assert_eq!(whole.iterations, server.requests(), "iterations the server saw");
    let arrivals = whole.iterations + whole.dropped;
    assert!((873..=927).contains(&arrivals), "{arrivals} arrivals in 3 s at 300/s");
}

#[test]
fn user_numbers_run_on_across_the_shards() {
    let _serial = serial();
    let server = TestServer::start(Behavior { delay: Duration::from_millis(2), ..Behavior::default() });
    let mut users_by_shard = Vec::new();
    for index in 0..3 {
        let before = server.seen().len();
        let shard = Shard::new(index, 3).expect("a shard");
        let report = loadbench::Harness::new()
            .target(server.url())
            .only("numbered")
            .progress(false)
            .shard(shard)
            .run_report()
            .unwrap_or_else(|e| panic!("shard {shard}: {e}"));
        Schema::RunReport.assert_serializes_valid(&report, "a shard's report");
        assert_eq!(report.shard, Some(ShardReport { index, count: 3 }));
        let scenario = &report.scenarios[0];
        let share = scenario.share.expect("a shard's share");
        // A shard writes its histograms without being asked.
        assert_eq!(samples(scenario.latency_us.as_ref(), "latency_us"), scenario.ok);
        let users: std::collections::BTreeSet<u32> = server.seen()[before..]
            .iter()
            .map(|r| r.path.trim_start_matches("/?user=").parse().expect("a user number"))
            .collect();
        let mine = share.first_user..share.first_user + share.concurrency;
        assert!(users.iter().all(|u| mine.contains(u)), "shard {shard} sent for users {users:?}, its are {mine:?}");
        assert_eq!(server.seen().len() - before, share.count.unwrap_or_default() as usize);
        users_by_shard.push((share.first_user, share.concurrency, users));
    }
    let ranges: Vec<(u32, u32)> = users_by_shard.iter().map(|(first, n, _)| (*first, *n)).collect();
    assert_eq!(ranges, [(0, 3), (3, 2), (5, 2)], "7 users over 3 shards: 3, 2, 2");
    let distinct: std::collections::BTreeSet<u32> = users_by_shard.iter().flat_map(|(_, _, u)| u.clone()).collect();
    assert!(distinct.len() >= 3 && distinct.iter().all(|u| *u < 7), "{distinct:?}");
    assert_eq!(server.requests(), 70, "the shards add up to the count");
}

#[test]
fn a_scenario_with_fewer_users_than_shards_is_refused_before_any_load() {
    let _serial = serial();
    let server = TestServer::start(Behavior::default());
    let err = loadbench::Harness::new()
        .target(server.url())
        .only("numbered")
        .progress(false)
        .shard(Shard::new(7, 8).expect("a shard"))
        .run_report()
        .map(|_| ())
        .expect_err("7 users over 8 shards");
    assert_eq!(
        err.to_string(),
        "scenario `numbered` has 7 virtual users, fewer than the 8 shards of --shard 7/8: each shard needs at least one"
    );

    let dir = tempfile::tempdir().expect("tempdir");
    let out = cargo_loadbench_in(dir.path(), &["url", &server.url(), "-c", "2", "-n", "10", "--shard", "0/3"]);
    assert_eq!(out.code, Some(2), "{out:#?}");
    assert_eq!(
        out.errors(),
        [
            "error: scenario `GET /` has 2 virtual users, fewer than the 3 shards of --shard 0/3: each shard needs at least one"
        ]
    );
    assert_eq!(server.requests(), 0, "refused before any request");
}

#[test]
fn cargo_loadbench_passes_the_flags_to_its_bench_binary_and_keeps_them_in_the_header() {
    let _serial = serial();
    let server = TestServer::start(Behavior::default());
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("out.json");
    // Already a second past: the binary starts at once and says how late.
    let at = unix_seconds(SystemTime::now() - Duration::from_secs(1));
    let args = [
        "wrong_name",
        "--exact",
        "--target",
        &server.url(),
        "--shard",
        "1/3",
        "--start-at",
        &at,
        "--run-id",
        "nightly-7",
    ];
    let out = run_fixture("causes", &[&args[..], &["--json", json.to_str().expect("UTF-8 path")][..]].concat());
    assert_eq!(out.code, Some(0), "{out:#?}");
    let late = out.stderr.lines().find(|l| l.starts_with("note: started ")).unwrap_or_else(|| panic!("{out:#?}"));
    let at_millis = StartAt::parse(&at).expect("a start time").millis();
    assert!(late.ends_with(&format!("s after --start-at ({at_millis})")), "{late}");

    let report = read_report(&json);
    assert_eq!(report.shard, Some(ShardReport { index: 1, count: 3 }));
    assert!(report.start.as_ref().is_some_and(|s| s.late_ms >= 1_000), "{:?}", report.start);
    assert_eq!(report.run_id.as_deref(), Some("nightly-7"), "the run's name, for merge to check");
    let scenario = &report.scenarios[0];
    // 4 users and 200 iterations over 3 shards: 2, 1, 1 users and 67, 67, 66 iterations.
    let share = scenario.share.expect("a shard's share");
    assert_eq!((share.concurrency, share.count, share.first_user), (1, Some(67), 2));
    assert_eq!((scenario.iterations, server.requests()), (67, 67));
    assert!(server.seen().iter().all(|r| r.path == "/items/2"), "only user 2 ran here");
    assert_eq!(samples(scenario.latency_us.as_ref(), "latency_us"), scenario.ok);
    for row in scenario.steps.iter().chain(&scenario.requests) {
        assert_eq!(samples(row.latency_us.as_ref(), &row.name), row.ok);
    }
}
