// Over 500 lines because the page is checked as a whole: every chart, its policy, escaping and size.
//! The page as a whole: every chart present and drawn, the policy's hashes those of the inline
//! style and script, nothing from the network, hostile names escaped, long runs still small.

use base64::Engine as _;
use cargo_loadbench::{Results, RunSample, ScenarioResult};
use loadbench::report::{
    Causes, CheckReport, ErrorCause, ErrorCounts, GeneratorLimit, GeneratorReport, LatencyReport, RateReport,
    SpectrumPoint, StepReport, TimelineSecond, WatchReport, WatchSample,
};

use super::axis::nines;
use super::render;
use crate::output::Context;
use crate::output::tests::{sample_report, two_targets_report};

/// Every kind of chart the page draws.
const KINDS: [&str; 8] =
    ["throughput", "latency", "spectrum", "steps-spectrum", "runs", "watch-cpu", "watch-rss", "rate"];

fn timeline(seconds: u64) -> Vec<TimelineSecond> {
    (0..seconds)
        .map(|s| TimelineSecond {
            second: s,
            requests: 200 + s % 7 * 10,
            errors: s % 5,
            dropped: s % 3,
            p50_us: Some(1_000.0 + (s % 10) as f64 * 50.0),
            p90_us: Some(2_000.0 + (s % 10) as f64 * 80.0),
            p99_us: (s % 13 != 0).then_some(5_000.0 + (s % 10) as f64 * 300.0),
            histogram: None,
        })
        .collect()
}

/// A spectrum as the runtime keeps it: percentiles halving the distance to 100 % five steps at a
/// time, then 100 %.
fn spectrum(scale: f64) -> Vec<SpectrumPoint> {
    let mut points: Vec<SpectrumPoint> = (0..40)
        .map(|k| 100.0 * (1.0 - 0.5f64.powf(f64::from(k) / 5.0)))
        .map(|p| SpectrumPoint { percentile: p, value_us: scale * (1.0 + nines(p).unwrap_or(0.0).powi(2)) })
        .collect();
    points.push(SpectrumPoint { percentile: 100.0, value_us: scale * 40.0 });
    points
}

fn latency(p50: f64) -> LatencyReport {
    LatencyReport {
        mean: p50,
        stdev: 1.0,
        min: p50 / 2.0,
        p50,
        p90: p50 * 1.5,
        p95: p50 * 1.8,
        p99: p50 * 2.0,
        p99_9: p50 * 3.0,
        max: p50 * 4.0,
        percentiles: Default::default(),
        spectrum: spectrum(p50),
        histogram: None,
    }
}

fn step(name: &str, p50: f64) -> StepReport {
    StepReport {
        name: name.into(),
        iterations: 300,
        ok: 298,
        failed: 2,
        errors: ErrorCounts { status: 2, ..ErrorCounts::default() },
        causes: Causes {
            top: vec![ErrorCause { kind: "status".into(), message: "503 Service Unavailable".into(), count: 2 }],
            others: 0,
        },
        latency_us: Some(latency(p50)),
    }
}

fn watch(seconds: u64) -> WatchReport {
    WatchReport {
        name: "server".into(),
        pid: 42,
        cpu_avg_percent: Some(120.0),
        cpu_peak_percent: Some(180.0),
        rss_start_bytes: Some(40_000_000),
        rss_peak_bytes: Some(60_000_000),
        rss_end_bytes: Some(55_000_000),
        note: None,
        series: (0..seconds)
            .map(|s| WatchSample {
                second: s,
                cpu_percent: Some(100.0 + (s % 9) as f64 * 10.0),
                rss_bytes: Some(40_000_000 + s * 10_000),
            })
            .collect(),
    }
}

/// The scenario filled in with everything a page can show, over `seconds`.
fn enrich(s: &mut ScenarioResult, seconds: u64) {
    s.timeline = timeline(seconds);
    s.latency_us = Some(latency(s.latency_us.as_ref().map_or(1_000.0, |l| l.p50)));
    s.steps = vec![step("login", 800.0), step("search", 2_500.0)];
    s.requests = vec![step("GET /items/{id}", 400.0)];
    s.watched = vec![watch(seconds)];
    s.errors.status = 3;
    s.failed = 3;
    s.http.status = [(200, 297), (503, 3)].into_iter().collect();
    s.causes = Causes {
        top: vec![ErrorCause { kind: "status".into(), message: "GET /: 503 Service Unavailable".into(), count: 3 }],
        others: 0,
    };
    for (i, run) in s.runs.iter_mut().enumerate() {
        run.rps *= 1.0 + i as f64 * 0.03;
    }
    if let Some(c) = s.comparison.as_mut() {
        c.baseline_spectrum = spectrum(900.0);
    }
}

/// [`sample_report`] with a timeline, spectra, steps, runs and watched series, its last scenario
/// in the open model and its first saturated.
fn full_report(seconds: u64) -> Results {
    let mut report = sample_report();
    for s in &mut report.scenarios {
        enrich(s, seconds);
    }
    let fresh = &mut report.scenarios[2];
    fresh.config.rate = Some(220.0);
    fresh.rate = Some(RateReport { requested: 220.0, achieved: 208.0 });
    fresh.dropped = 12;
    report.scenarios[0].generator = Some(GeneratorReport {
        worker_threads: 2,
        cpu_seconds: Some(2.9),
        cpu_utilization: Some(0.97),
        lag_p99_us: Some(25_000),
        lag_max_us: Some(40_000),
        saturated: true,
        waited_for_cpu: Some(0.01),
        limit: Some(GeneratorLimit::GeneratorCpu),
        read_delay_p99_us: Some(900),
        read_delay_max_us: Some(2_100),
        late_reads: false,
    });
    report
}

fn page(report: &Results) -> String {
    let cx = Context::new(report, 3, Some("main"), false);
    render(&cx).unwrap_or_else(|e| panic!("{e}"))
}

/// Each `<svg class="chart" …>…</svg>` of the page.
fn charts(html: &str) -> Vec<&str> {
    html.split("<svg class=\"chart\"")
        .skip(1)
        .map(|rest| rest.split("</svg></figure>").next().unwrap_or_default())
        .collect()
}

/// The chart's kind.
fn kind(chart: &str) -> &str {
    chart.split("data-chart=\"").nth(1).and_then(|rest| rest.split('"').next()).unwrap_or_default()
}

/// The `d` of each path in `markup`, with its number of points.
fn paths(markup: &str) -> Vec<usize> {
    markup
        .split("<path ")
        .skip(1)
        .filter_map(|p| p.split(" d=\"").nth(1)?.split('"').next())
        .map(|d| d.matches(['M', 'L']).count())
        .collect()
}

/// The text between `open` and `close`.
fn between<'a>(html: &'a str, open: &str, close: &str) -> &'a str {
    html.split(open).nth(1).and_then(|rest| rest.split(close).next()).unwrap_or_default()
}

#[test]
fn a_full_page_draws_every_chart_with_a_switch_per_series() {
    let html = page(&full_report(60));
    let charts = charts(&html);
    let kinds: Vec<&str> = charts.iter().map(|c| kind(c)).collect();
    for expected in KINDS {
        assert!(kinds.contains(&expected), "{expected} in {kinds:?}");
    }
    for chart in &charts {
        assert!(chart.contains("role=\"img\"") && chart.contains("aria-label=\""), "{chart}");
        assert!(paths(chart).iter().any(|&points| points >= 2), "a line in {}", kind(chart));
        let series = chart.matches("class=\"series\"").count();
        assert!(series >= 1, "{}", kind(chart));
        let columns = chart.split("<g class=\"cols\"").nth(1).map_or(0, |cols| cols.matches("<rect ").count());
        let over_time = !matches!(kind(chart), "spectrum" | "steps-spectrum" | "runs");
        assert_eq!(columns > 0, over_time, "a hover column per second over time in {}", kind(chart));
        for i in 0..series {
            assert!(chart.contains(&format!("class=\"series\" data-series=\"{i}\"")), "series {i} of {}", kind(chart));
        }
    }
    // Each figure's legend has as many switches as its chart has series.
    for figure in html.split("<figure class=\"chart-box\"").skip(1) {
        let (legend, chart) = figure.split_once("<svg class=\"chart\"").unwrap_or_default();
        assert_eq!(legend.matches("class=\"legend-item\"").count(), chart.matches("class=\"series\"").count());
    }
    // Sections in order, linked from the contents by number.
    for i in 0..3 {
        assert!(html.contains(&format!("<a href=\"#s{i}\">")) && html.contains(&format!("id=\"s{i}\"")), "s{i}");
    }
    assert!(html.contains("warning: generator busy: its worker threads were at 97% CPU (2 threads)"), "as the table");
    assert!(html.contains("baseline main"), "the baseline's spectrum is drawn and named");
    assert!(html.contains("503 Service Unavailable") && html.contains("threshold met"));
    assert!(
        html.contains("<span class=\"mark fail\" title=\"failed\">✗</span>")
            && html.contains("<h1>loadbench report</h1>")
    );
    assert!(!html.contains("❌") && !html.contains("✅"), "no emoji: a browser without an emoji font shows boxes");
}

#[test]
fn the_policy_names_the_inline_style_and_script_by_their_hashes() {
    let html = page(&full_report(5));
    let head = html.split("<head>\n").nth(1).unwrap_or_default();
    assert!(head.starts_with("<meta http-equiv=\"Content-Security-Policy\" content=\""), "first in <head>: {head}");
    let policy = between(head, "content=\"", "\"");
    let hash = |text: &str| {
        let digest = ring::digest::digest(&ring::digest::SHA256, text.as_bytes());
        base64::engine::general_purpose::STANDARD.encode(digest.as_ref())
    };
    let (style, script) = (between(&html, "<style>", "</style>"), between(&html, "<script>", "</script>"));
    assert!(!style.is_empty() && !script.is_empty());
    assert_eq!(
        policy,
        format!(
            "default-src 'none'; style-src 'sha256-{}'; script-src 'sha256-{}'; img-src data:; base-uri 'none'; form-action 'none'",
            hash(style),
            hash(script)
        )
    );
    assert_eq!(html.matches("<style").count(), 1);
    assert_eq!(html.matches("<script").count(), 1);
    assert!(!html.contains("style=\""), "no inline style attribute");
    let handler = html.match_indices(" on").any(|(at, _)| {
        let rest = &html[at + 3..];
        let name = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_alphabetic()).len();
        name > 0 && rest[name..].starts_with('=')
    });
    assert!(!handler, "no inline event handler");
}

#[test]
fn nothing_comes_from_the_network() {
    let report = full_report(10);
    let html = page(&report);
    // The sample's targets, `http://127.0.0.1:1`, are user data, shown escaped.
    let target = report.scenarios[0].config.target.clone().unwrap_or_default();
    let without_data = html.replace(&super::escape::escape(&target), "");
    for needle in ["http://", "https://", "//", "url(", "@import", "src=", "href=\"h", "xlink"] {
        assert!(!without_data.contains(needle), "{needle}");
    }
}

#[test]
fn an_hour_long_run_stays_small() {
    let html = page(&full_report(3_600));
    assert!(html.len() < 1_000_000, "{} bytes", html.len());
    for chart in charts(&html) {
        let columns = chart
            .split("<g class=\"cols\"")
            .nth(1)
            .map_or(0, |cols| cols.split("</g>").next().unwrap_or_default().matches("<rect ").count());
        assert!(columns <= 300, "{columns} columns in {}", kind(chart));
        for points in paths(chart) {
            assert!(points <= 2 * 300, "{points} points in {}", kind(chart));
        }
    }
    let typical = page(&full_report(60));
    assert!(typical.len() < 300_000, "{} bytes", typical.len());
}

#[test]
fn hostile_names_appear_only_escaped() {
    let mut report = two_targets_report("javascript:alert(1)");
    for s in &mut report.scenarios {
        enrich(s, 3);
        s.name = "<script>alert(1)</script>".into();
        s.steps[0].name = "\"><img src=x onerror=alert(1)>".into();
        s.config.target = Some("javascript:alert(1)".into());
        s.causes.top[0].message = "<iframe src=//evil>'\"".into();
        s.watched[0].name = "</svg><script>x()</script>".into();
    }
    report.scenarios[1].package = Some("<b>pkg</b>".into());
    report.machine.hostname = Some("<host>".into());
    let html = page(&report);
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(html.contains("&quot;&gt;&lt;img src&#61;x onerror&#61;alert(1)&gt;"));
    assert!(html.contains("&lt;iframe src&#61;//evil&gt;&#39;&quot;"));
    assert_eq!(html.to_ascii_lowercase().matches("<script").count(), 1, "the page's own script only");
    for needle in ["<img", "onerror=", "<iframe", "<b>", "<host>", "href=\"javascript", "</svg><script"] {
        assert!(!html.to_ascii_lowercase().contains(needle), "{needle}");
    }
}

#[test]
fn one_scenario_against_several_targets_is_one_section_with_overlaid_curves() {
    let mut report = two_targets_report("slow");
    for s in &mut report.scenarios {
        enrich(s, 20);
    }
    let html = page(&report);
    assert_eq!(html.matches("<section ").count(), 1);
    let throughput = charts(&html).into_iter().find(|c| kind(c) == "throughput").unwrap_or_default();
    assert_eq!(throughput.matches("class=\"series\"").count(), 4, "it/s and errors/s of each target");
    for name in ["fast: it/s", "slow: it/s", "fast: errors/s", "slow: errors/s"] {
        assert!(html.contains(&format!("</svg>{name}</button>")), "{name}");
    }
    assert!(html.contains("Side by side, each target against fast (the first)"));
}

#[test]
fn damaged_figures_draw_without_a_panic_or_a_nan() {
    let mut report = full_report(5);
    let s = &mut report.scenarios[0];
    let first = s.timeline[0].clone();
    s.timeline.push(TimelineSecond { second: u64::MAX, p50_us: Some(f64::NAN), p99_us: Some(f64::INFINITY), ..first });
    s.watched[0].series.push(WatchSample { second: u64::MAX, cpu_percent: Some(f64::NAN), rss_bytes: Some(u64::MAX) });
    s.config.rate_stages = vec![(u64::MAX, 10), (u64::MAX, u64::MAX)];
    s.rps = f64::NAN;
    if let Some(l) = s.latency_us.as_mut() {
        l.spectrum.push(SpectrumPoint { percentile: f64::NAN, value_us: -1.0 });
        l.p99 = f64::INFINITY;
    }
    s.runs[0].rps = f64::NEG_INFINITY;
    report.scenarios[1].setup_error = Some("connection refused".into());
    report.scenarios[1].latency_us = None;
    let html = page(&report);
    assert!(!html.contains("NaN") && !html.contains("inf"), "no number that is not one");
    assert!(html.contains("Did not run: connection refused"));
    assert!(page(&Results::new(std::time::SystemTime::UNIX_EPOCH)).contains("No scenario ran."));
}

#[test]
fn charts_without_data_leave_a_note() {
    let mut report = sample_report();
    report.scenarios.truncate(1);
    report.scenarios[0].runs.clear();
    let html = page(&report);
    assert!(html.contains("no timeline: the run was shorter than a second"), "{html}");
    assert!(html.contains("no spectrum"));
    assert!(charts(&html).is_empty());
}

#[test]
fn the_generator_is_described_as_the_table_describes_it() {
    let mut report = full_report(5);
    // Measured but not what flagged the run: not named.
    assert!(!page(&report).contains("before it was read"));
    let generator = report.scenarios[0].generator.as_mut().expect("the full report's self-check");
    generator.late_reads = true;
    generator.read_delay_p99_us = Some(6_100);
    generator.limit = Some(GeneratorLimit::MachineBusy);
    let line = loadbench::report::inconclusive::saturation_warning(&report.scenarios[0]).expect("a line");
    assert!(line.contains("what the server sent waited 6.10ms (p99) before it was read"), "{line}");
    assert!(page(&report).contains(&super::escape::escape(&line)), "the table's words: {line}");
    // Judged, and alone (nothing else to fail or warn about), the same words are why the run is
    // inconclusive: the headline and the scenario's status.
    report.scenarios.truncate(1);
    report.scenarios[0].comparison = None;
    loadbench::report::check::judge(&mut report.scenarios[0]);
    let html = page(&report);
    let reason = super::escape::escape(line.trim_start_matches("warning: "));
    assert!(html.contains("<p class=\"verdict inconclusive\">"), "the headline");
    assert!(html.contains("<div class=\"status inconclusive\">"), "the scenario's status");
    assert!(html.contains(&format!("<li>{reason}</li>")), "{reason}");
    assert!(!html.contains(&super::escape::escape(&line)), "not a warning any more");
}

/// One scenario of [`sample_report`], run for 5 s (`duration_ms`), its timeline steady at 1,000
/// iterations a second; `tail` iterations still in flight at the deadline end in a sixth second,
/// `drain_us` after it.
fn timed_run(tail: u64, drain_us: u64) -> Results {
    let mut report = sample_report();
    report.scenarios.truncate(1);
    let s = &mut report.scenarios[0];
    s.config.count = None;
    s.config.duration_ms = Some(5_000);
    s.duration_us = 5_000_000 + drain_us;
    s.timeline = (0..5).map(|second| TimelineSecond { second, requests: 1_000, ..timeline(1)[0].clone() }).collect();
    if tail > 0 {
        s.timeline.push(TimelineSecond { second: 5, requests: tail, errors: 0, ..timeline(1)[0].clone() });
    }
    s.runs = vec![RunSample::of(s)];
    report
}

/// The hover titles of the chart of `kind`: each column's heading and values.
fn titles<'a>(html: &'a str, kind_of: &str) -> Vec<&'a str> {
    let chart = charts(html).into_iter().find(|c| kind(c) == kind_of).unwrap_or_default();
    let cols = chart.split("<g class=\"cols\"").nth(1).unwrap_or_default();
    cols.split("<title>").skip(1).filter_map(|t| t.split("</title>").next()).collect()
}

/// The `name: value` of each hover title that has one.
fn values<'a>(titles: &[&'a str], name: &str) -> Vec<&'a str> {
    let prefix = format!("{name}: ");
    titles.iter().filter_map(|t| t.lines().find_map(|l| l.strip_prefix(prefix.as_str()))).collect()
}

#[test]
fn a_drained_last_second_is_not_drawn_as_a_throughput_cliff() {
    // 12 iterations in flight at the 5 s deadline end 30 ms after it: over a second or over the
    // 30 ms, neither is the server's throughput.
    let html = page(&timed_run(12, 30_000));
    let throughput = titles(&html, "throughput");
    assert_eq!(throughput.len(), 6, "a column for each second, the drained one too");
    assert_eq!(values(&throughput, "it/s"), ["1,000"; 5], "the line stops at the load's end: {throughput:?}");
    assert!(
        html.contains(
            "<p class=\"chart-note\">The load ended at 5s; the 12 iterations still in flight then finished over the next 30.0ms. \
             The throughput line stops at the load&#39;s end"
        ),
        "{html}"
    );
    // Their latencies are real, and drawn.
    assert_eq!(values(&titles(&html, "latency"), "p50").len(), 6);
    // A load without a tail has no note.
    let clean = page(&timed_run(0, 0));
    assert_eq!(values(&titles(&clean, "throughput"), "it/s"), ["1,000"; 5]);
    assert!(!clean.contains("still in flight then finished"));
}

#[test]
fn a_last_second_the_load_ran_part_of_is_a_rate_over_that_part() {
    // A count reached half-way into the fifth second: 500 iterations in half a second.
    let mut report = timed_run(0, 0);
    let s = &mut report.scenarios[0];
    s.config.duration_ms = None;
    s.config.count = Some(4_500);
    s.timeline[4].requests = 500;
    s.duration_us = 4_500_000;
    s.runs = vec![RunSample::of(s)];
    assert_eq!(values(&titles(&page(&report), "throughput"), "it/s"), ["1,000"; 5]);
    // Under `--runs 3` the entry's duration is the runs' total, 13.5 s: its last second is still
    // a rate over the half of it that its run (the first) covered.
    let s = &mut report.scenarios[0];
    s.runs = vec![RunSample::of(s); 3];
    for (k, run) in s.runs.iter_mut().enumerate() {
        run.started_at = format!("2026-01-01T12:0{k}:00Z");
    }
    s.started_at = s.runs[0].started_at.clone();
    s.duration_us = 13_500_000;
    assert_eq!(values(&titles(&page(&report), "throughput"), "it/s"), ["1,000"; 5]);
}

#[test]
fn checks_are_listed_by_name_with_their_passes_and_failures() {
    let mut report = sample_report();
    report.scenarios[1].checks = vec![
        CheckReport { name: "status is 200".into(), passes: 200, fails: 0 },
        CheckReport { name: "has <an> id".into(), passes: 1_999, fails: 1 },
    ];
    let html = page(&report);
    // In the scenario's own section, a row per check.
    let section = between(&html, "id=\"s1\"", "</section>");
    assert!(section.contains("<h3>Checks</h3>"), "{section}");
    let row = |cells: [&str; 4]| {
        format!(
            "<tr><td class=\"text\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            cells[0], cells[1], cells[2], cells[3]
        )
    };
    assert!(section.contains(&row(["status is 200", "200", "0", "100.0%"])), "{section}");
    assert!(section.contains(&row(["has &lt;an&gt; id", "1,999", "1", "99.9%"])), "{section}");
    assert_eq!(html.matches("<h3>Checks</h3>").count(), 1, "a scenario without checks has no table");
}

#[test]
fn repeated_runs_are_shown_only_for_several_runs() {
    let mut report = sample_report();
    report.scenarios.truncate(1);
    enrich(&mut report.scenarios[0], 5);
    let several = page(&report);
    assert!(several.contains("<h3>Repeated runs</h3>") && charts(&several).iter().any(|c| kind(c) == "runs"));
    let s = &mut report.scenarios[0];
    s.runs = vec![RunSample::of(s)];
    let single = Context::new(&report, 1, Some("main"), false);
    let html = render(&single).unwrap_or_else(|e| panic!("{e}"));
    assert!(!html.contains("Repeated runs"), "one run is not repeated");
    assert!(!charts(&html).iter().any(|c| kind(c) == "runs"));
}

#[test]
fn the_charts_over_time_say_which_run_they_show() {
    let mut report = full_report(5);
    report.scenarios.truncate(1);
    let s = &mut report.scenarios[0];
    for (k, run) in s.runs.iter_mut().enumerate() {
        run.started_at = format!("2026-01-01T12:0{k}:00Z");
    }
    s.started_at = s.runs[0].started_at.clone();
    let html = page(&report);
    let over_time = between(&html, "<h3>Throughput and latency</h3>\n", "<figure");
    assert_eq!(
        over_time,
        "<p class=\"timeline-run\">Over time: run 1 of 3, the first (seconds of different runs do not line up, \
         so they are not merged; the figures above are the medians across runs).</p>\n"
    );
    // A single run says nothing of runs.
    let s = &mut report.scenarios[0];
    s.runs.truncate(1);
    assert!(!page(&report).contains("Over time:"));
}

#[test]
fn an_http3_scenario_says_so_and_counts_quic_s_failures() {
    let mut report = sample_report();
    let s = &mut report.scenarios[1];
    s.config.http3 = true;
    s.http.version = Some(loadbench::report::HttpVersion::Http3);
    s.errors.quic_idle_timeout = 2;
    s.failed += 2;
    let html = page(&report);
    let section = between(&html, "id=\"s1\"", "</section>");
    assert!(section.contains("HTTP/3 asked for, HTTP/3 spoken"), "{section}");
    assert!(section.contains("quic idle timeout"), "{section}");
    assert!(!between(&html, "id=\"s0\"", "</section>").contains("HTTP/3"), "only the scenario that asked");
}
