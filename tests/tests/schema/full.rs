//! A results document with every part present: every `Option` is `Some`, every `Vec` and map has
//! an entry, built from the Rust types field by field, never with `..Default::default()`, so
//! that a field added to one of them stops this file compiling until it is filled in here, and
//! then fails the schema's test until the schema describes it.

use std::collections::BTreeMap;

use cargo_loadbench::{
    Commit, Commits, ComparedMetric, Comparison, Method, MetricChange, Results, RowComparison, RowSample, RunSample,
    ScenarioResult, ScenarioVerdict, Verdict, VerdictStatus,
};
use loadbench::feed::{FeedEnd, FeedMode};
use loadbench::report::{
    Causes, CheckReport, ConfigReport, ErrorCause, ErrorCounts, FeedConfigReport, FeedRanOut, GateReport,
    GeneratorLimit, GeneratorReport, HookReport, HttpReport, HttpVersion, LatencyReport, MachineInfo, NothingListening,
    QuicReport, RateReport, RemoteWriteReport, RunReport, SCHEMA_VERSION, ScenarioReport, ShardReport, ShareReport,
    SpectrumPoint, StartReport, StepReport, ThresholdOutcome, TimelineSecond, TlsConfigReport, TlsReport, ToolInfo,
    Warning, WarningKind, WatchReport, WatchSample,
};
use loadbench::threshold::{Metric, Op, RowThreshold, Threshold};

/// An HdrHistogram in the V2 deflate encoding, base64: the JSON Schema only checks it is a string.
const HISTOGRAM: &str = "HISTFAAAAB54nJNpmSzMwMDAxAABzFCaEUzOmgUROwAK4gG/";

/// `cargo loadbench`'s results with one entry, every part of it present.
pub fn results() -> Results {
    run_report(vec![scenario_result()])
}

/// The header of a document with `scenarios` as its entries.
pub fn run_report<S>(scenarios: Vec<S>) -> RunReport<S> {
    RunReport {
        schema_version: SCHEMA_VERSION,
        tool: ToolInfo { name: "loadbench".into(), version: "0.1.0".into() },
        started_at: "2026-12-01T01:02:03Z".into(),
        machine: MachineInfo {
            os: "linux".into(),
            arch: "x86_64".into(),
            cpus: 2,
            hostname: Some("ci-runner".into()),
            kernel: Some("6.1.0".into()),
        },
        interrupted: true,
        shard: Some(ShardReport { index: 1, count: 3 }),
        start: Some(StartReport { at: "2026-12-01T01:02:00.000Z".into(), late_ms: 12 }),
        run_id: Some("loadbench-20261201-010100".into()),
        gate: Some(GateReport {
            baseline: Some("main".into()),
            fail_on_regression: true,
            fail_on_warning: true,
            allow_inconclusive: true,
            allow_failures: true,
            no_gate: true,
        }),
        scenarios,
    }
}

/// One entry of `cargo loadbench`'s results, every part present.
pub fn scenario_result() -> ScenarioResult {
    ScenarioResult {
        report: scenario_report(),
        bench: Some("api".into()),
        package: Some("shop".into()),
        target_name: Some("candidate".into()),
        runs: vec![run_sample()],
        comparison: Some(comparison("main", Verdict::Regressed, Method::Paired)),
        side_by_side: Some(comparison("current", Verdict::Improved, Method::SingleRun)),
        verdict: Some(ScenarioVerdict {
            status: VerdictStatus::Inconclusive,
            reasons: vec!["reached 498/s of the 500/s asked, 99.6% (limit: at least 99.9%)".into()],
        }),
    }
}

fn run_sample() -> RunSample {
    RunSample {
        started_at: "2026-12-01T01:02:03Z".into(),
        duration_us: 2_000_000,
        iterations: 1_000,
        failed: 3,
        ok: Some(997),
        rps: 498.5,
        latency_us: Some(latency()),
        steps: vec![row_sample("pay")],
        requests: vec![row_sample("GET /items/{id}")],
    }
}

fn commit(sha: &str, subject: &str, uncommitted: bool) -> Commit {
    Commit { sha: sha.repeat(40 / sha.len()), short: sha.repeat(7 / sha.len()), subject: subject.into(), uncommitted }
}

fn row_sample(name: &str) -> RowSample {
    RowSample { name: name.into(), iterations: 1_000, ok: 997, failed: 3, latency_us: Some(latency()) }
}

fn comparison(baseline: &str, verdict: Verdict, method: Method) -> Comparison {
    Comparison {
        steps: vec![RowComparison { name: "pay".into(), comparison: row_comparison(baseline, verdict, method) }],
        requests: vec![RowComparison {
            name: "GET /items/{id}".into(),
            comparison: row_comparison(baseline, verdict, method),
        }],
        ..row_comparison(baseline, verdict, method)
    }
}

/// A row's comparison: a comparison without rows of its own.
fn row_comparison(baseline: &str, verdict: Verdict, method: Method) -> Comparison {
    Comparison {
        baseline: baseline.into(),
        verdict,
        reason: Some("a different load".into()),
        method,
        noise_threshold: 0.05,
        baseline_runs: 5,
        runs: 5,
        metrics: ComparedMetric::ALL
            .into_iter()
            .map(|metric| MetricChange {
                metric,
                old: 1_000.0,
                new: 1_100.0,
                change: 0.1,
                confidence_interval: Some([0.06, 0.14]),
                verdict: Verdict::NoChange,
            })
            .collect(),
        steps: Vec::new(),
        requests: Vec::new(),
        baseline_spectrum: spectrum(),
        commits: Some(Commits { base: commit("a", "Add a cache", false), head: commit("b", "Cache more", true) }),
        base_runs: vec![run_sample()],
    }
}

/// One scenario's report as a bench binary writes it, every part present.
pub fn scenario_report() -> ScenarioReport {
    let errors = ErrorCounts {
        connect: 1,
        timeout: 1,
        status: 1,
        io: 1,
        scenario: 1,
        body_too_large: 1,
        tls: 1,
        panic: 1,
        stream_reset: 1,
        protocol: 1,
        quic_handshake_timeout: 1,
        quic_idle_timeout: 1,
        quic_application_close: 1,
        custom: 1,
    };
    ScenarioReport {
        name: "checkout".into(),
        config: config(),
        started_at: "2026-12-01T01:02:03Z".into(),
        started_unix_ms: Some(1_796_086_923_000),
        share: Some(ShareReport { concurrency: 4, count: Some(334), rate: Some(166.5), first_user: 4 }),
        duration_us: 2_000_000,
        interrupted: true,
        setup_error: Some("no such host".into()),
        iterations: 1_000,
        ok: 992,
        failed: 8,
        errors,
        causes: causes(),
        http: HttpReport {
            responses: 999,
            bytes_received: 20_000,
            status: BTreeMap::from([(200, 998), (503, 1)]),
            connections: 10,
            retries: 1,
            redirects: 2,
            version: Some(HttpVersion::Http2),
        },
        latency_us: Some(latency()),
        rps: 496.0,
        attempts_per_sec: 500.0,
        generator: Some(GeneratorReport {
            worker_threads: 2,
            cpu_seconds: Some(0.4),
            cpu_utilization: Some(0.1),
            lag_p99_us: Some(120),
            lag_max_us: Some(900),
            saturated: true,
            waited_for_cpu: Some(0.4),
            limit: Some(GeneratorLimit::MachineBusy),
            read_delay_p99_us: Some(3_100),
            read_delay_max_us: Some(5_200),
            late_reads: true,
        }),
        watched: vec![WatchReport {
            name: "server".into(),
            pid: 4242,
            cpu_avg_percent: Some(80.0),
            cpu_peak_percent: Some(150.0),
            rss_start_bytes: Some(1 << 20),
            rss_peak_bytes: Some(3 << 20),
            rss_end_bytes: Some(2 << 20),
            note: Some("it exited mid-run".into()),
            series: vec![WatchSample { second: 0, cpu_percent: Some(75.5), rss_bytes: Some(2 << 20) }],
        }],
        thresholds: thresholds()
            .into_iter()
            .map(|threshold| ThresholdOutcome::scenario(threshold, Some(1.0), true))
            // The second row's name was not recorded (every field present, so its figure too).
            .chain(row_thresholds().into_iter().enumerate().map(|(i, t)| ThresholdOutcome {
                threshold: t.threshold,
                actual: Some(1.0),
                passed: i == 0,
                row: Some(t.row.into_owned()),
                row_missing: i == 1,
            }))
            .collect(),
        dropped: 1,
        cancelled: 1,
        warmup_iterations: 50,
        rate: Some(RateReport { requested: 500.0, achieved: 498.0 }),
        timeline: vec![TimelineSecond {
            second: 0,
            requests: 500,
            errors: 4,
            dropped: 1,
            p50_us: Some(1_100.0),
            p90_us: Some(1_900.0),
            p99_us: Some(4_500.0),
            histogram: Some(HISTOGRAM.into()),
        }],
        steps: vec![step("insert")],
        requests: vec![step("GET /items/{id}")],
        checks: vec![CheckReport { name: "has id".into(), passes: 990, fails: 2 }],
        user_setup: Some(HookReport { runs: 10, failed: 1, first_error: Some("login refused".into()) }),
        user_teardown: Some(HookReport { runs: 10, failed: 0, first_error: Some("logout refused".into()) }),
        connect_us: Some(latency()),
        tls_handshake_us: Some(latency()),
        quic: Some(QuicReport {
            zero_rtt_offered: 4,
            zero_rtt_accepted: 3,
            zero_rtt_us: Some(latency()),
            ttfb_us: Some(latency()),
        }),
        tls: Some(TlsReport {
            handshakes: 10,
            resumed: 2,
            versions: BTreeMap::from([("TLSv1.3".to_owned(), 10)]),
            unverified: 3,
            wrong_name: 1,
            ca_as_server: 1,
        }),
        warnings: vec![
            Warning { kind: WarningKind::NoRequests, message: "no HTTP exchange".into() },
            Warning { kind: WarningKind::TooFast, message: "faster than a round trip".into() },
        ],
        feed_ran_out: Some(FeedRanOut { records: 100, not_started: 900 }),
        // The generator's conditions are described with the verdict's fields.
        inconclusive: vec![ThresholdOutcome::scenario(
            Threshold { metric: Metric::Rate, op: Op::Ge, value: 0.999 },
            Some(0.996),
            false,
        )],
        not_started: 700,
        nothing_listening: Some(NothingListening { address: "127.0.0.1:18008".into(), refused: 256 }),
        remote_write: Some(RemoteWriteReport {
            url: "http://127.0.0.1:9090/api/v1/write".into(),
            samples_sent: 1_200,
            samples_dropped: 40,
            first_error: Some("HTTP 503 Service Unavailable".into()),
        }),
    }
}

fn config() -> ConfigReport {
    ConfigReport {
        concurrency: 10,
        rate: Some(500.0),
        count: Some(1_000),
        duration_ms: Some(2_000),
        timeout_ms: 30_000,
        grace_ms: 5_000,
        warmup_count: Some(50),
        warmup_ms: Some(1_000),
        think_time_ms: Some((10, 20)),
        stages: vec![(1_000, 10), (2_000, 0)],
        rate_stages: vec![(1_000, 500)],
        group: Some("mixed".into()),
        scale: Some(0.1),
        target: Some("https://127.0.0.1:8443".into()),
        connect_to: Some("127.0.0.1:8443".into()),
        tls: Some(TlsConfigReport {
            insecure: false,
            cacert: vec!["ca.pem".into()],
            client_cert: Some("client.pem".into()),
            resumption: true,
        }),
        thresholds: thresholds(),
        row_thresholds: row_thresholds(),
        feed: Some(FeedConfigReport {
            path: "data/users.csv".into(),
            mode: FeedMode::PerUser,
            end: FeedEnd::Stop,
            records: 100,
        }),
        connections: Some(4),
        pipeline: Some(16),
        // Both protocols asked, which no run does: a document with every part present has every
        // flag of the config, and the schema describes each alone.
        http2: true,
        http3: true,
    }
}

/// A threshold on every named metric and on two other percentiles, with every comparison.
pub fn thresholds() -> Vec<Threshold> {
    let others = ["p75", "p99_99", "p0_5"].map(|name| name.parse::<Metric>().unwrap_or_else(|e| panic!("{e}")));
    Metric::ALL
        .into_iter()
        .chain(others)
        .zip(Op::ALL.into_iter().cycle())
        .map(|(metric, op)| Threshold { metric, op, value: 1.0 })
        .collect()
}

/// A threshold on a step and on a named request.
pub fn row_thresholds() -> Vec<RowThreshold> {
    [("insert", "p99 < 5ms"), ("GET /items/{id}", "error_rate <= 1%")]
        .map(|(row, t)| RowThreshold::new(row, t.parse().unwrap_or_else(|e| panic!("{t}: {e}"))))
        .map(|t| t.unwrap_or_else(|e| panic!("{e}")))
        .to_vec()
}

/// Causes of every kind: a list holds at most 10, so a scenario's has the first 10 kinds and a
/// row's the last 10, which together are all of them.
fn causes() -> Causes {
    causes_of(&KINDS[..10])
}

fn row_causes() -> Causes {
    causes_of(&KINDS[KINDS.len() - 10..])
}

const KINDS: [&str; 14] = [
    "connect",
    "timeout",
    "status",
    "io",
    "scenario",
    "body_too_large",
    "tls",
    "panic",
    "stream_reset",
    "protocol",
    "quic_handshake_timeout",
    "quic_idle_timeout",
    "quic_application_close",
    "custom",
];

fn causes_of(names: &[&str]) -> Causes {
    Causes {
        top: names
            .iter()
            .map(|kind| ErrorCause { kind: (*kind).into(), message: format!("{kind}: went wrong"), count: 1 })
            .collect(),
        others: 2,
    }
}

fn step(name: &str) -> StepReport {
    StepReport {
        name: name.into(),
        iterations: 1_000,
        ok: 992,
        failed: 8,
        errors: ErrorCounts {
            connect: 0,
            timeout: 0,
            status: 8,
            io: 0,
            scenario: 0,
            body_too_large: 0,
            tls: 0,
            panic: 0,
            stream_reset: 0,
            protocol: 0,
            quic_handshake_timeout: 0,
            quic_idle_timeout: 0,
            quic_application_close: 0,
            custom: 0,
        },
        causes: row_causes(),
        latency_us: Some(latency()),
    }
}

fn spectrum() -> Vec<SpectrumPoint> {
    vec![SpectrumPoint { percentile: 0.0, value_us: 400.0 }, SpectrumPoint { percentile: 100.0, value_us: 12_000.0 }]
}

fn latency() -> LatencyReport {
    LatencyReport {
        mean: 1_200.5,
        stdev: 300.25,
        min: 400.0,
        p50: 1_100.0,
        p90: 1_900.0,
        p95: 2_300.0,
        p99: 4_500.0,
        p99_9: 9_000.0,
        max: 12_000.0,
        percentiles: BTreeMap::from([("p75".to_owned(), 1_500.0), ("p99_99".to_owned(), 11_000.0)]),
        spectrum: spectrum(),
        histogram: Some(HISTOGRAM.into()),
    }
}
