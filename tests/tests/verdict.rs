//! End-to-end tests of the verdict a reviewer reads: a run whose figures are the generator's is
//! inconclusive (exit code 4) and says so in every output, a run that measured nothing fails
//! (exit code 1), and a failed comparison shows its numbers first and stays failed when `cargo
//! loadbench report` renders it again. Everything goes through the real binary's `url` command
//! against `TestServer`s on 127.0.0.1.

// A broken test environment (the binary does not build, a file cannot be written) should fail
// loudly.
#![allow(clippy::expect_used)]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use cargo_loadbench::{Results, ScenarioResult, VerdictStatus};
use loadbench::threshold::Metric;
use loadbench_tests::cli::{Output, cargo_loadbench_judged, read_report, row};
use loadbench_tests::{Behavior, TestServer};

/// The runs measure rates: one at a time, so that none shares the CPUs with another.
fn one_at_a_time() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Every file one run writes, in `dir`.
struct Files {
    json: PathBuf,
    junit: PathBuf,
    markdown: PathBuf,
    html: PathBuf,
    summary: PathBuf,
}

impl Files {
    fn in_dir(dir: &Path, name: &str) -> Files {
        Files {
            json: dir.join(format!("{name}.json")),
            junit: dir.join(format!("{name}.xml")),
            markdown: dir.join(format!("{name}.md")),
            html: dir.join(format!("{name}.html")),
            summary: dir.join(format!("{name}-summary.md")),
        }
    }

    fn read(path: &Path) -> String {
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }
}

fn text(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

/// `cargo loadbench url ARGS…` writing every format to `files`, with `GITHUB_STEP_SUMMARY` set.
fn url(args: &[&str], files: &Files) -> (Output, Results) {
    let mut all = vec!["url", "--quiet"];
    all.extend_from_slice(args);
    for path in [&files.json, &files.junit, &files.markdown, &files.html] {
        all.extend_from_slice(&["-o", text(path)]);
    }
    let out = cargo_loadbench_judged(&all, &[("GITHUB_STEP_SUMMARY", files.summary.as_os_str())]);
    assert!(files.json.exists(), "no JSON written: {out:#?}");
    (out, read_report(&files.json))
}

fn only(report: &Results) -> &ScenarioResult {
    assert_eq!(report.scenarios.len(), 1, "{report:#?}");
    &report.scenarios[0]
}

fn status(s: &ScenarioResult) -> VerdictStatus {
    s.verdict.as_ref().unwrap_or_else(|| panic!("no verdict: {s:#?}")).status
}

/// The JUnit document's test case elements with a child of kind `kind` (`failure`, `error`).
fn junit_children(junit: &str, kind: &str) -> Vec<(String, String)> {
    let xml = roxmltree::Document::parse(junit).unwrap_or_else(|e| panic!("{e}: {junit}"));
    xml.descendants()
        .filter(|n| n.has_tag_name(kind))
        .map(|n| {
            (n.attribute("type").unwrap_or_default().to_owned(), n.attribute("message").unwrap_or_default().to_owned())
        })
        .collect()
}

#[test]
fn a_rate_the_generator_cannot_reach_is_inconclusive_everywhere() {
    let _turn = one_at_a_time();
    let server = TestServer::start(Behavior::default());
    let dir = tempfile::tempdir().expect("tempdir");
    // One user cannot start 100,000 requests a second on any machine: a round trip on loopback
    // takes tens of microseconds at the least, so most arrivals find it busy and are dropped.
    let load = ["--rate", "100000", "-c", "1", "-d", "1s"];
    let files = Files::in_dir(dir.path(), "short");
    let mut args = vec![server.url()];
    args.extend(load.iter().map(|a| (*a).to_owned()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (out, report) = url(&args, &files);
    assert_eq!(out.code, Some(4), "{out:#?}");
    let s = only(&report);
    assert!(s.ok > 0, "the server answered: {s:#?}");
    assert_eq!(s.ok, server.requests(), "what the server counted");
    assert_eq!(status(s), VerdictStatus::Inconclusive, "{s:#?}");
    let failed: Vec<Metric> = s.inconclusive.iter().map(|o| o.threshold.metric).collect();
    assert!(failed.contains(&Metric::Rate) && failed.contains(&Metric::Dropped), "{failed:?}");
    assert!(!s.thresholds.iter().any(|o| !o.passed), "no threshold failed: {s:#?}");

    // The table: one `inconclusive:` line per reason, the rate's with its figures.
    let lines: Vec<&str> = out.stdout.lines().filter(|l| l.starts_with("GET /: inconclusive: ")).collect();
    assert!(
        lines.iter().any(|l| l.contains("/s of the 100,000/s asked") && l.contains("(limit: at least 95%)")),
        "{}",
        out.stdout
    );
    assert!(
        lines.iter().any(|l| l.contains("of the arrivals dropped") && l.contains("(limit: at most 1%)")),
        "{}",
        out.stdout
    );
    assert!(
        out.errors().iter().any(|l| l.starts_with("error: inconclusive: GET /: ") && l.contains("exit code 4")),
        "{out:#?}"
    );
    // The same words in the JSON's reasons, Markdown, JUnit and the HTML headline.
    let reasons = &s.verdict.as_ref().expect("verdict").reasons;
    assert!(reasons.iter().any(|r| lines.iter().any(|l| l.ends_with(r.as_str()))), "{reasons:?}\n{lines:?}");
    let markdown = Files::read(&files.markdown);
    assert!(markdown.starts_with("### loadbench results\n\n❓ loadbench: 1 of 1 inconclusive"), "{markdown}");
    assert_eq!(Files::read(&files.summary).trim_start(), markdown, "the step summary is the Markdown");
    let errors = junit_children(&Files::read(&files.junit), "error");
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].0, "inconclusive");
    assert!(errors[0].1.contains("/s of the 100,000/s asked"), "{errors:?}");
    assert!(junit_children(&Files::read(&files.junit), "failure").is_empty(), "not a failure of the server");
    let html = Files::read(&files.html);
    assert!(html.contains("<p class=\"verdict inconclusive\">"), "the headline's mark");
    assert!(html.contains("1 of 1 inconclusive"), "the headline's words");

    // Allowed: exit 0, and every output still says so.
    let files = Files::in_dir(dir.path(), "allowed");
    let mut allowed = args.clone();
    allowed.push("--allow-inconclusive");
    let (out, report) = url(&allowed, &files);
    assert_eq!(out.code, Some(0), "{out:#?}");
    assert_eq!(status(only(&report)), VerdictStatus::Inconclusive);
    assert!(out.stdout.contains("GET /: inconclusive: "), "{}", out.stdout);
    assert_eq!(out.stderr, "", "allowed, under --quiet: no line; the outputs say it");
    assert!(junit_children(&Files::read(&files.junit), "error").is_empty(), "allowed: no error");
    assert!(Files::read(&files.junit).contains("inconclusive (--allow-inconclusive): "), "a note");
    assert!(Files::read(&files.markdown).contains("❓ loadbench: 1 of 1 inconclusive"));

    // A condition of the run's own replaces the default: here a rate far below the asked one
    // is all that is asked of the generator, and dropped arrivals are allowed.
    let files = Files::in_dir(dir.path(), "own");
    let mut own = args.clone();
    own.extend(["--threshold", "rate >= 0%", "--threshold", "dropped <= 100%", "--threshold", "saturated <= 1"]);
    let (out, report) = url(&own, &files);
    assert_eq!(out.code, Some(0), "{out:#?}");
    assert!(only(&report).inconclusive.is_empty(), "{:#?}", only(&report));
}

#[test]
fn a_wrong_base_path_fails_the_run_with_one_line() {
    let _turn = one_at_a_time();
    let server = TestServer::start(Behavior::default());
    let dir = tempfile::tempdir().expect("tempdir");
    let files = Files::in_dir(dir.path(), "missing");
    let target = format!("{}/missing/api", server.url().trim_end_matches('/'));
    let (out, report) = url(&[&target, "-n", "200", "-c", "5"], &files);
    assert_eq!(out.code, Some(1), "{out:#?}");
    assert_eq!(server.requests(), 200, "every request reached the server");
    let s = only(&report);
    assert_eq!((s.iterations, s.ok, s.failed, s.errors.status), (200, 0, 200, 200), "{s:#?}");
    assert_eq!(status(s), VerdictStatus::Failed);
    let line = "error: GET /missing/api: no iteration succeeded (200 of 200 failed, most often 200 × status: ";
    assert!(out.errors().iter().any(|l| l.starts_with(line)), "{line}\n{out:#?}");
    assert!(out.stderr.contains("add --allow-failures"), "{}", out.stderr);
    // The table's row and the line under it: failures written one way, `200 × status`.
    let cells = row(&out.stdout, "GET /missing/api");
    assert_eq!(cells[1..3], ["200", "200"], "{}", out.stdout);
    assert!(out.stdout.contains("200 × status"), "{}", out.stdout);
    let failures = junit_children(&Files::read(&files.junit), "failure");
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert!(failures[0].0.contains("no success"), "{failures:?}");
    assert!(failures[0].1.contains("no iteration succeeded (200 of 200 failed"), "{failures:?}");
    assert!(
        Files::read(&files.markdown).contains("❌ loadbench: 1 of 1 failed: GET /missing/api (no iteration succeeded")
    );
    let html = Files::read(&files.html);
    assert!(html.contains("<p class=\"verdict fail\">"), "the HTML headline says failed");
    assert!(html.contains("1 of 1 failed"), "{html}");
    assert!(!html.contains("1 scenario passed"), "never passed");

    // A chaos test: allowed, and still not called passed.
    let files = Files::in_dir(dir.path(), "chaos");
    let (out, report) = url(&[&target, "-n", "20", "-c", "2", "--allow-failures"], &files);
    assert_eq!(out.code, Some(0), "{out:#?}");
    assert_eq!(status(only(&report)), VerdictStatus::Warning);
    assert_eq!(out.stderr, "", "allowed, under --quiet: no line; the outputs say it");
}

#[test]
fn a_failed_comparison_shows_old_to_new_first_and_stays_failed_when_rendered_again() {
    let _turn = one_at_a_time();
    let fast = TestServer::start(Behavior { delay: Duration::from_millis(1), ..Behavior::default() });
    // 25 ms per response against 1 ms: a change far beyond any noise.
    let slow = TestServer::start(Behavior { delay: Duration::from_millis(25), ..Behavior::default() });
    let dir = tempfile::tempdir().expect("tempdir");
    let baselines = dir.path().join("baselines");
    // The same load against `server`, with `gating`.
    let run = |server: &TestServer, gating: &[&str], files: &Files| {
        let target = server.url();
        let mut args = vec![target.as_str(), "-n", "300", "-c", "10", "--baseline-dir", text(&baselines)];
        args.extend_from_slice(gating);
        url(&args, files)
    };

    let base = Files::in_dir(dir.path(), "base");
    let (out, _) = run(&fast, &["--save-baseline", "main", "--allow-inconclusive"], &base);
    assert_eq!(out.code, Some(0), "{out:#?}");

    let head = Files::in_dir(dir.path(), "head");
    let (out, report) = run(&slow, &["--baseline", "main", "--fail-on-regression"], &head);
    assert_eq!(out.code, Some(1), "{out:#?}");
    assert_eq!(status(only(&report)), VerdictStatus::Failed);
    let gate = report.gate.as_ref().expect("the gate's settings are kept");
    assert_eq!((gate.baseline.as_deref(), gate.fail_on_regression), (Some("main"), true));

    // The step summary: the heading, the verdict, then old → new for each scenario.
    let summary = Files::read(&head.summary);
    // (Appended after a blank line, as GitHub's summary page keeps each step's block apart.)
    let lines: Vec<&str> = summary.trim_start().lines().collect();
    assert_eq!(lines[0], "### loadbench: this run compared with baseline `main`", "{summary}");
    assert!(lines[2].starts_with("❌ loadbench: 1 of 1 failed: GET / (regressed ("), "{summary}");
    assert!(lines[4].contains("it/s old → new") && lines[4].contains("p99 old → new"), "{summary}");
    let row = lines[6];
    assert!(row.starts_with("| ❌ | GET / "), "{summary}");
    let p50 = row.split('|').nth(4).unwrap_or_default().trim();
    assert!(p50.contains(" → ") && p50.contains("(+"), "p50 old → new (change): {p50}");
    assert!(row.contains("regressed ("), "{row}");

    // JUnit's failure carries the numbers and what made the change count.
    let failures = junit_children(&Files::read(&head.junit), "failure");
    assert_eq!(failures.len(), 1, "{failures:?}");
    let message = &failures[0].1;
    assert!(message.starts_with("baseline `main`: regressed: "), "{message}");
    assert!(message.contains("p50 ") && message.contains(" → ") && message.contains("beyond ±5%"), "{message}");

    // Rendered again from the saved JSON: the same verdict, baseline and comparison.
    let again = cargo_loadbench_judged(
        &["report", text(&head.json), "--format", "markdown"],
        &[("GITHUB_STEP_SUMMARY", OsStr::new(""))],
    );
    assert_eq!(again.code, Some(1), "{again:#?}");
    assert!(
        again
            .stdout
            .starts_with("### loadbench: this run compared with baseline `main`\n\n❌ loadbench: 1 of 1 failed"),
        "{}",
        again.stdout
    );
    assert!(again.errors().iter().any(|l| l.contains("regressed against baseline `main`")), "{again:#?}");
    let junit = dir.path().join("again.xml");
    let again = cargo_loadbench_judged(&["report", text(&head.json), "-o", text(&junit)], &[]);
    assert_eq!(again.code, Some(1), "{again:#?}");
    assert_eq!(junit_children(&Files::read(&junit), "failure"), failures, "the same failure");
}
