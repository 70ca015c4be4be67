//! The HTML report, opened in a real browser (headless Chromium, network cut off), and
//! `cargo loadbench report`, which renders saved results.
//!
//! The browser tests need Chromium: `.ci/run` installs Debian's `chromium` when it is missing.
//! Without one they are skipped with a note, except under `CI`, where a missing browser fails.
//!
//! The README's screenshot is this file's: `LOADBENCH_SCREENSHOT=docs/report-screenshot.png
//! cargo test -p loadbench-tests --test html_report` writes it.

// A broken test environment (an example that does not build, no browser under CI) should fail
// loudly.
#![allow(clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use loadbench_tests::browser::{Browser, Page, find_chromium};
use loadbench_tests::cli::{cargo_loadbench, read_json, run_example_bench, workspace_root};
use loadbench_tests::{Behavior, TestServer};
use serde_json::{Value, json};

/// Where the README's screenshot goes when set.
const SCREENSHOT_ENV: &str = "LOADBENCH_SCREENSHOT";

/// A browser, or `None` (with a note) when there is none and this is not CI.
fn browser() -> Option<Browser> {
    if find_chromium().is_none() && std::env::var_os("CI").is_none() {
        eprintln!("note: skipped: no Chromium on this machine (apt-get install chromium); CI requires one");
        return None;
    }
    Some(Browser::launch().expect("launch Chromium"))
}

/// The journey example (two scenarios run together, with steps, a named request, checks, a
/// threshold and a watched server process), run once by its bench binary at half its size; the
/// path of the results it wrote, in a directory kept for the test binary's life.
fn journey_results() -> &'static Path {
    static RESULTS: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let (_, path) = RESULTS.get_or_init(|| {
        let dir = tempfile::tempdir().expect("tempdir");
        let json = dir.path().join("journey.json");
        run_example_bench("journey", &["--scale", "0.5"], &json);
        (dir, json)
    });
    path
}

/// `cargo loadbench report RESULTS -o OUT.html`, which must succeed; the page's path.
fn render(results: &Path, dir: &Path) -> PathBuf {
    let html = dir.join("report.html");
    let out = cargo_loadbench(&[
        "report",
        results.to_str().expect("UTF-8 path"),
        "-o",
        html.to_str().expect("UTF-8 path"),
        "--no-gate",
    ]);
    assert_eq!(out.code, Some(0), "{out:#?}");
    assert!(out.stdout.is_empty(), "nothing on stdout with --output and no --format: {}", out.stdout);
    html
}

/// What the page's charts hold: per `svg.chart`, its kind, its series and how many of them are
/// drawn (a path through two points at least, or a group with a point).
fn charts(page: &Page) -> Vec<Value> {
    let found = page
        .eval_json(
            "Array.from(document.querySelectorAll('svg.chart')).map(svg => ({
                kind: svg.dataset.chart,
                series: svg.querySelectorAll('.series').length,
                drawn: Array.from(svg.querySelectorAll('.series')).filter(s => s.tagName === 'path'
                    ? (s.getAttribute('d') || '').split(/[ML]/).filter(p => p.trim()).length >= 2
                    : s.querySelector('circle, rect, path') !== null).length,
                titles: svg.querySelectorAll('title').length,
            }))",
        )
        .expect("read the charts");
    found.as_array().cloned().unwrap_or_default()
}

/// The page opened with nothing wrong: no error of any kind, no request but its own file.
fn assert_clean(page: &Page) {
    assert_eq!(page.errors(), Vec::<String>::new(), "errors in the page");
    assert_eq!(page.failed_requests(), Vec::<String>::new(), "failed requests");
    let elsewhere: Vec<String> = page.requests().into_iter().filter(|url| !url.starts_with("file://")).collect();
    assert_eq!(elsewhere, Vec::<String>::new(), "requests to other hosts");
}

#[test]
fn the_report_of_the_journey_example_draws_every_chart_offline() {
    let Some(browser) = browser() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let html = render(journey_results(), dir.path());
    let size = std::fs::metadata(&html).expect("the page").len();
    assert!(size < 1_000_000, "{size} bytes");

    let page = browser.open(&html).expect("open the report");
    assert_clean(&page);
    let charts = charts(&page);
    let kinds = |kind: &str| charts.iter().filter(|c| c["kind"] == kind).count();
    // Two scenarios (writer and reader), each with its timeline, spectrum, steps and the app the
    // bench binary watches.
    for kind in ["throughput", "latency", "spectrum", "steps-spectrum", "watch-cpu", "watch-rss"] {
        assert_eq!(kinds(kind), 2, "charts of kind {kind} in {charts:#?}");
    }
    for chart in &charts {
        let (series, drawn) = (chart["series"].as_u64().unwrap_or(0), chart["drawn"].as_u64().unwrap_or(0));
        assert!(series >= 1 && drawn >= 1, "an empty chart: {chart}");
        assert!(chart["titles"].as_u64().unwrap_or(0) >= 1, "nothing to hover in {chart}");
    }
    // Latency over time draws p50, p90 and p99; the steps' spectrum one curve per step.
    let latency = charts.iter().find(|c| c["kind"] == "latency").expect("a latency chart");
    assert_eq!(latency["drawn"], 3, "{latency}");
    let steps = charts.iter().find(|c| c["kind"] == "steps-spectrum").expect("a steps chart");
    assert!(steps["drawn"].as_u64().unwrap_or(0) >= 3, "login, insert or query, logout: {steps}");

    // The legend switches a series off and on again.
    let toggled = page
        .eval_json(
            "(() => {
                const button = document.querySelector('svg.chart[data-chart=latency]')
                    .closest('figure, section, div').querySelector('.legend-item');
                const series = () => document.querySelector('svg.chart[data-chart=latency] .series[data-series=\"'
                    + button.dataset.series + '\"]');
                const shown = () => getComputedStyle(series()).display !== 'none'
                    && getComputedStyle(series()).visibility !== 'hidden';
                const before = shown();
                button.click();
                const after = shown();
                button.click();
                return [before, after, shown(), button.getAttribute('aria-pressed')];
            })()",
        )
        .expect("click the legend");
    assert_eq!(toggled, json!([true, false, true, "true"]));

    let text = page.eval_json("document.body.innerText").expect("the page's text");
    let text = text.as_str().unwrap_or_default();
    for expected in ["writer", "reader", "login", "GET /records/{id}", "checks > 0.99", "app"] {
        assert!(text.contains(expected), "`{expected}` not shown");
    }
    assert_eq!(page.errors(), Vec::<String>::new(), "errors after the clicks");

    let png = page.screenshot_png(true).expect("a screenshot");
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n") && png.len() > 20_000, "{} bytes", png.len());
    if let Some(path) = std::env::var_os(SCREENSHOT_ENV) {
        let path = workspace_root().join(PathBuf::from(path));
        std::fs::write(&path, &png).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
}

#[test]
fn two_servers_an_arrival_rate_and_repeated_runs_share_their_charts() {
    let Some(browser) = browser() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let (fast, slow) = (
        TestServer::start(Behavior::default()),
        TestServer::start(Behavior { delay: std::time::Duration::from_millis(2), ..Behavior::default() }),
    );
    let html = dir.path().join("report.html");
    let out = cargo_loadbench(&[
        "url",
        "/",
        "--target",
        &format!("fast={}", fast.url()),
        "--target",
        &format!("slow={}", slow.url()),
        "--rate",
        "200",
        "-d",
        "2s",
        "-c",
        "20",
        "--runs",
        "2",
        "--quiet",
        "--no-gate",
        "--output",
        html.to_str().expect("UTF-8 path"),
    ]);
    assert_eq!(out.code, Some(0), "{out:#?}");

    let page = browser.open(&html).expect("open the report");
    assert_clean(&page);
    let charts = charts(&page);
    // One section for the request against both servers: every chart once, each target's curves
    // on the same axes (the throughput chart: iterations and errors per second of each).
    for (kind, least) in [("throughput", 4), ("latency", 6), ("spectrum", 2), ("runs", 2), ("rate", 3)] {
        let chart = charts.iter().find(|c| c["kind"] == kind).unwrap_or_else(|| panic!("no {kind} chart: {charts:#?}"));
        assert_eq!(charts.iter().filter(|c| c["kind"] == kind).count(), 1, "{kind}: {charts:#?}");
        assert!(chart["drawn"].as_u64().unwrap_or(0) >= least, "{kind}: {chart}");
        assert!(chart["titles"].as_u64().unwrap_or(0) >= 1, "nothing to hover in {chart}");
    }
    let text = page.eval_json("document.body.innerText").expect("the page's text");
    let text = text.as_str().unwrap_or_default();
    assert!(text.contains("fast") && text.contains("slow"), "both targets named");
}

#[test]
fn names_from_users_and_servers_are_shown_as_text_and_run_nothing() {
    let Some(browser) = browser() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    // Saved results whose names carry markup: a scenario, a step, a named request, a target and
    // a failure's message, as a scenario author or a server could make them.
    let saved = dir.path().join("saved.json");
    let out = cargo_loadbench(&[
        "report",
        journey_results().to_str().expect("UTF-8 path"),
        "--json",
        saved.to_str().expect("UTF-8 path"),
    ]);
    assert_eq!(out.code, Some(0), "{out:#?}");
    let mut results = read_json(&saved);
    let script = "<script>alert(1)</script>";
    let image = "\"><img src=x onerror=alert(1)>";
    let scenario = &mut results["scenarios"][0];
    scenario["name"] = json!(script);
    scenario["steps"][0]["name"] = json!(image);
    scenario["requests"] = json!([]);
    scenario["config"]["target"] = json!("javascript:alert(1)//<svg onload=alert(1)>");
    scenario["causes"] =
        json!({ "top": [{ "kind": "scenario", "message": "<b>bold</b> & <i>", "count": 1 }], "others": 0 });
    // The failure that message describes, counted as a run counts it: `report` refuses causes
    // that describe more failures than the scenario had.
    for count in ["/iterations", "/failed", "/errors/scenario"] {
        if let Some(n) = scenario.pointer_mut(count) {
            *n = json!(n.as_u64().unwrap_or(0) + 1);
        }
    }
    let saved = dir.path().join("hostile.json");
    std::fs::write(&saved, serde_json::to_vec(&results).expect("JSON")).expect("write");
    let html = render(&saved, dir.path());
    let source = std::fs::read_to_string(&html).expect("the page");
    assert!(!source.contains(script) && !source.contains("<img") && !source.contains("<svg onload"), "unescaped");

    let page = browser.open(&html).expect("open the report");
    assert_clean(&page);
    let dom = page
        .eval_json(
            "({ scripts: document.scripts.length, images: document.images.length,
                handlers: document.querySelectorAll('[onerror], [onload], [onclick]').length,
                text: document.body.innerText })",
        )
        .expect("read the page");
    assert_eq!(dom["scripts"], 1, "only the page's own script");
    assert_eq!(dom["images"], 0);
    assert_eq!(dom["handlers"], 0);
    let text = dom["text"].as_str().unwrap_or_default();
    for shown in [script, image, "<b>bold</b> & <i>"] {
        assert!(text.contains(shown), "`{shown}` is not shown as text");
    }
}

#[test]
fn report_renders_saved_results_in_any_format_and_refuses_what_it_cannot_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    let results = journey_results().to_str().expect("UTF-8 path");
    // The table on stdout without --output; Markdown as asked.
    let out = cargo_loadbench(&["report", results]);
    assert_eq!(out.code, Some(0), "{out:#?}");
    assert!(out.stdout.contains("| writer") && out.stdout.contains("| reader"), "{}", out.stdout);
    let out = cargo_loadbench(&["report", results, "--format", "markdown"]);
    // Passed, or inconclusive when a busy machine saturated the generator that saved them.
    assert!(out.stdout.starts_with("### loadbench results\n\n"), "{}", out.stdout);
    let verdict = out.stdout.lines().nth(2).unwrap_or_default();
    assert!(
        verdict.contains(" loadbench: 2 scenarios passed")
            || verdict.contains(" inconclusive, the generator's figures rather than the server's: "),
        "{}",
        out.stdout
    );

    // Two files holding the same scenarios: each entry named after its file.
    let again = dir.path().join("again.json");
    std::fs::copy(journey_results(), &again).expect("copy");
    let merged = dir.path().join("merged.json");
    let out = cargo_loadbench(&[
        "report",
        results,
        again.to_str().expect("UTF-8 path"),
        "--json",
        merged.to_str().expect("UTF-8 path"),
    ]);
    assert_eq!(out.code, Some(0), "{out:#?}");
    let merged = read_json(&merged);
    let entries: Vec<(String, String)> = merged["scenarios"]
        .as_array()
        .expect("scenarios")
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap_or_default().to_owned(),
                s["target_name"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    let names = |file: &str| [("writer".to_owned(), file.to_owned()), ("reader".to_owned(), file.to_owned())];
    assert_eq!(entries, [names("journey"), names("again")].concat());

    // A threshold the saved results miss fails the gate, as after a run.
    let out = cargo_loadbench(&["report", results, "--threshold", "writer:p50<1ns"]);
    assert_eq!(out.code, Some(1), "{out:#?}");

    // Refused with one line and exit code 2: a file that is not results, a missing one, a flag
    // that only applies to a run.
    let not_json = dir.path().join("notes.json");
    std::fs::write(&not_json, "hello").expect("write");
    for (args, message) in [
        (vec!["report", not_json.to_str().expect("UTF-8")], "invalid JSON"),
        (vec!["report", "missing.json"], "missing.json"),
        (vec!["report", results, "--runs", "3"], "--runs only applies to a run"),
    ] {
        let out = cargo_loadbench(&args);
        assert_eq!(out.code, Some(2), "{args:?}: {out:#?}");
        assert_eq!(out.errors().len(), 1, "{args:?}: {}", out.stderr);
        assert!(out.errors()[0].contains(message), "{args:?}: {}", out.stderr);
    }
}
