//! `cargo loadbench merge`, the real binary, on the shards of a distributed run written here by
//! hand (every figure known): the merged histogram is the histogram of all the samples, value for
//! value; a threshold judges the whole run, not a shard; shards that are not one run are refused
//! with one line and exit code 2; the merged results go to HTML and JUnit as a run's do. Files
//! that no run could have written are refused too, in bounded time and memory (`merge/refusals.rs`).

#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use base64::Engine as _;
use cargo_loadbench::{Results, ScenarioResult};
use loadbench::report::histogram::{Keep, decode, latency_report};
use loadbench::report::{ConfigReport, LatencyReport, ScenarioReport, ShardReport, ShareReport, TimelineSecond};
use loadbench_tests::cli::{Output, cargo_loadbench_in, read_json, read_report};

/// An empty HdrHistogram from `low` to `high` at `digits` significant digits, growing, read from
/// its V2 encoding (header only: cookie, payload length, offset, digits, bounds, ratio). This
/// crate does not depend on hdrhistogram; the runtime's `decode` makes the histograms here.
macro_rules! histogram {
    ($low:expr, $high:expr, $digits:expr, $values:expr) => {{
        let mut bytes = Vec::new();
        bytes.extend(0x1c84_9313_u32.to_be_bytes());
        bytes.extend(0_u32.to_be_bytes());
        bytes.extend(0_u32.to_be_bytes());
        bytes.extend(($digits as u32).to_be_bytes());
        bytes.extend(($low as u64).to_be_bytes());
        bytes.extend(($high as u64).to_be_bytes());
        bytes.extend(1.0_f64.to_be_bytes());
        let mut h = decode(&base64::engine::general_purpose::STANDARD.encode(bytes)).expect("an empty histogram");
        h.auto(true);
        for value in $values {
            h.record(value).expect("records");
        }
        h
    }};
}

/// Nanoseconds, as the engine records latencies: 1 ns to 10 s, 3 significant digits.
macro_rules! nanoseconds {
    ($values:expr) => {
        histogram!(1, 10_000_000_000_u64, 3, $values)
    };
}

/// Microseconds, as the timeline records a second: 1 µs to 10 s, 2 significant digits.
macro_rules! microseconds {
    ($values:expr) => {
        histogram!(1, 10_000_000, 2, $values)
    };
}

const KEEP: Keep = Keep { spectrum: true, histogram: true };

/// One shard's latencies, in nanoseconds, and when it started.
struct Part {
    index: u32,
    count: u32,
    start_ms: u64,
    /// Per second of its run, its successes' latencies.
    seconds: Vec<Vec<u64>>,
}

impl Part {
    fn all(&self) -> impl Iterator<Item = u64> + '_ {
        self.seconds.iter().flatten().copied()
    }
}

/// The shard document of `part`: one scenario, `hello`, whose successes are its samples.
fn shard_document(part: &Part) -> Results {
    let config = ConfigReport { concurrency: 4, count: Some(10_000), timeout_ms: 5_000, ..ConfigReport::default() };
    let mut s = ScenarioReport::not_started("hello", config);
    let ok = part.all().count() as u64;
    s.started_unix_ms = Some(part.start_ms);
    s.share = Some(ShareReport { concurrency: 2, count: Some(ok), rate: None, first_user: part.index * 2 });
    s.duration_us = part.seconds.len() as u64 * 1_000_000;
    (s.iterations, s.ok) = (ok, ok);
    s.http.responses = ok;
    s.http.connections = 2;
    s.http.status = [(200, ok)].into_iter().collect();
    s.rps = ok as f64 / part.seconds.len() as f64;
    s.attempts_per_sec = s.rps;
    s.latency_us = latency_report(&nanoseconds!(part.all()), &[], KEEP);
    s.timeline = part
        .seconds
        .iter()
        .enumerate()
        .map(|(k, values)| {
            let h = microseconds!(values.iter().map(|ns| ns / 1_000));
            let q = |q: f64| Some(h.value_at_quantile(q) as f64);
            TimelineSecond {
                second: k as u64,
                requests: values.len() as u64,
                errors: 0,
                dropped: 0,
                p50_us: q(0.5),
                p90_us: q(0.9),
                p99_us: q(0.99),
                histogram: loadbench::report::histogram::encode(&h).ok(),
            }
        })
        .collect();
    let mut results = Results::new(std::time::SystemTime::now());
    results.machine.hostname = Some(format!("node-{}", part.index));
    results.shard = Some(ShardReport { index: part.index, count: part.count });
    results.scenarios = vec![ScenarioResult::new(s)];
    results
}

/// `results` written as `name` in `dir`.
fn write(dir: &Path, name: &str, results: &Results) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string_pretty(results).expect("serializes")).expect("written");
    path
}

fn text(path: &Path) -> &str {
    path.to_str().expect("UTF-8 path")
}

/// `cargo loadbench merge ARGS…` outside any Cargo workspace (no `cargo metadata` to run).
fn merge(dir: &Path, args: &[&str]) -> Output {
    let all: Vec<&str> = ["merge"].into_iter().chain(args.iter().copied()).collect();
    cargo_loadbench_in(dir, &all)
}

/// Latencies spread from `low` to about `low + spread` nanoseconds.
fn spread(n: u64, low: u64, spread: u64, seed: u64) -> Vec<u64> {
    (1..=n).map(|i| low + (i * 7_919 + seed * 104_729) % spread).collect()
}

/// Three shards of different speeds and starts, 1.5 s apart: 2 s, 3 s and 2 s of seconds.
fn three_shards() -> Vec<Part> {
    vec![
        Part { index: 0, count: 3, start_ms: 1_800_000_000_000, seconds: vec![spread(400, 900_000, 400_000, 1); 2] },
        Part {
            index: 1,
            count: 3,
            start_ms: 1_800_000_001_500,
            seconds: vec![spread(300, 1_000_000, 3_000_000, 2), spread(300, 2_000_000, 9_000_000, 3), vec![50_000_000]],
        },
        Part { index: 2, count: 3, start_ms: 1_800_000_000_200, seconds: vec![spread(500, 700_000, 200_000, 4); 2] },
    ]
}

#[test]
fn the_merged_histogram_is_the_histogram_of_every_sample() {
    let dir = tempfile::tempdir().expect("tempdir");
    let parts = three_shards();
    // Given out of order.
    let files: Vec<PathBuf> =
        parts.iter().rev().map(|p| write(dir.path(), &format!("shard-{}.json", p.index), &shard_document(p))).collect();
    let merged = dir.path().join("merged.json");
    let mut args: Vec<&str> = files.iter().map(|f| text(f)).collect();
    let markdown = dir.path().join("merged.md");
    args.extend(["--json", text(&merged), "--output", text(&markdown)]);
    let out = merge(dir.path(), &args);
    assert_eq!(out.code, Some(0), "{out:#?}");
    // How the run was put together goes with its notes, into every format.
    let summary = std::fs::read_to_string(&markdown).expect("the Markdown");
    assert!(summary.contains("3 shards merged, run on 3 machines (node-0, node-1, node-2)"), "{summary}");

    let json = read_json(&merged);
    assert!(json.get("shard").is_none(), "the merged run is whole");
    let results = read_report(&merged);
    let s = &results.scenarios[0];
    let all = nanoseconds!(parts.iter().flat_map(Part::all));
    let samples = all.len();
    assert_eq!((s.ok, s.iterations, s.http.status.get(&200).copied()), (samples, samples, Some(samples)));
    assert_eq!(s.share, None);
    // From shard 0's start to shard 1's end, 1.5 s + 3 s later.
    assert_eq!((s.started_unix_ms, s.duration_us), (Some(1_800_000_000_000), 4_500_000));
    assert!((s.rps - samples as f64 / 4.5).abs() < 1e-9, "{}", s.rps);

    let latency: &LatencyReport = s.latency_us.as_ref().expect("a latency");
    let histogram = decode(latency.histogram.as_deref().expect("the merged histogram")).expect("decodes");
    let merged_pairs: Vec<(u64, u64)> =
        histogram.iter_recorded().map(|v| (v.value_iterated_to(), v.count_at_value())).collect();
    let all_pairs: Vec<(u64, u64)> = all.iter_recorded().map(|v| (v.value_iterated_to(), v.count_at_value())).collect();
    assert_eq!(merged_pairs, all_pairs, "value for value");
    assert_eq!((histogram.len(), histogram.min(), histogram.max()), (all.len(), all.min(), all.max()));
    let expected = latency_report(&all, &[], KEEP).expect("samples");
    assert_eq!((latency.p50, latency.p99, latency.max), (expected.p50, expected.p99, expected.max));
    let figures = |l: &LatencyReport| [l.mean, l.stdev, l.min, l.p50, l.p90, l.p95, l.p99, l.p99_9, l.max];
    assert_eq!(figures(latency), figures(&expected), "every figure");
    assert_eq!(latency.histogram, expected.histogram, "the same encoding");
    // The spectrum's percentiles are sums of floats, read back from JSON within a rounding.
    assert_eq!(latency.spectrum.len(), expected.spectrum.len());
    for (got, want) in latency.spectrum.iter().zip(&expected.spectrum) {
        assert!(got.value_us == want.value_us && (got.percentile - want.percentile).abs() < 1e-9, "{got:?} {want:?}");
    }
    // JSON numbers, as a script reads them.
    let read = |field: &str| json["scenarios"][0]["latency_us"][field].as_f64();
    assert_eq!((read("p50"), read("p99"), read("max")), (Some(expected.p50), Some(expected.p99), Some(expected.max)));

    // Timelines by wall clock: shard 1's seconds 0–2 start at 1.5, 2.5 and 3.5 s (merged seconds
    // 1, 2, 3); shard 2's at 0.2 and 1.2 s (merged 0 and 1).
    let requests: Vec<u64> = s.timeline.iter().map(|t| t.requests).collect();
    assert_eq!(requests, [400 + 500, 400 + 300 + 500, 300, 1]);
    let second_1 = microseconds!(
        parts[0].seconds[1].iter().chain(&parts[1].seconds[0]).chain(&parts[2].seconds[1]).map(|ns| ns / 1_000)
    );
    assert_eq!(s.timeline[1].p99_us, Some(second_1.value_at_quantile(0.99) as f64));
}

/// Shard 0 fast (every request 1 ms), shard 1 with a slow tail (5 % at 80 ms): shard 0 alone
/// meets `p99 < 10ms`, the whole run does not.
fn fast_and_slow(dir: &Path) -> (PathBuf, PathBuf) {
    let fast = Part { index: 0, count: 2, start_ms: 1_800_000_000_000, seconds: vec![vec![1_000_000; 1_000]] };
    let mut tail = vec![1_000_000; 950];
    tail.extend([80_000_000; 50]);
    let slow = Part { index: 1, count: 2, start_ms: 1_800_000_000_040, seconds: vec![tail] };
    (write(dir, "fast.json", &shard_document(&fast)), write(dir, "slow.json", &shard_document(&slow)))
}

#[test]
fn a_threshold_judges_the_whole_run_not_a_shard() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (fast, slow) = fast_and_slow(dir.path());
    // The fast shard's share, rendered alone, passes.
    let alone = cargo_loadbench_in(dir.path(), &["report", text(&fast), "--threshold", "p99<10ms"]);
    assert_eq!(alone.code, Some(0), "{alone:#?}");
    let out = merge(dir.path(), &[text(&fast), text(&slow), "--threshold", "p99<10ms"]);
    assert_eq!(out.code, Some(1), "{out:#?}");
    let errors = out.errors();
    assert_eq!(errors.len(), 1, "{}", out.stderr);
    assert!(errors[0].starts_with("error: gate failed") && errors[0].contains("p99 < 10ms (was 80"), "{}", errors[0]);
    // A percentile only the threshold asks for is computed from the merged histogram too.
    let json = dir.path().join("p98.json");
    let out = merge(dir.path(), &[text(&fast), text(&slow), "--threshold", "p98<10ms", "--json", text(&json)]);
    assert_eq!(out.code, Some(1), "{out:#?}");
    let results = read_report(&json);
    let latency = results.scenarios[0].latency_us.as_ref().expect("a latency");
    assert!(latency.percentiles.get("p98").is_some_and(|&us| us > 79_000.0), "{:?}", latency.percentiles);
}

#[test]
fn merged_results_go_to_html_and_junit_as_a_runs_do() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (fast, slow) = fast_and_slow(dir.path());
    let (html, xml) = (dir.path().join("merged.html"), dir.path().join("merged.xml"));
    let out = merge(
        dir.path(),
        &[text(&fast), text(&slow), "--threshold", "p99<10ms", "--no-gate", "--output", text(&html), "-o", text(&xml)],
    );
    assert_eq!(out.code, Some(0), "{out:#?}");
    assert!(out.stdout.is_empty(), "nothing on stdout with --output and no --format: {}", out.stdout);
    let page = std::fs::read_to_string(&html).expect("the HTML report");
    assert!(page.starts_with("<!DOCTYPE html>") && page.contains("hello") && page.contains("<svg"), "{page:.300}");
    let junit = std::fs::read_to_string(&xml).expect("the JUnit report");
    let document = roxmltree::Document::parse(&junit).expect("XML");
    let case = document.descendants().find(|n| n.has_tag_name("testcase")).expect("a test case");
    assert_eq!(case.attribute("name"), Some("hello"));
    assert!(case.children().any(|n| n.has_tag_name("failure")), "p99 < 10ms failed: {junit}");
}

/// Runs `merge` on `files` and checks it refused with exit code 2 and one line, returned.
fn refused(dir: &Path, files: &[&Path]) -> String {
    let args: Vec<&str> = files.iter().map(|f| text(f)).collect();
    let out = merge(dir, &args);
    assert_eq!(out.code, Some(2), "{out:#?}");
    assert_eq!(out.stderr.lines().count(), 1, "one line: {}", out.stderr);
    assert!(out.stdout.is_empty(), "{}", out.stdout);
    out.stderr.trim_end().to_owned()
}

#[test]
fn shards_that_are_not_one_whole_run_are_refused_with_one_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let part = |index: u32, count: u32| Part { index, count, start_ms: 1_800_000_000_000, seconds: vec![vec![1_000]] };
    let (a, b, c) = (
        write(d, "a.json", &shard_document(&part(0, 3))),
        write(d, "b.json", &shard_document(&part(1, 3))),
        write(d, "c.json", &shard_document(&part(2, 3))),
    );
    let other_run = write(d, "other.json", &shard_document(&part(1, 2)));
    let b_again = write(d, "b-again.json", &shard_document(&part(1, 3)));

    let line = refused(d, &[&a, &other_run]);
    assert!(line.starts_with("error: ") && line.contains("a.json is shard 0 of 3 but "), "{line}");
    assert!(line.ends_with("other.json is shard 1 of 2: shards of different runs"), "{line}");
    assert_eq!(refused(d, &[&a, &c]), "error: shard 1 of 3 is missing");
    let line = refused(d, &[&a, &b, &b_again, &c]);
    assert!(line.starts_with("error: shard 1/3 given twice: ") && line.ends_with("b-again.json"), "{line}");

    let mut heavier = shard_document(&part(2, 3));
    heavier.scenarios[0].config.concurrency = 40;
    let heavier = write(d, "heavier.json", &heavier);
    let line = refused(d, &[&a, &b, &heavier]);
    assert!(line.contains("`hello` has config.concurrency 4 in ") && line.contains("but 40 in "), "{line}");

    let mut bare = shard_document(&part(2, 3));
    if let Some(latency) = &mut bare.scenarios[0].latency_us {
        latency.histogram = None;
    }
    let bare = write(d, "bare.json", &bare);
    let line = refused(d, &[&a, &b, &bare]);
    assert!(line.ends_with("bare.json: the latency of `hello` was written without histograms: run the shards with a loadbench that writes them"), "{line}");

    let mut whole = shard_document(&part(0, 1));
    whole.shard = None;
    let whole = write(d, "whole.json", &whole);
    let line = refused(d, &[&whole]);
    assert!(
        line.ends_with(
            "whole.json is not a shard: it has no `shard` (run each part of a distributed run with --shard I/N)"
        ),
        "{line}"
    );

    let missing = d.join("missing.json");
    let line = refused(d, &[&a, &missing]);
    assert!(line.starts_with("error: cannot read results ") && line.contains("missing.json"), "{line}");

    let out = merge(d, &[text(&a), text(&b), text(&c), "--runs", "2"]);
    assert_eq!((out.code, out.stderr.lines().count()), (Some(2), 1), "{out:#?}");
    assert!(out.stderr.contains("--runs only applies to a run; `cargo loadbench merge`"), "{}", out.stderr);
}

// A test file is a crate root, whose modules would be looked for beside it.
#[path = "merge/refusals.rs"]
mod refusals;
