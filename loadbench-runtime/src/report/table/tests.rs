use super::*;
use crate::report::{ErrorCounts, HttpReport, LatencyReport, MachineInfo, SCHEMA_VERSION, ToolInfo};

fn config() -> ConfigReport {
    ConfigReport {
        concurrency: 20,
        count: Some(500),
        timeout_ms: 30_000,
        target: Some("http://127.0.0.1:8080".into()),
        ..ConfigReport::default()
    }
}

fn scenario(name: &str) -> ScenarioReport {
    // Only the figures the table shows; every other field as before the scenario ran.
    let mut s = ScenarioReport::not_started(name, config());
    s.started_at = "2026-01-01T00:00:00Z".into();
    s.duration_us = 40_500;
    (s.iterations, s.ok) = (12_500, 12_500);
    s.http = HttpReport {
        responses: 12_500,
        bytes_received: 250_000,
        status: [(200, 12_500)].into_iter().collect(),
        connections: 20,
        retries: 0,
        redirects: 0,
        version: None,
    };
    s.latency_us = Some(LatencyReport {
        mean: 900.0,
        stdev: 100.0,
        min: 120.0,
        p50: 812.0,
        p90: 1_100.0,
        p95: 1_240.0,
        p99: 12_400.0,
        p99_9: 20_000.0,
        max: 3_100_000.0,
        percentiles: [("p75".to_owned(), 1_000.0)].into_iter().collect(),
        spectrum: Vec::new(),
        histogram: None,
    });
    s.rps = 12_345.4;
    s
}

fn report(scenarios: Vec<ScenarioReport>) -> RunReport {
    RunReport {
        schema_version: SCHEMA_VERSION,
        tool: ToolInfo { name: "loadbench".into(), version: "0.1.0".into() },
        started_at: "2026-01-01T00:00:00Z".into(),
        machine: MachineInfo { os: "linux".into(), arch: "x86_64".into(), cpus: 4, hostname: None, kernel: None },
        interrupted: false,
        shard: None,
        start: None,
        run_id: None,
        gate: None,
        scenarios,
    }
}

/// The cells of the table's row whose first cell is `name`.
fn cells(table: &str, name: &str) -> Vec<String> {
    table
        .lines()
        .map(|line| line.trim_matches('|').split('|').map(|c| c.trim().to_owned()).collect::<Vec<_>>())
        .find(|cells| cells.first().is_some_and(|c| c == name))
        .unwrap_or_else(|| panic!("no row `{name}` in\n{table}"))
}

#[test]
fn a_row_holds_every_figure_in_human_units() {
    let out = render(&report(vec![scenario("hello")]));
    assert_eq!(cells(&out, "scenario"), header(&LatencyColumns::default()));
    assert_eq!(header(&LatencyColumns::default())[5..9], ["p50", "p95", "p99", "max"]);
    assert_eq!(
        cells(&out, "hello"),
        ["hello", "12,500", "0", "12,500", "308,642", "812µs", "1.24ms", "12.4ms", "3.10s", "250.0 kB"]
    );
    // A clean run adds nothing below the table.
    assert!(out.trim_end().ends_with('+'), "{out}");
    assert!(!out.contains('\x1b'), "no ANSI escapes: {out:?}");
}

#[test]
fn an_open_model_says_what_rate_it_achieved_and_what_it_dropped() {
    let mut s = scenario("search");
    s.config.rate = Some(2_000.0);
    s.config.concurrency = 50;
    s.rate = Some(crate::report::RateReport { requested: 2_000.0, achieved: 1_950.4 });
    s.dropped = 250;
    let out = render(&report(vec![s.clone()]));
    assert!(
        out.contains(
            "search: open model: 2,000/s requested, 1,950/s achieved, 250 dropped (2.0%): no virtual user was free\n"
        ),
        "{out}"
    );
    assert!(
        describe_config(&s.config).starts_with("rate 2,000/s, max_concurrency 50, count 500"),
        "{}",
        describe_config(&s.config)
    );
    s.dropped = 0;
    assert!(render(&report(vec![s])).contains("search: open model: 2,000/s requested, 1,950/s achieved\n"));
}

#[test]
fn steps_are_indented_rows_under_their_scenario() {
    let mut s = scenario("journey");
    let latency = s.latency_us.clone();
    s.steps = ["insert", "query"]
        .into_iter()
        .map(|name| StepReport {
            name: name.into(),
            iterations: 12_500,
            ok: 12_490,
            failed: 10,
            errors: ErrorCounts { status: 10, ..ErrorCounts::default() },
            causes: Default::default(),
            latency_us: latency.clone(),
        })
        .collect();
    let out = render(&report(vec![s, scenario("after")]));
    let lines: Vec<&str> = out.lines().collect();
    let at = |needle: &str| lines.iter().position(|l| l.contains(needle)).unwrap_or_else(|| panic!("{needle}: {out}"));
    assert!(
        at("| journey ") < at("└ insert") && at("└ insert") < at("└ query") && at("└ query") < at("| after "),
        "{out}"
    );
    assert_eq!(
        cells(&out, "└ insert"),
        ["└ insert", "12,500", "10", "-", "308,395", "812µs", "1.24ms", "12.4ms", "3.10s", "-"],
        "a step's rate counts its successful runs, as a scenario's rps does"
    );
}

#[test]
fn a_journey_shows_its_iterations_and_http_requests_apart() {
    // Three requests an iteration: 1,000 iterations are 3,000 HTTP requests, in 5 s.
    let mut s = scenario("journey");
    s.duration_us = 5_000_000;
    (s.iterations, s.ok) = (1_000, 1_000);
    s.rps = 200.0;
    s.http.responses = 3_000;
    s.http.status = [(200, 3_000)].into_iter().collect();
    let out = render(&report(vec![s]));
    assert_eq!(cells(&out, "scenario")[1..5], ["iterations", "failed", "responses", "req/s"]);
    assert_eq!(cells(&out, "journey")[1..5], ["1,000", "0", "3,000", "600"], "req/s is HTTP requests per second");
}

#[test]
fn a_step_that_never_succeeded_shows_no_rate() {
    let mut s = scenario("checkout");
    s.duration_us = 1_000_000;
    s.steps = vec![StepReport {
        name: "pay".into(),
        iterations: 13_962,
        ok: 0,
        failed: 13_962,
        errors: ErrorCounts { status: 13_962, ..ErrorCounts::default() },
        causes: Default::default(),
        latency_us: None,
    }];
    s.requests = vec![StepReport { name: "POST /pay".into(), ok: 6_981, failed: 6_981, ..s.steps[0].clone() }];
    let out = render(&report(vec![s]));
    assert_eq!(cells(&out, "└ pay")[1..5], ["13,962", "13,962", "-", "0.0"], "{out}");
    assert_eq!(cells(&out, &format!("{} POST /pay", named::REQUEST_MARKER))[1..5], ["13,962", "6,981", "-", "6,981"]);
}

#[test]
fn a_count_of_failures_is_never_read_as_a_status() {
    // 500 iterations failed on a 404: the line must not say `status 500`.
    let mut s = scenario("lost");
    (s.iterations, s.ok, s.failed) = (500, 0, 500);
    s.errors.status = 500;
    s.http.status = [(404, 500)].into_iter().collect();
    let out = render(&report(vec![s]));
    assert!(out.contains("lost: 500 of 500 iterations failed: 500 × status; "), "{out}");
    assert!(out.contains("; HTTP status 404 ×500\n"), "{out}");
    assert!(!out.contains("status 500"), "{out}");
}

#[test]
fn percentiles_choose_the_latency_columns_of_every_row() {
    let mut s = scenario("journey");
    s.steps = vec![StepReport {
        name: "insert".into(),
        iterations: 10,
        ok: 10,
        failed: 0,
        errors: ErrorCounts::default(),
        causes: Default::default(),
        latency_us: s.latency_us.clone(),
    }];
    let columns = LatencyColumns::new(crate::cli::parse_percentiles("75,90,99.9,99.99").unwrap_or_default());
    let out = render_with(&report(vec![s]), &columns);
    assert_eq!(
        cells(&out, "scenario"),
        ["scenario", "iterations", "failed", "responses", "req/s", "p75", "p90", "p99.9", "p99.99", "max", "bytes"]
    );
    // A percentile the run did not compute is `-`, not a guess.
    assert_eq!(cells(&out, "journey")[5..10], ["1.00ms", "1.10ms", "20.0ms", "-", "3.10s"]);
    assert_eq!(cells(&out, "└ insert")[5..11], ["1.00ms", "1.10ms", "20.0ms", "-", "3.10s", "-"]);
}

#[test]
fn a_warning_is_a_line_under_its_scenario() {
    let mut s = scenario("forgot_send");
    s.http = HttpReport::default();
    s.warnings = crate::report::warnings::detect(&s);
    let out = render(&report(vec![s, scenario("sound")]));
    assert!(
        out.contains(
            "\nforgot_send: warning: 12,500 iterations succeeded without a single HTTP exchange (no response, no \
             connection): did the body forget `.send().await`?"
        ),
        "{out}"
    );
    assert!(!out.contains("sound: warning"), "{out}");
}

#[test]
fn a_group_gets_a_line_with_its_totals() {
    let mut insert = scenario("insert");
    insert.config.group = Some("shop".into());
    let mut query = scenario("query");
    query.config.group = Some("shop".into());
    query.iterations = 500;
    query.failed = 5;
    query.http.responses = 1_500;
    let out = render(&report(vec![insert.clone(), query, scenario("alone")]));
    assert!(
        out.contains(
            "\ngroup shop (insert + query, together): 13,000 iterations, 5 failed, 14,000 responses, 345,679 req/s\n"
        ),
        "{out}"
    );
    assert!(!render(&report(vec![insert])).contains("group shop"), "a group of one is a scenario");
}

#[test]
fn output_does_not_depend_on_the_terminal() {
    // Long cells stay whole: no width detection squeezes or wraps them.
    let mut s = scenario("a_scenario_with_a_rather_long_name_that_would_not_fit_a_narrow_terminal_at_all");
    s.http.responses = 40_500_000;
    let out = render(&report(vec![s.clone()]));
    assert!(out.contains(&s.name), "{out}");
    assert!(out.contains("1,000,000,000"), "{out}");
    assert_eq!(out, render(&report(vec![s])));
}

#[test]
fn failures_are_listed_by_kind_with_status_counts() {
    let mut s = scenario("checkout");
    s.iterations = 500;
    s.ok = 480;
    s.failed = 20;
    s.errors = ErrorCounts {
        connect: 3,
        timeout: 0,
        status: 15,
        io: 1,
        scenario: 0,
        body_too_large: 1,
        tls: 0,
        panic: 0,
        stream_reset: 0,
        protocol: 0,
        quic_handshake_timeout: 0,
        quic_idle_timeout: 0,
        quic_application_close: 0,
        custom: 0,
    };
    s.http.status = [(200, 480), (503, 15)].into_iter().collect();
    (s.rps, s.attempts_per_sec) = (480.0, 500.0);
    let cause = |kind: &str, message: &str, count| crate::report::ErrorCause {
        kind: kind.into(),
        message: message.into(),
        count,
    };
    s.causes.top = vec![cause("status", "expected status 200, got 503", 15), cause("connect", "cannot connect", 3)];
    s.causes.others = 2;
    let out = render(&report(vec![scenario("hello"), s]));
    let causes = [
        "HTTP status 200 ×480, 503 ×15",
        "checkout: causes: 15 × status: expected status 200, got 503",
        "                   3 × connect: cannot connect",
        "                  … and 2 more failures with other messages\n",
    ];
    assert!(out.contains(&causes.join("\n")), "the causes follow their scenario's failure line: {out}");
    assert_eq!(cells(&out, "checkout")[1..4], ["500", "20", "12,500"]);
    assert!(
        out.contains(
            "checkout: 20 of 500 iterations failed: 3 × connect, 15 × status, 1 × io, 1 × body_too_large; 500 \
             iterations/s attempted, 480/s succeeded; HTTP status 200 ×480, 503 ×15"
        ),
        "{out}"
    );
    assert!(!out.contains("hello:"), "a clean scenario gets no failure line: {out}");
}

#[test]
fn non_2xx_responses_are_shown_even_without_failures() {
    let mut s = scenario("lenient");
    s.http.status = [(200, 12_000), (404, 500)].into_iter().collect();
    let out = render(&report(vec![s]));
    assert!(out.contains("lenient: HTTP status 200 ×12,000, 404 ×500"), "{out}");
}

#[test]
fn a_scenario_that_did_not_run_says_why() {
    let mut s = scenario("big");
    s.setup_error = Some("concurrency 100000 needs 100064 file descriptors".into());
    s.iterations = 0;
    s.latency_us = None;
    let out = render(&report(vec![scenario("hello"), s]));
    let row = cells(&out, "big");
    assert_eq!(row[1], "did not run");
    assert!(row[2..].iter().all(|c| c == "-"), "{row:?}");
    assert!(out.contains("big: did not run: concurrency 100000 needs 100064 file descriptors"), "{out}");
}

#[test]
fn cancelled_iterations_are_said_apart_from_failures() {
    let mut s = scenario("hello");
    s.cancelled = 4;
    s.config.grace_ms = 500;
    let out = render(&report(vec![s.clone()]));
    assert!(out.contains("hello: 4 iterations cancelled: still in flight when the 500ms grace period ended"), "{out}");
    s.cancelled = 0;
    assert!(!render(&report(vec![s])).contains("cancelled"));
}

#[test]
fn interrupted_and_all_failed_scenarios_are_marked() {
    let mut s = scenario("hello");
    s.interrupted = true;
    s.latency_us = None;
    s.ok = 0;
    s.failed = s.iterations;
    s.errors.connect = s.iterations;
    let out = render(&report(vec![s]));
    let row = cells(&out, "hello (interrupted)");
    assert_eq!(row[5..9], ["-", "-", "-", "-"], "no latency without a success");
}

#[test]
fn an_empty_report_says_so() {
    assert_eq!(render(&report(Vec::new())), "no scenarios ran\n");
}

#[test]
fn config_descriptions() {
    assert_eq!(describe_config(&config()), "concurrency 20, count 500, timeout 30s, target http://127.0.0.1:8080");
    let by_time = ConfigReport {
        concurrency: 10,
        count: None,
        duration_ms: Some(90_000),
        timeout_ms: 2_500,
        ..ConfigReport::default()
    };
    assert_eq!(describe_config(&by_time), "concurrency 10, duration 1m 30s, timeout 2s 500ms");
    let shared = ConfigReport { connections: Some(16), pipeline: Some(16), concurrency: 256, ..by_time.clone() };
    assert_eq!(
        describe_config(&shared),
        "concurrency 256, connections 16, pipeline 16, duration 1m 30s, timeout 2s 500ms"
    );
    let h2 = ConfigReport { connections: Some(10), http2: true, concurrency: 1000, ..by_time.clone() };
    assert_eq!(describe_config(&h2), "concurrency 1000, connections 10, http2, duration 1m 30s, timeout 2s 500ms");
    let h3 = ConfigReport { connections: Some(10), http3: true, concurrency: 1000, ..by_time.clone() };
    assert_eq!(describe_config(&h3), "concurrency 1000, connections 10, http3, duration 1m 30s, timeout 2s 500ms");
    let mut guarded = config();
    guarded.thresholds = vec![threshold("p99<50ms"), threshold("error_rate<0.01")];
    assert!(
        describe_config(&guarded)
            .ends_with(", target http://127.0.0.1:8080, thresholds [p99 < 50ms, error_rate < 0.01]"),
        "{}",
        describe_config(&guarded)
    );
}

fn threshold(text: &str) -> loadbench_grammar::Threshold {
    text.parse().unwrap_or_else(|e| panic!("{text}: {e}"))
}

#[test]
fn thresholds_are_listed_below_the_table() {
    let mut met = scenario("met");
    met.config.thresholds = vec![threshold("p99<50ms"), threshold("rps>100")];
    met.thresholds = crate::report::check::evaluate(&met);
    let mut missed = scenario("missed");
    missed.config.thresholds = vec![threshold("p50<500us"), threshold("p99<1ms"), threshold("failed<=0")];
    missed.thresholds = crate::report::check::evaluate(&missed);
    let out = render(&report(vec![met, missed, scenario("unguarded")]));
    assert!(out.contains("\nmet: thresholds met: p99 < 50ms, rps > 100\n"), "{out}");
    assert!(out.contains("\nmissed: thresholds failed: p50 < 500us (was 812µs), p99 < 1ms (was 12.4ms)\n"), "{out}");
    assert!(!out.contains("unguarded:"), "{out}");
}

#[test]
fn an_http3_scenario_says_quic_s_figures_under_its_row() {
    let mut s = scenario("quic");
    s.config.http3 = true;
    s.config.target = Some("https://localhost:4433".into());
    s.http.version = Some(crate::report::HttpVersion::Http3);
    s.tls_handshake_us = s.latency_us.clone();
    s.quic = Some(crate::report::QuicReport {
        zero_rtt_offered: 5,
        zero_rtt_accepted: 5,
        zero_rtt_us: None,
        ttfb_us: s.latency_us.clone(),
    });
    let out = render(&report(vec![s]));
    let lines: Vec<&str> = out.lines().filter(|l| l.starts_with("quic: ")).collect();
    assert_eq!(
        lines,
        [
            "quic: HTTP/3, one connection per user",
            "quic: connections: 20 opened; QUIC handshake p50 812µs, p99 12.4ms",
            "quic: 0-RTT: 5 of 20 connections offered early data, 5 accepted; time to first byte p50 812µs, p99 12.4ms",
        ],
        "{out}"
    );
}
