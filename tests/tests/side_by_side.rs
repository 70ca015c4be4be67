//! End-to-end tests of `cargo loadbench --target NAME=URL`, repeated: every scenario (or the
//! request of `cargo loadbench url`) runs against every server, interleaved, and the table sets
//! them side by side with their ratios to the first and a verdict. Everything goes through the
//! real binary, the fixture crate `fixtures/gate` and `TestServer`s on 127.0.0.1 with known
//! service times.
//!
//! The tests take turns (see [`one_at_a_time`]): they measure servers against each other, and
//! another test's load on the same two cores would be part of what they measure.

// A broken test environment (cargo missing, a fixture that does not build) should fail loudly.
#![allow(clippy::expect_used)]

use std::path::Path;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use cargo_loadbench::{ComparedMetric, Comparison, Method, Results, ScenarioResult, Verdict};
use loadbench_tests::cli::{Output, cargo_loadbench, read_report, row, run_fixture};
use loadbench_tests::{Behavior, TestServer, closed_port_url};

/// Serialises the tests of this file.
fn one_at_a_time() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    // A failed test poisons the lock; the next test is still worth running.
    LOCK.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A server that answers every request after `delay`.
fn server(delay: Duration) -> TestServer {
    TestServer::start(Behavior { delay, ..Behavior::default() })
}

fn path(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

/// The side-by-side table and the lines under it.
fn side_table(stdout: &str) -> &str {
    stdout
        .split_once("\nSide by side, each target against ")
        .map(|(_, rest)| rest)
        .unwrap_or_else(|| panic!("no side-by-side table in\n{stdout}"))
}

/// The cells of the side-by-side row of `target`.
fn side_row(stdout: &str, target: &str) -> Vec<String> {
    side_table(stdout)
        .lines()
        .map(|line| line.trim_matches('|').split('|').map(|c| c.trim().to_owned()).collect::<Vec<_>>())
        .find(|cells| cells.get(1).is_some_and(|c| c == target))
        .unwrap_or_else(|| panic!("no row for `{target}` in\n{stdout}"))
}

/// Whether `ratio` is within ±25 % of `truth`: generous, for a busy 2-core machine.
fn within(ratio: f64, truth: f64) -> bool {
    (truth * 0.75..=truth * 1.25).contains(&ratio)
}

/// `0.34×` → 0.34.
fn ratio(cell: &str) -> f64 {
    cell.strip_suffix('×').and_then(|r| r.parse().ok()).unwrap_or_else(|| panic!("not a ratio: {cell}"))
}

/// The entry of scenario `name` against `target`.
fn against<'a>(report: &'a Results, name: &str, target: &str) -> &'a ScenarioResult {
    report
        .scenarios
        .iter()
        .find(|s| s.name == name && s.target_name.as_deref() == Some(target))
        .unwrap_or_else(|| panic!("no `{name}` against `{target}` in {report:#?}"))
}

fn side_by_side<'a>(report: &'a Results, name: &str, target: &str) -> &'a Comparison {
    let s = against(report, name, target);
    s.side_by_side.as_ref().unwrap_or_else(|| panic!("`{name}` against `{target}` was not compared: {s:#?}"))
}

/// The ratio of `metric` in a side-by-side comparison.
fn json_ratio(c: &Comparison, metric: ComparedMetric) -> f64 {
    let m = c.metrics.iter().find(|m| m.metric == metric).unwrap_or_else(|| panic!("no {metric:?} in {c:#?}"));
    m.new / m.old
}

/// The `Running …` lines of `scenario` on stderr, each reduced to the target it names.
fn running_order<'a>(out: &'a Output, scenario: &str) -> Vec<&'a str> {
    running_order_of(out, &format!("gate/api {scenario}"))
}

/// The `Running WHAT against …` lines on stderr, each reduced to the target it names.
fn running_order_of<'a>(out: &'a Output, what: &str) -> Vec<&'a str> {
    let prefix = format!("Running {what} against ");
    out.stderr
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix(prefix.as_str()))
        .map(|rest| rest.split_once(' ').map_or(rest, |(name, _)| name))
        .collect()
}

#[test]
fn a_three_times_slower_server_shows_a_third_of_the_rate_either_way_round() {
    let _turn = one_at_a_time();
    // 20 ms against 60 ms per response: with 5 users in the closed model, req/s is 5 over the
    // time per request, a ratio of 1/3 for req/s and 3 for latency. Long enough that the
    // overhead both pay on top (timer rounding, a busy machine's scheduling: a millisecond or
    // a few) stays well inside the tolerance.
    let fast = server(Duration::from_millis(20));
    let slow = server(Duration::from_millis(60));
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("out.json");
    let csv = dir.path().join("out.csv");
    let fast_target = format!("fast={}", fast.url());
    let slow_target = format!("slow={}", slow.url());

    let out = run_fixture(
        "gate",
        &[
            "hello",
            "--exact",
            "--target",
            &fast_target,
            "--target",
            &slow_target,
            "--runs",
            "3",
            "--json",
            path(&json),
            "--output",
            path(&csv),
        ],
    );
    assert_eq!(out.code, Some(0), "{out:#?}");
    // Every run of the scenario against each server, and interleaved: A B A B A B.
    assert_eq!((fast.requests(), slow.requests()), (3 * 100, 3 * 100));
    assert_eq!(running_order(&out, "hello"), ["fast", "slow", "fast", "slow", "fast", "slow"], "{}", out.stderr);

    // The results table names each server's row.
    assert_eq!(row(&out.stdout, "hello [fast]")[1], "300", "{}", out.stdout);
    assert_eq!(row(&out.stdout, "hello [slow]")[1], "300", "{}", out.stdout);
    // The side-by-side table: the faster first, the slower at about a third of its rate.
    let reference = side_row(&out.stdout, "fast");
    assert_eq!(reference[0], "hello");
    assert_eq!([&reference[3], &reference[5], &reference[7], &reference[8]], ["1.00×", "1.00×", "1.00×", "reference"]);
    let cells = side_row(&out.stdout, "slow");
    let (rps_ratio, p50_ratio) = (ratio(&cells[3]), ratio(&cells[5]));
    assert!(within(rps_ratio, 1.0 / 3.0), "req/s ratio {rps_ratio} is not 1/3 ± 25%\n{}", out.stdout);
    assert!(within(p50_ratio, 3.0), "p50 ratio {p50_ratio} is not 3 ± 25%\n{}", out.stdout);
    assert!(cells[8].starts_with("worse (it/s, p50"), "{}", out.stdout);
    assert!(
        side_table(&out.stdout).contains(
            "A difference counts when its 95% confidence interval (bootstrap over 3 runs against 3 of `fast`) lies wholly beyond ±5% (±15% for p99)."
        ),
        "{}",
        out.stdout
    );

    // The JSON says the same, with the runs behind it.
    let report = read_report(&json);
    let (fast_entry, slow_entry) = (against(&report, "hello", "fast"), against(&report, "hello", "slow"));
    assert!(fast_entry.rps > slow_entry.rps, "{} vs {}", fast_entry.rps, slow_entry.rps);
    assert_eq!((fast_entry.runs.len(), slow_entry.runs.len()), (3, 3));
    assert_eq!(fast_entry.side_by_side, None, "the first target is the reference");
    let c = side_by_side(&report, "hello", "slow");
    assert_eq!((c.baseline.as_str(), c.verdict, c.method), ("fast", Verdict::Regressed, Method::Bootstrap));
    let json_rps_ratio = json_ratio(c, ComparedMetric::Rps);
    assert!(within(json_rps_ratio, 1.0 / 3.0), "{c:#?}");
    assert_eq!(report.scenarios.len(), 2, "one entry per server");

    // And the CSV.
    let text = std::fs::read_to_string(&csv).expect("CSV written");
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header = reader.headers().expect("header").clone();
    let rows: Vec<csv::StringRecord> = reader.records().collect::<Result<_, _>>().expect("rows");
    let cell = |row: &csv::StringRecord, name: &str| {
        row[header.iter().position(|h| h == name).unwrap_or_else(|| panic!("no column {name}"))].to_owned()
    };
    let slow_row = rows.iter().find(|r| cell(r, "target") == "slow").expect("a row for slow");
    assert_eq!(cell(slow_row, "side_by_side"), "worse");
    let csv_ratio: f64 = cell(slow_row, "rps_ratio").parse().expect("a number");
    assert!((csv_ratio - json_rps_ratio).abs() < 1e-9, "{csv_ratio} vs {json_rps_ratio}");

    // The other way round, once each: the faster one is better, three times over, and one run
    // is said to be a single-run comparison.
    let reversed =
        run_fixture("gate", &["hello", "--exact", "--quiet", "--target", &slow_target, "--target", &fast_target]);
    assert_eq!(reversed.code, Some(0), "{reversed:#?}");
    let cells = side_row(&reversed.stdout, "fast");
    let rps_ratio = ratio(&cells[3]);
    assert!(within(rps_ratio, 3.0), "req/s ratio {rps_ratio} is not 3 ± 25%\n{}", reversed.stdout);
    assert!(cells[8].starts_with("better (it/s, p50"), "{}", reversed.stdout);
    assert_eq!(side_row(&reversed.stdout, "slow")[8], "reference");
    assert!(
        side_table(&reversed.stdout).contains("Single-run comparison: a difference counts when it is beyond ±5%"),
        "{}",
        reversed.stdout
    );
    assert_eq!((fast.requests(), slow.requests()), (4 * 100, 4 * 100));
}

#[test]
fn the_same_server_under_two_names_is_within_noise() {
    let _turn = one_at_a_time();
    // 20 ms per response, as in the gate test that the same server twice is no change. Five
    // runs of each and a 10 % band (30 % for p99): a CI machine of two shared cores stalls now
    // and then for tens of milliseconds, which moves one run's p99 severalfold, and the verdict
    // has to see through a stall or two, not through a machine busy all along.
    let target = server(Duration::from_millis(20));
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("out.json");
    let (a, b) = (format!("a={}", target.url()), format!("b={}", target.url()));
    let out = run_fixture(
        "gate",
        &[
            "steady",
            "--exact",
            "--quiet",
            "--target",
            &a,
            "--target",
            &b,
            "--runs",
            "5",
            "--noise-threshold",
            "10",
            "--json",
            path(&json),
        ],
    );
    assert_eq!(out.code, Some(0), "{out:#?}");
    assert_eq!(target.requests(), 2 * 5 * 400);
    let report = read_report(&json);
    let c = side_by_side(&report, "steady", "b");
    let changes: Vec<String> = c
        .metrics
        .iter()
        .map(|m| {
            let [low, high] = m.confidence_interval.unwrap_or_default();
            format!("{} {:.3}× [{:+.1}%, {:+.1}%]", m.metric.label(), m.new / m.old, low * 100.0, high * 100.0)
        })
        .collect();
    assert_eq!((c.verdict, c.method), (Verdict::NoChange, Method::Bootstrap), "{changes:?}\n{}", out.stdout);
    assert_eq!(side_row(&out.stdout, "b")[8], "within noise", "{}", out.stdout);
    let rps_ratio = json_ratio(c, ComparedMetric::Rps);
    assert!((0.9..=1.1).contains(&rps_ratio), "{changes:?}");
}

#[test]
fn bad_targets_are_one_line_usage_errors() {
    let _turn = one_at_a_time();
    let url = "http://127.0.0.1:9";
    let (a, b) = (format!("a={url}"), format!("b={url}"));
    for (args, message) in [
        (vec!["--target", "fast=localhost:8080"], "target `localhost:8080` is not a valid URL"),
        (vec!["--target", "my server=http://127.0.0.1:9"], "`my server` is not a target name"),
        (vec!["--target", "fast=ftp://127.0.0.1:9"], "the scheme must be http:// or https://"),
        (vec!["--target", &a, "--target", &a], "error: --target: the name `a` is given twice"),
        (vec!["--target", &a, "--target", url], "error: --target: `http://127.0.0.1:9` has no name"),
        (
            vec!["--target", &a, "--target", &b, "--baseline", "main"],
            "error: --target: --baseline works with one target",
        ),
        (
            vec!["--target", &a, "--target", &b, "--save-baseline", "main"],
            "error: --target: --save-baseline works with one target",
        ),
    ] {
        let out = run_fixture("gate", &args);
        assert_eq!(out.code, Some(2), "{args:?}: {out:#?}");
        assert_eq!(out.stderr.lines().count(), 1, "{args:?}: one line\n{}", out.stderr);
        assert!(out.stderr.contains(message), "{args:?}: {}", out.stderr);
        assert!(out.stdout.is_empty(), "{args:?}: {}", out.stdout);
    }

    // What would run: each scenario against each server.
    let list = run_fixture("gate", &["hello", "--exact", "--list", "--target", &a, "--target", &b]);
    assert_eq!(list.code, Some(0), "{list:#?}");
    let lines: Vec<&str> = list.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{}", list.stdout);
    assert!(
        lines[0].starts_with("gate/api: hello [a] — ") && lines[0].ends_with(&format!("target {url}")),
        "{}",
        list.stdout
    );
    assert!(lines[1].starts_with("gate/api: hello [b] — "), "{}", list.stdout);
}

#[test]
fn a_one_shot_url_runs_against_each_target_side_by_side() {
    let _turn = one_at_a_time();
    // As for the scenario above: 20 ms against 60 ms at a fixed concurrency is a ratio of 1/3
    // for req/s and 3 for p50.
    let fast = server(Duration::from_millis(20));
    let slow = server(Duration::from_millis(60));
    let dir = tempfile::tempdir().expect("tempdir");
    let (json, markdown, junit) = (dir.path().join("out.json"), dir.path().join("out.md"), dir.path().join("out.xml"));
    let fast_target = format!("fast={}", fast.url());
    let slow_target = format!("slow={}/", slow.url());
    let name = "POST /items?x=1";

    let out = cargo_loadbench(&[
        "url",
        "/items?x=1",
        "-m",
        "POST",
        "-H",
        "x-k: v",
        "--body",
        "hi",
        "--target",
        &fast_target,
        "--target",
        &slow_target,
        "-c",
        "4",
        "-n",
        "200",
        "--runs",
        "2",
        "--json",
        path(&json),
        "--output",
        path(&markdown),
        "--output",
        path(&junit),
    ]);
    assert_eq!(out.code, Some(0), "{out:#?}");
    // Each run against each server, interleaved: a b a b.
    assert_eq!((fast.requests(), slow.requests()), (2 * 200, 2 * 200));
    assert_eq!(running_order_of(&out, "POST /items?x=1"), ["fast", "slow", "fast", "slow"], "{}", out.stderr);
    // The same request reached both: method, path and query, header and body.
    for server in [&fast, &slow] {
        let seen = server.seen();
        assert_eq!(seen.len(), 400);
        assert!(
            seen.iter().all(|r| (r.method.as_str(), r.path.as_str(), r.header("x-k"), r.body.as_slice())
                == ("POST", "/items?x=1", Some("v"), &b"hi"[..])),
            "{:?}",
            seen[0]
        );
    }

    assert_eq!(row(&out.stdout, &format!("{name} [fast]"))[1], "400", "{}", out.stdout);
    assert_eq!(row(&out.stdout, &format!("{name} [slow]"))[1], "400", "{}", out.stdout);
    let reference = side_row(&out.stdout, "fast");
    assert_eq!((reference[0].as_str(), reference[8].as_str()), (name, "reference"), "{}", out.stdout);
    let cells = side_row(&out.stdout, "slow");
    let (rps_ratio, p50_ratio) = (ratio(&cells[3]), ratio(&cells[5]));
    assert!(within(rps_ratio, 1.0 / 3.0), "req/s ratio {rps_ratio} is not 1/3 ± 25%\n{}", out.stdout);
    assert!(within(p50_ratio, 3.0), "p50 ratio {p50_ratio} is not 3 ± 25%\n{}", out.stdout);
    assert!(cells[8].starts_with("worse (it/s, p50"), "{}", out.stdout);
    assert!(side_table(&out.stdout).contains("(bootstrap over 2 runs against 2 of `fast`)"), "{}", out.stdout);

    let report = read_report(&json);
    assert_eq!(report.scenarios.len(), 2, "one entry per server: {report:#?}");
    let (fast_entry, slow_entry) = (against(&report, name, "fast"), against(&report, name, "slow"));
    assert!(fast_entry.rps > slow_entry.rps, "{} vs {}", fast_entry.rps, slow_entry.rps);
    assert_eq!((fast_entry.runs.len(), slow_entry.runs.len()), (2, 2));
    assert_eq!((fast_entry.iterations, slow_entry.iterations), (400, 400));
    let slow_url = format!("{}/items?x=1", slow.url());
    assert_eq!(slow_entry.config.target.as_deref(), Some(slow_url.as_str()), "the target's URL and the path");
    assert_eq!(fast_entry.side_by_side, None, "the first target is the reference");
    let c = side_by_side(&report, name, "slow");
    assert_eq!((c.baseline.as_str(), c.verdict, c.method), ("fast", Verdict::Regressed, Method::Bootstrap));
    assert!(within(json_ratio(c, ComparedMetric::Rps), 1.0 / 3.0), "{c:#?}");

    let markdown = std::fs::read_to_string(&markdown).expect("Markdown written");
    assert!(markdown.contains("#### Side by side, each target against `fast` (the first)"), "{markdown}");
    let junit = std::fs::read_to_string(&junit).expect("JUnit written");
    assert!(junit.contains(r#"name="POST /items?x=1 [slow]""#), "{junit}");
    assert!(junit.contains("side by side against `fast`: worse"), "{junit}");

    // A full URL: its path and query go to every target, its own server (here a closed port)
    // is not used. The other way round, the faster one is better.
    let url = format!("{}/items?x=1", closed_port_url());
    let out = cargo_loadbench(&[
        "url",
        &url,
        "--quiet",
        "--target",
        &slow_target,
        "--target",
        &fast_target,
        "-c",
        "4",
        "-n",
        "40",
    ]);
    assert_eq!(out.code, Some(0), "{out:#?}");
    assert_eq!((fast.requests(), slow.requests()), (440, 440));
    let name = "GET /items?x=1";
    assert_eq!(row(&out.stdout, &format!("{name} [fast]"))[1..3], ["40", "0"], "{}", out.stdout);
    assert_eq!(side_row(&out.stdout, "slow")[8], "reference", "{}", out.stdout);
    let cells = side_row(&out.stdout, "fast");
    assert!(within(ratio(&cells[3]), 3.0), "{}", out.stdout);
    assert!(cells[8].starts_with("better (it/s, p50"), "{}", out.stdout);
}

#[test]
fn bad_url_targets_are_one_line_usage_errors() {
    let _turn = one_at_a_time();
    let server = server(Duration::ZERO);
    let url = server.url();
    let (a, b) = (format!("a={url}"), format!("b={url}"));
    for (args, message) in [
        (vec!["url", "/items"], "error: `/items` is a path without a server: give a full URL such as"),
        (
            vec!["url", &url, "--target", &a],
            "error: --target: `cargo loadbench url` takes its server from the URL; --target is for two or more",
        ),
        (vec!["url", "/items", "--target", &url], "error: --target: `cargo loadbench url` takes its server"),
        (vec!["url", "/items", "--target", &a, "--target", &a], "error: --target: the name `a` is given twice"),
        (vec!["url", "/items", "--target", &a, "--target", &url], "has no name; with several targets"),
        (
            vec!["url", "/items", "--target", &a, "--target", &b, "--baseline", "main"],
            "error: --target: --baseline works with one target",
        ),
        (
            vec!["--target", &a, "--target", &b, "url", "/items", "--save-baseline", "main"],
            "error: --target: --save-baseline works with one target",
        ),
        (vec!["url", "/a b", "--target", &a, "--target", &b], "`/a b` is not a valid path and query"),
    ] {
        let out = cargo_loadbench(&args);
        assert_eq!(out.code, Some(2), "{args:?}: {out:#?}");
        assert_eq!(out.stderr.lines().count(), 1, "{args:?}: one line\n{}", out.stderr);
        assert!(out.stderr.contains(message), "{args:?}: {}", out.stderr);
        assert!(out.stdout.is_empty(), "{args:?}: {}", out.stdout);
    }
    assert_eq!(server.requests(), 0, "refused before any request");
}
