//! Every output format read back by a real parser, named requests and checks in each.

use super::*;

#[test]
fn every_output_format_reads_back() {
    let _turn = one_at_a_time();
    let target = server(Duration::ZERO);
    let dir = tempfile::tempdir().expect("tempdir");
    let file = |name: &str| dir.path().join(name);
    let summary = file("summary.md");
    std::fs::write(&summary, "# An earlier step\n").expect("write the summary");
    // A run that only saves a baseline (the base commit's step) writes no summary block.
    let saved = cargo_loadbench_with_env(
        &[
            "--manifest-path",
            path(&fixture("gate")),
            "--quiet",
            "hello",
            "--exact",
            "--target",
            &target.url(),
            "--save-baseline",
            "main",
            "--baseline-dir",
            path(dir.path()),
        ],
        &[("GITHUB_STEP_SUMMARY", summary.as_os_str())],
    );
    assert_eq!(saved.code, Some(0), "{saved:#?}");
    assert_eq!(std::fs::read_to_string(&summary).expect("summary"), "# An earlier step\n");

    let json_output = format!("json:{}", path(&file("results.data")));
    let out = cargo_loadbench_with_env(
        &[
            "--manifest-path",
            path(&fixture("gate")),
            "--quiet",
            "guarded",
            "hello",
            "--target",
            &target.url(),
            "--baseline",
            "main",
            "--baseline-dir",
            path(dir.path()),
            // Cannot hold: a failed threshold in every format.
            "--threshold",
            "guarded:p50<1ns",
            "--format",
            "json",
            "--output",
            &json_output,
            "--output",
            path(&file("results.csv")),
            "--output",
            path(&file("results.md")),
            "--output",
            path(&file("junit.xml")),
            "--output",
            path(&file("reports/table.txt")),
            "-o",
            path(&file("report.html")),
        ],
        &[("GITHUB_STEP_SUMMARY", summary.as_os_str())],
    );
    assert_eq!(out.code, Some(1), "{out:#?}");

    // JSON: stdout and the file hold the same versioned document.
    let stdout = loadbench_tests::cli::results_json(&out.stdout, "stdout of --format json");
    let stdout: Results = serde_json::from_value(stdout).expect("stdout is the JSON report");
    let report = read_report(&file("results.data"));
    assert_eq!(stdout, report);
    assert_eq!(report.schema_version, loadbench::report::SCHEMA_VERSION);
    let names: Vec<&str> = report.scenarios.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["hello", "guarded"], "in source order");
    assert_eq!(comparison(&report, "guarded").verdict, Verdict::New);
    assert!(comparison(&report, "hello").metrics.len() == 4, "{:#?}", comparison(&report, "hello"));

    // CSV: a header and one row per scenario.
    let mut csv = csv::Reader::from_path(file("results.csv")).expect("CSV");
    let header = csv.headers().expect("header").clone();
    let column =
        |name: &str| header.iter().position(|h| h == name).unwrap_or_else(|| panic!("no `{name}` in {header:?}"));
    let rows: Vec<csv::StringRecord> = csv.records().collect::<Result<_, _>>().expect("CSV rows");
    let cells: Vec<[&str; 5]> = rows
        .iter()
        .map(|r| {
            [
                &r[column("scenario")],
                &r[column("iterations")],
                &r[column("thresholds")],
                &r[column("verdict")],
                &r[column("baseline")],
            ]
        })
        .collect();
    assert_eq!(cells[1], ["guarded", "20", "failed", "new", "main"]);
    assert_eq!(cells[0][..3], ["hello", "100", ""]);
    assert!(["no change", "improved", "regressed"].contains(&cells[0][3]), "{cells:?}");
    assert!(rows[0][column("p50_old_us")].parse::<f64>().is_ok_and(|us| us > 0.0), "{rows:?}");
    assert!(rows[1][column("failed_thresholds")].starts_with("p50 < 1ns (was "), "{rows:?}");

    // JUnit: a suite per scenario, its case named for it, the failed threshold a failure.
    let xml = std::fs::read_to_string(file("junit.xml")).expect("JUnit file");
    let doc = roxmltree::Document::parse(&xml).expect("well-formed XML");
    let suites: Vec<Option<&str>> =
        doc.descendants().filter(|n| n.has_tag_name("testsuite")).map(|n| n.attribute("name")).collect();
    assert_eq!(suites, [Some("gate/api: hello"), Some("gate/api: guarded")]);
    let cases: Vec<roxmltree::Node> = doc.descendants().filter(|n| n.has_tag_name("testcase")).collect();
    let case_names: Vec<Option<&str>> = cases.iter().map(|c| c.attribute("name")).collect();
    assert_eq!(case_names, [Some("hello"), Some("guarded")]);
    let failure = cases[1].children().find(|n| n.has_tag_name("failure")).expect("guarded failed");
    assert!(failure.attribute("message").is_some_and(|m| m.starts_with("threshold failed: p50 < 1ns (was ")), "{xml}");
    assert_eq!(failure.attribute("type"), Some("threshold"));
    assert!(!cases[0].children().any(|n| n.has_tag_name("failure")), "hello gates nothing: {xml}");

    // Markdown: a GitHub table per section, as a Markdown parser sees it.
    let markdown = std::fs::read_to_string(file("results.md")).expect("Markdown file");
    let tables = markdown_tables(&markdown);
    assert_eq!(tables.len(), 2, "the comparison old → new first, then the results: {markdown}");
    assert_eq!(tables[0][0], ["", "scenario", "it/s old → new", "p50 old → new", "p99 old → new", "verdict"]);
    assert_eq!(tables[0][1][1], "hello");
    assert!(tables[0][1][3].contains(" → "), "{:?}", tables[0][1]);
    assert_eq!(tables[0][2][..3], ["❌", "guarded", "-"]);
    assert_eq!(tables[0][2][5], "new");
    assert_eq!(
        tables[1][0],
        ["", "scenario", "iterations", "failed", "responses", "req/s", "p50", "p95", "p99", "max", "thresholds"]
    );
    assert_eq!(tables[1][2][..5], ["❌", "guarded", "20", "0", "20"]);
    assert!(tables[1][2][10].starts_with("failed: p50 < 1ns (was "), "{:?}", tables[1][2]);
    assert_eq!(tables[1][1][1..4], ["hello", "100", "0"]);
    assert!(
        markdown.starts_with(
            "### loadbench: this run compared with baseline `main`\n\n❌ loadbench: 1 of 2 failed: guarded (p50 \\< 1ns (was "
        ),
        "{markdown}"
    );
    assert!(markdown.contains("\n<details><summary>"), "{markdown}");

    // GITHUB_STEP_SUMMARY: one block, the comparison's, after what was there, naming the HTML
    // report the summary page cannot show.
    let summary = std::fs::read_to_string(&summary).expect("summary");
    let html = file("report.html");
    let note = format!(
        "\n📊 HTML report: `{}`, in this run's artifacts (download and open it in a browser).\n",
        html.display()
    );
    assert!(markdown.ends_with(&note), "{markdown}");
    assert_eq!(summary, format!("# An earlier step\n\n{markdown}"));

    // The HTML report: one page, both scenarios, the failed threshold (the browser tests are in
    // tests/html_report.rs).
    let page = std::fs::read_to_string(&html).expect("the HTML report");
    assert!(page.starts_with("<!DOCTYPE html>"), "{}", &page[..page.len().min(200)]);
    for shown in ["guarded", "hello", "p50 &lt; 1ns"] {
        assert!(page.contains(shown), "`{shown}` not in the page");
    }

    // The table, as the terminal shows it, in a directory that did not exist.
    let table = std::fs::read_to_string(file("reports/table.txt")).expect("table file");
    assert_eq!(row(&table, "hello")[1], "100");
    assert!(table.contains("\nguarded: threshold failed: p50 < 1ns (was "), "{table}");
}

#[test]
fn named_requests_and_checks_reach_every_output_and_the_checks_threshold_gates() {
    let _turn = one_at_a_time();
    let target = server(Duration::ZERO);
    let dir = tempfile::tempdir().expect("tempdir");
    let file = |name: &str| dir.path().join(name);

    // Two runs merged: each run's 50 iterations make 5 failed `not tenth` checks.
    let out = gate(&[
        "checked",
        "--target",
        &target.url(),
        "--runs",
        "2",
        "--threshold",
        "checked:checks>=95%",
        "--json",
        path(&file("out.json")),
        "--output",
        path(&file("out.csv")),
        "--output",
        path(&file("out.md")),
    ]);
    assert_eq!(out.code, Some(0), "{out:#?}");
    assert_eq!(target.requests(), 100);
    assert_eq!(row(&out.stdout, "↳ GET /items/{id}")[..3], ["↳ GET /items/{id}", "100", "0"], "{}", out.stdout);
    assert!(
        out.stdout.contains(
            "\nchecked: checks 95.0% passed: status is 200 100.0% (100 of 100), not tenth 90.0% (90 of 100)\n"
        ),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("\nchecked: thresholds met: checks >= 0.95\n"), "{}", out.stdout);

    let checked = loadbench_tests::cli::scenario(&read_report(&file("out.json")), "checked").clone();
    let requests: Vec<(&str, u64, u64)> =
        checked.requests.iter().map(|r| (r.name.as_str(), r.iterations, r.failed)).collect();
    assert_eq!(requests, [("GET /items/{id}", 100, 0)]);
    let checks: Vec<(&str, u64, u64)> = checked.checks.iter().map(|c| (c.name.as_str(), c.passes, c.fails)).collect();
    assert_eq!(checks, [("status is 200", 100, 0), ("not tenth", 90, 10)]);
    assert_eq!(checked.thresholds[0].actual, Some(0.95));

    let mut csv = csv::Reader::from_path(file("out.csv")).expect("CSV");
    let header = csv.headers().expect("header").clone();
    let column =
        |name: &str| header.iter().position(|h| h == name).unwrap_or_else(|| panic!("no `{name}` in {header:?}"));
    let rows: Vec<[String; 5]> = csv
        .records()
        .map(|r| {
            let r = r.expect("CSV row");
            ["request", "check", "iterations", "ok", "failed"].map(|c| r[column(c)].to_owned())
        })
        .collect();
    assert_eq!(
        rows,
        [
            ["", "", "100", "100", "0"].map(String::from),
            ["GET /items/{id}", "", "100", "100", "0"].map(String::from),
            ["", "status is 200", "100", "100", "0"].map(String::from),
            ["", "not tenth", "100", "90", "10"].map(String::from),
        ]
    );

    let markdown = std::fs::read_to_string(file("out.md")).expect("Markdown file");
    let tables = markdown_tables(&markdown);
    // Indented with non-breaking spaces, which a Markdown table keeps.
    assert_eq!(tables[0][2][..4], ["✅", "\u{a0}\u{a0}\u{a0}\u{a0}↳ GET /items/{id}", "100", "0"], "{markdown}");
    assert!(markdown.contains("\n- checked: checks 95.0% passed: "), "{markdown}");

    // Above 95 % fails; so does a threshold on checks where none was made.
    let out = gate(&[
        "checked",
        "hello",
        "--exact",
        "--target",
        &target.url(),
        "--threshold",
        "checked:checks>0.95",
        "--threshold",
        "hello:checks>0.5",
    ]);
    assert_eq!(out.code, Some(1), "{out:#?}");
    assert!(out.stdout.contains("\nchecked: threshold failed: checks > 0.95 (was 0.95)\n"), "{}", out.stdout);
    assert!(
        out.stdout.contains("\nhello: threshold failed: checks > 0.5 (not measured: no check was made)\n"),
        "{}",
        out.stdout
    );
}
