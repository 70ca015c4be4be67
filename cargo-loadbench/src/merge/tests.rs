//! The merge of hand-made shards: sums, the union of causes, the timeline across an offset, and
//! every refusal, each as the one line `main` prints.

use std::path::PathBuf;

use cargo_loadbench::{Results, ScenarioResult};
use hdrhistogram::Histogram;
use loadbench::report::histogram::{Keep, latency_report};
use loadbench::report::{
    CheckReport, ConfigReport, ErrorCause, GeneratorReport, ScenarioReport, ShardReport, ShareReport, StepReport,
    TimelineSecond, Warning, WarningKind, WatchReport,
};

use super::histograms::tests::{encoded, nanoseconds};
use super::*;

/// Latencies in nanoseconds, different in each shard so that their sum is not any one's.
fn samples(shard: u32, n: u64) -> Vec<u64> {
    (1..=n).map(|i| 100_000 + (i * 7_919 + u64::from(shard) * 1_000_003) % 5_000_000).collect()
}

/// A latency report of `values`, with its histogram, as a shard writes it.
fn latency(values: &[u64]) -> Option<loadbench::report::LatencyReport> {
    latency_report(&nanoseconds(values.iter().copied()), &[], Keep { spectrum: true, histogram: true })
}

/// Shard `index` of `count`, with one scenario `hello` of `ok` successes and one failure, started
/// at `start_ms`, two seconds long.
fn shard(index: u32, count: u32, ok: u64, start_ms: u64) -> Shard {
    let config = ConfigReport { concurrency: 4, count: Some(100), timeout_ms: 1_000, ..ConfigReport::default() };
    let mut s = ScenarioResult::new(ScenarioReport::not_started("hello", config));
    s.package = Some("shop".into());
    s.bench = Some("api".into());
    s.started_unix_ms = Some(start_ms);
    s.started_at = format!("t{start_ms}");
    s.share = Some(ShareReport { concurrency: 2, count: Some(50), rate: None, first_user: index * 2 });
    s.duration_us = 2_000_000;
    (s.ok, s.failed, s.iterations) = (ok, 1, ok + 1);
    s.errors.status = 1;
    s.dropped = 2;
    s.cancelled = 0;
    s.warmup_iterations = 3;
    s.http.responses = ok + 1;
    s.http.bytes_received = 10 * (ok + 1);
    s.http.status = [(200, ok), (503, 1)].into_iter().collect();
    s.http.retries = 1;
    s.causes = loadbench::report::Causes::from_counts([(("status".into(), "got 503".into()), 1)]);
    let values = samples(index, ok);
    s.latency_us = latency(&values);
    s.steps = vec![StepReport {
        name: "pay".into(),
        iterations: ok,
        ok,
        failed: 0,
        errors: Default::default(),
        causes: Default::default(),
        latency_us: latency(&values),
    }];
    s.checks = vec![CheckReport { name: "has id".into(), passes: ok, fails: u64::from(index) }];
    s.generator = Some(GeneratorReport {
        worker_threads: 2,
        cpu_seconds: None,
        cpu_utilization: Some(0.2 + f64::from(index) / 10.0),
        lag_p99_us: None,
        lag_max_us: None,
        saturated: index == 1,
        waited_for_cpu: None,
        limit: None,
        read_delay_p99_us: None,
        read_delay_max_us: None,
        late_reads: false,
    });
    s.watched = vec![WatchReport {
        name: "app".into(),
        pid: 10 + index,
        cpu_avg_percent: None,
        cpu_peak_percent: None,
        rss_start_bytes: None,
        rss_peak_bytes: None,
        rss_end_bytes: None,
        note: None,
        series: Vec::new(),
    }];
    s.warnings = vec![Warning { kind: WarningKind::TooFast, message: format!("shard {index} too fast") }];
    let mut results: Results = Results::new(std::time::SystemTime::UNIX_EPOCH);
    results.started_at = format!("2026-01-01T00:00:0{index}Z");
    results.machine.hostname = Some(format!("node-{index}"));
    results.shard = Some(ShardReport { index, count });
    results.scenarios = vec![s];
    Shard { path: PathBuf::from(format!("shard-{index}.json")), results }
}

fn merged(shards: Vec<Shard>) -> Merged {
    merge(shards, &[]).unwrap_or_else(|e| panic!("{e}"))
}

fn refusal(shards: Vec<Shard>) -> String {
    match merge(shards, &[]) {
        Ok(merged) => panic!("merged: {merged:?}"),
        Err(err) => err.to_string(),
    }
}

#[test]
fn counts_add_up_and_latencies_come_from_all_the_samples() {
    // Shard 1 starts 1.5 s after shard 0 and ends at 3.5 s; given out of order.
    let whole = merged(vec![shard(1, 2, 300, 11_500), shard(0, 2, 200, 10_000)]);
    assert_eq!(
        whole.notes,
        ["2 shards merged, run on 2 machines (node-0, node-1); the machine described is shard 0's"]
    );
    let results = whole.results;
    assert_eq!((results.shard, results.started_at.as_str()), (None, "2026-01-01T00:00:00Z"));
    assert_eq!(results.machine.hostname.as_deref(), Some("node-0"));
    let [s] = &results.scenarios[..] else { panic!("{:?}", results.scenarios) };
    assert_eq!((s.iterations, s.ok, s.failed, s.errors.status), (502, 500, 2, 2));
    assert_eq!((s.dropped, s.warmup_iterations, s.http.responses, s.http.bytes_received), (4, 6, 502, 5_020));
    assert_eq!((s.http.status.get(&200), s.http.status.get(&503), s.http.retries), (Some(&500), Some(&2), 2));
    assert_eq!(s.causes.top, [ErrorCause { kind: "status".into(), message: "got 503".into(), count: 2 }]);
    assert_eq!(s.checks, [CheckReport { name: "has id".into(), passes: 500, fails: 1 }]);
    assert_eq!((s.share, s.started_unix_ms, s.started_at.as_str()), (None, Some(10_000), "t10000"));
    assert_eq!(s.duration_us, 3_500_000, "from 10 s to 11.5 + 2 s");
    assert!((s.rps - 500.0 / 3.5).abs() < 1e-9 && (s.attempts_per_sec - 502.0 / 3.5).abs() < 1e-9);

    let all: Vec<u64> = samples(0, 200).into_iter().chain(samples(1, 300)).collect();
    assert_eq!(s.latency_us, latency(&all), "the histogram of every sample, its percentiles and spectrum");
    assert_eq!(s.steps.len(), 1);
    assert_eq!((s.steps[0].ok, &s.steps[0].latency_us), (500, &latency(&all)));

    let generator = s.generator.as_ref().map(|g| (g.saturated, g.worker_threads, g.cpu_utilization));
    assert_eq!(generator, Some((true, 4, Some(0.2 + 1.0 / 10.0))), "the saturated shard's, with every worker");
    let watched: Vec<(&str, u32)> = s.watched.iter().map(|w| (w.name.as_str(), w.pid)).collect();
    assert_eq!(watched, [("shard 0: app", 10), ("shard 1: app", 11)]);
    assert_eq!(s.warnings.len(), 1, "one of each kind: {:?}", s.warnings);
}

#[test]
fn the_open_models_rates_add_up_over_the_merged_window() {
    let mut shards = vec![shard(0, 2, 100, 0), shard(1, 2, 100, 1_000)];
    for shard in &mut shards {
        shard.results.scenarios[0].rate = Some(loadbench::report::RateReport { requested: 50.0, achieved: 49.0 });
    }
    let results = merged(shards).results;
    let s = &results.scenarios[0];
    let rate = s.rate.unwrap_or_else(|| panic!("a rate"));
    assert_eq!(s.duration_us, 3_000_000);
    assert_eq!(rate.requested, 100.0);
    assert!((rate.achieved - 202.0 / 3.0).abs() < 1e-9, "{rate:?}");
}

#[test]
fn causes_are_the_union_ranked_again_ten_listed() {
    let mut shards = vec![shard(0, 2, 10, 0), shard(1, 2, 10, 0)];
    let counts = |range: std::ops::RangeInclusive<u64>| {
        range.map(|n| (("scenario".to_owned(), format!("item {n}")), n)).collect::<Vec<_>>()
    };
    // Shard 0: items 1–8; shard 1: items 5–12 and 3 summed in others. Items 5–8 add up.
    shards[0].results.scenarios[0].causes = loadbench::report::Causes::from_counts(counts(1..=8));
    shards[1].results.scenarios[0].causes =
        loadbench::report::Causes { others: 3, ..loadbench::report::Causes::from_counts(counts(5..=12)) };
    let results = merged(shards).results;
    let causes = &results.scenarios[0].causes;
    assert_eq!(causes.top.len(), 10);
    let top: Vec<(&str, u64)> = causes.top.iter().map(|c| (c.message.as_str(), c.count)).collect();
    assert_eq!(&top[..4], [("item 8", 16), ("item 7", 14), ("item 12", 12), ("item 6", 12)]);
    // Items 1 and 2 are the rarest: summed with the 3 already in others.
    assert_eq!(causes.others, 1 + 2 + 3);
    assert_eq!(causes.total(), (1..=8).sum::<u64>() + (5..=12).sum::<u64>() + 3);
}

#[test]
fn timelines_line_up_across_a_one_and_a_half_second_offset() {
    let second = |requests: u64, us: u64| {
        let mut h = Histogram::<u64>::new_with_bounds(1, 10_000_000, 2).unwrap_or_else(|e| panic!("{e}"));
        h.record_n(us, requests).unwrap_or_else(|e| panic!("{e}"));
        TimelineSecond {
            second: 0,
            requests,
            errors: 0,
            dropped: 0,
            p50_us: Some(us as f64),
            p90_us: Some(us as f64),
            p99_us: Some(us as f64),
            histogram: Some(encoded(&h)),
        }
    };
    let mut shards = vec![shard(0, 2, 10, 20_000), shard(1, 2, 10, 21_500)];
    shards[0].results.scenarios[0].timeline = vec![second(4, 100), second(6, 100)];
    shards[1].results.scenarios[0].timeline = vec![second(5, 200), second(5, 200)];
    let results = merged(shards).results;
    let timeline = &results.scenarios[0].timeline;
    let figures: Vec<(u64, u64, Option<f64>)> = timeline.iter().map(|s| (s.second, s.requests, s.p50_us)).collect();
    // Shard 1's seconds start at 1.5 s and 2.5 s: merged seconds 1 and 2.
    assert_eq!(figures, [(0, 4, Some(100.0)), (1, 11, Some(100.0)), (2, 5, Some(200.0))]);
    assert_eq!(timeline[1].p99_us, Some(200.0), "6 at 100 µs and 5 at 200 µs");
}

#[test]
fn connect_times_without_histograms_are_the_slowest_shards_with_a_note() {
    let mut shards = vec![shard(0, 2, 10, 0), shard(1, 2, 10, 0)];
    let times = |p99: f64, histogram: bool| {
        let mut l = latency(&[1_000, 2_000]).unwrap_or_else(|| panic!("a latency"));
        l.p99 = p99;
        l.histogram = l.histogram.filter(|_| histogram);
        l
    };
    shards[0].results.scenarios[0].connect_us = Some(times(80.0, true));
    shards[1].results.scenarios[0].connect_us = Some(times(90.0, false));
    let whole = merged(shards);
    assert_eq!(whole.results.scenarios[0].connect_us.as_ref().map(|l| l.p99), Some(90.0));
    assert_eq!(
        whole.notes[1],
        "`hello`'s connect times are shard 1's, the slowest shard's by p99, not merged: shard-1.json wrote them \
         without a histogram"
    );
}

#[test]
fn quic_counts_add_up_and_its_times_merge_from_the_histograms() {
    let mut shards = vec![shard(0, 2, 10, 0), shard(1, 2, 10, 0)];
    let (first, second) = ([1_000, 2_000, 3_000], [4_000, 5_000]);
    shards[0].results.scenarios[0].quic = Some(loadbench::report::QuicReport {
        zero_rtt_offered: 3,
        zero_rtt_accepted: 2,
        zero_rtt_us: latency(&first),
        ttfb_us: latency(&first),
    });
    shards[1].results.scenarios[0].quic = Some(loadbench::report::QuicReport {
        zero_rtt_offered: 2,
        zero_rtt_accepted: 2,
        zero_rtt_us: None,
        ttfb_us: latency(&second),
    });
    let whole = merged(shards);
    let quic = whole.results.scenarios[0].quic.clone().unwrap_or_else(|| panic!("a quic part"));
    assert_eq!((quic.zero_rtt_offered, quic.zero_rtt_accepted), (5, 4));
    let all = [first.as_slice(), second.as_slice()].concat();
    let sum = |l: Option<loadbench::report::LatencyReport>| l.map(|l| (l.min, l.p50, l.max));
    assert_eq!(sum(quic.ttfb_us), sum(latency(&all)), "both shards' times to first byte");
    assert_eq!(sum(quic.zero_rtt_us), sum(latency(&first)), "the one shard that offered 0-RTT");
    // A run with no QUIC part merges to none.
    let plain = merged(vec![shard(0, 2, 10, 0), shard(1, 2, 10, 0)]);
    assert_eq!(plain.results.scenarios[0].quic, None);
}

#[test]
fn a_shard_without_successes_needs_no_histogram() {
    let mut shards = vec![shard(0, 2, 10, 0), shard(1, 2, 10, 0)];
    let s = &mut shards[1].results.scenarios[0];
    (s.ok, s.iterations, s.latency_us) = (0, 1, None);
    s.steps.clear();
    let results = merged(shards).results;
    assert_eq!(results.scenarios[0].latency_us, latency(&samples(0, 10)));
}

#[test]
fn what_is_not_every_shard_of_one_run_is_refused_naming_the_files() {
    let mut lone = shard(0, 2, 10, 0);
    lone.results.shard = None;
    assert_eq!(
        refusal(vec![shard(1, 2, 10, 0), lone]),
        "shard-0.json is not a shard: it has no `shard` (run each part of a distributed run with --shard I/N)"
    );
    assert_eq!(
        refusal(vec![shard(0, 2, 10, 0), shard(1, 3, 10, 0)]),
        "shard-0.json is shard 0 of 2 but shard-1.json is shard 1 of 3: shards of different runs"
    );
    assert_eq!(refusal(vec![shard(0, 3, 10, 0), shard(2, 3, 10, 0)]), "shard 1 of 3 is missing");
    assert_eq!(refusal(vec![shard(3, 4, 10, 0)]), "shards 0, 1, 2 of 4 are missing");
    let mut again = shard(1, 3, 10, 0);
    again.path = PathBuf::from("b.json");
    assert_eq!(
        refusal(vec![shard(1, 3, 10, 0), shard(0, 3, 10, 0), again]),
        "shard 1/3 given twice: shard-1.json and b.json"
    );
    assert_eq!(
        refusal(vec![shard(2, 2, 10, 0)]),
        "shard-2.json says it is shard 2 of 2: shards are numbered from 0 to 1"
    );
}

#[test]
fn shards_of_different_runs_are_refused() {
    let mut newer = shard(1, 2, 10, 0);
    newer.results.tool.version = "0.2.0".into();
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(
        refusal(vec![shard(0, 2, 10, 0), newer]),
        format!(
            "shard-0.json was written by loadbench {version} but shard-1.json by loadbench 0.2.0: run every shard \
             with the same loadbench"
        )
    );
    let mut other = shard(1, 2, 10, 0);
    other.results.scenarios[0].name = "other".into();
    assert_eq!(
        refusal(vec![shard(0, 2, 10, 0), other]),
        "shard-0.json and shard-1.json hold different scenarios (shop/api/hello; shop/api/other): every shard runs \
         the same scenarios, in the same order"
    );
    let mut heavier = shard(1, 2, 10, 0);
    heavier.results.scenarios[0].config.concurrency = 8;
    assert_eq!(
        refusal(vec![shard(0, 2, 10, 0), heavier]),
        "`hello` has config.concurrency 4 in shard-0.json but 8 in shard-1.json: every shard holds the whole \
         scenario's load, the same in each"
    );
    let mut repeated = shard(0, 2, 10, 0);
    let sample = cargo_loadbench::RunSample::of(&repeated.results.scenarios[0]);
    repeated.results.scenarios[0].runs = vec![sample.clone(), sample];
    assert_eq!(
        refusal(vec![repeated, shard(1, 2, 10, 0)]),
        "shard-0.json holds 2 runs of `hello` (--runs 2): merge shards of single runs"
    );
    let mut elsewhere = shard(1, 2, 10, 0);
    elsewhere.results.scenarios[0].started_unix_ms = Some(90_000_000);
    assert_eq!(
        refusal(vec![shard(0, 2, 10, 0), elsewhere]),
        "the shards of `hello` started 25 hours apart: not one run (start them together, with --start-at)"
    );
}

#[test]
fn latencies_without_histograms_are_refused() {
    let without = "was written without histograms: run the shards with a loadbench that writes them";
    let mut bare = shard(1, 2, 10, 0);
    if let Some(l) = &mut bare.results.scenarios[0].latency_us {
        l.histogram = None;
    }
    assert_eq!(refusal(vec![shard(0, 2, 10, 0), bare]), format!("shard-1.json: the latency of `hello` {without}"));
    let mut bare_step = shard(1, 2, 10, 0);
    if let Some(l) = &mut bare_step.results.scenarios[0].steps[0].latency_us {
        l.histogram = None;
    }
    assert_eq!(
        refusal(vec![shard(0, 2, 10, 0), bare_step]),
        format!("shard-1.json: the latency of step `pay` of `hello` {without}")
    );
    let mut unplaced = shard(1, 2, 10, 0);
    unplaced.results.scenarios[0].started_unix_ms = None;
    assert!(refusal(vec![shard(0, 2, 10, 0), unplaced]).starts_with("shard-1.json: `hello` has no started_unix_ms"));
    let mut garbled = shard(1, 2, 10, 0);
    if let Some(l) = &mut garbled.results.scenarios[0].latency_us {
        l.histogram = Some("aGVsbG8=".into());
    }
    assert!(
        refusal(vec![shard(0, 2, 10, 0), garbled])
            .starts_with("shard-1.json: the latency of `hello` has an unreadable histogram: not an HdrHistogram")
    );
}

#[test]
fn a_single_run_held_in_runs_merges_into_one_run() {
    // As `cargo loadbench` writes a run: the run in `runs` and the summary, both with histograms.
    let as_written = |index: u32| {
        let mut shard = shard(index, 2, 10, 0);
        let s = &mut shard.results.scenarios[0];
        s.runs = vec![cargo_loadbench::RunSample::of(s)];
        shard
    };
    let results = merged(vec![as_written(0), as_written(1)]).results;
    let s = &results.scenarios[0];
    let all: Vec<u64> = samples(0, 10).into_iter().chain(samples(1, 10)).collect();
    assert_eq!((&s.latency_us, &s.steps[0].latency_us), (&latency(&all), &latency(&all)));
    assert_eq!(s.runs.len(), 1, "the merged run, as one run");
    assert_eq!(s.runs[0].latency_us, latency(&all));
}
