use super::super::tests::{sample_report, two_targets_report};
use super::*;

/// The rows of the results table (header and separator first), after the old → new table.
fn results_table(out: &str) -> Vec<Vec<&str>> {
    out.lines()
        .skip_while(|l| !(l.starts_with('|') && l.contains("thresholds")))
        .take_while(|l| l.starts_with('|'))
        .map(|l| l.trim_matches('|').split('|').map(str::trim).collect())
        .collect()
}

#[test]
fn several_targets_get_a_side_by_side_table() {
    let report = two_targets_report("twin");
    let out = render(&Context::new(&report, 3, None, false));
    assert!(out.contains("| hello \\[twin\\] "), "{out}");
    let (_, side) = out
        .split_once("\n#### Side by side, each target against `fast` (the first)\n\n")
        .unwrap_or_else(|| panic!("{out}"));
    let twin = side.lines().find(|l| l.contains("| twin ")).unwrap_or_default();
    let cells: Vec<&str> = twin.trim_matches('|').split('|').map(str::trim).collect();
    assert_eq!(cells, ["hello", "twin", "245", "1.00×", "20.3ms", "1.00×", "40.6ms", "1.00×", "within noise"]);
    assert!(side.contains("- Ratios are each target's median over \\`fast\\`'s"), "{side}");
    for line in out.lines().filter(|l| l.starts_with('|')) {
        let cells = line.replace("\\|", "").matches('|').count() - 1;
        assert!(
            cells == header(&Context::new(&report, 1, None, false)).len() || cells == side_by_side::HEADER.len(),
            "{line}"
        );
    }
}

#[test]
fn the_html_reports_written_beside_it_are_named_last() {
    let report = sample_report();
    let mut cx = Context::new(&report, 1, None, false);
    assert!(!render(&cx).contains("HTML report"), "none written");
    cx.html_reports = vec!["out/loadbench.html".into()];
    let out = render(&cx);
    let last = "\n📊 HTML report: `out/loadbench.html`, in this run's artifacts (download and open it in a browser).\n";
    assert!(out.ends_with(last), "{out}");
}

#[test]
fn pipes_in_names_are_escaped_and_every_row_has_every_cell() {
    let report = sample_report();
    let out = render(&Context::new(&report, 3, Some("main"), true));
    assert!(
            out.starts_with(
                "### loadbench: this run compared with baseline `main`\n\n❌ loadbench: 2 of 3 failed: \
                 hello (regressed (it/s, p50, p99) against baseline \\`main\\`); guarded\\|pipe (p50 \\< 10ms (was 20.0ms))\n\n"
            ),
            "{out}"
        );
    assert!(out.contains("\n| ✅ | fresh "), "{out}");
    assert!(out.contains("| guarded\\|pipe "), "{out}");
    assert!(out.contains("failed: p50 \\< 10ms (was 20.0ms)"), "{out}");
    assert!(out.contains("#### Compared with baseline `main`"), "{out}");
    for line in out.lines().filter(|l| l.starts_with('|')) {
        let cells = line.replace("\\|", "").matches('|').count() - 1;
        assert!(cells == header(&Context::new(&report, 1, None, false)).len() || cells == OLD_TO_NEW_COLUMNS, "{line}");
    }
}

#[test]
fn steps_are_rows_under_their_scenario() {
    let mut report = sample_report();
    let first = report.scenarios[0].name.clone();
    report.scenarios[0].steps = ["login", "query"]
        .into_iter()
        .map(|name| loadbench::report::StepReport {
            name: name.into(),
            iterations: 30,
            ok: 28,
            failed: 2,
            errors: Default::default(),
            causes: Default::default(),
            latency_us: None,
        })
        .collect();
    let out = render(&Context::new(&report, 1, None, false));
    // Escaped pipes (`guarded\|pipe`) are inside a cell, not between cells.
    let unescaped = out.replace("\\|", "");
    let rows = results_table(&unescaped);
    let at = |name: &str| rows.iter().position(|r| r[1] == name).unwrap_or_else(|| panic!("{name}: {out}"));
    assert_eq!(at("└ login"), at(&first) + 1, "{out}");
    assert_eq!(at("└ query"), at(&first) + 2, "{out}");
    assert_eq!(rows[at("└ login")][..6], ["⚠️", "└ login", "30", "2", "-", "18.7"], "a step whose runs failed: {out}");
    assert_eq!(rows[at(&first)][2..6], ["300", "0", "600", "400"], "iterations and HTTP requests apart: {out}");
    assert_eq!(rows[at(&first)][0], "⚠️", "a regression that does not gate: {out}");
    assert!(out.contains("| \u{a0}\u{a0}\u{a0}\u{a0}└ login "), "non-breaking spaces indent the step: {out}");
    assert!(rows.iter().all(|r| r.len() == header(&Context::new(&report, 1, None, false)).len()), "{out}");
}

#[test]
fn percentiles_choose_the_columns_and_warnings_are_listed() {
    let mut report = sample_report();
    let first = report.scenarios[0].name.clone();
    report.scenarios[0].warnings = vec![loadbench::report::Warning {
        kind: loadbench::report::WarningKind::NoRequests,
        message: "did the body forget `.send().await`?".into(),
    }];
    let mut cx = Context::new(&report, 1, None, false);
    cx.columns =
        loadbench::report::LatencyColumns::new(loadbench::cli::parse_percentiles("90,99.9").unwrap_or_default());
    let out = render(&cx);
    let cells = |text: &str| -> Vec<String> {
        let line = text.lines().find(|l| l.contains("| scenario") && l.contains("thresholds")).unwrap_or_default();
        line.trim_matches('|').split('|').map(|c| c.trim().to_owned()).collect()
    };
    assert_eq!(
        cells(&out),
        ["", "scenario", "iterations", "failed", "responses", "req/s", "p90", "p99.9", "max", "thresholds"]
    );
    let warning = format!("\n- **warning** {}: did the body forget \\`.send().await\\`?\n", escape(&first));
    assert!(out.contains(&warning), "{out}");
    let default = render(&Context::new(&report, 1, None, false));
    assert_eq!(cells(&default)[6..10], ["p50", "p95", "p99", "max"], "{default}");
}

#[test]
fn named_requests_are_rows_and_checks_a_line_under_the_table() {
    let mut report = sample_report();
    report.scenarios.truncate(1);
    report.scenarios[0].requests = vec![loadbench::report::StepReport {
        name: "GET /items/{id}".into(),
        iterations: 30,
        ok: 28,
        failed: 2,
        errors: Default::default(),
        causes: Default::default(),
        latency_us: None,
    }];
    report.scenarios[0].checks = vec![loadbench::report::CheckReport { name: "has_id".into(), passes: 992, fails: 8 }];
    let out = render(&Context::new(&report, 1, None, false));
    let rows = results_table(&out);
    assert_eq!(rows[2][1..4], ["hello", "300", "0"], "{out}");
    assert_eq!(rows[3][1..4], ["↳ GET /items/{id}", "30", "2"], "{out}");
    assert!(rows.iter().all(|r| r.len() == header(&Context::new(&report, 1, None, false)).len()), "{out}");
    assert!(out.contains("\n- hello: checks 99.2% passed: has\\_id 99.2% (992 of 1,000)\n"), "{out}");
}

#[test]
fn the_verdict_line_comes_first_and_causes_are_in_the_details() {
    let mut report = sample_report();
    report.scenarios.truncate(1);
    report.scenarios[0].comparison = None;
    let passed = render(&Context::new(&report, 1, None, false));
    assert!(passed.starts_with("### loadbench results\n\n✅ loadbench: 1 scenario passed\n\n|"), "{passed}");

    let scenario = &mut report.scenarios[0];
    scenario.failed = 23;
    scenario.causes = loadbench::report::Causes::from_counts([
        (("scenario".to_owned(), "item had the wrong <name>".to_owned()), 20),
        (("io".to_owned(), "connection reset by peer".to_owned()), 3),
    ]);
    scenario.steps = vec![loadbench::report::StepReport {
        name: "login".into(),
        iterations: 30,
        ok: 27,
        failed: 3,
        errors: Default::default(),
        causes: loadbench::report::Causes::from_counts([(("io".to_owned(), "connection reset by peer".to_owned()), 3)]),
        latency_us: None,
    }];
    let out = render(&Context::new(&report, 1, None, false));
    assert!(
            out.starts_with("### loadbench results\n\n⚠️ loadbench: 1 scenario passed, 1 with warnings: hello (23 of 300 iterations failed)\n"),
            "{out}"
        );
    let (table, details) = out.split_once("\n<details><summary>").unwrap_or_else(|| panic!("{out}"));
    assert!(!table.contains("wrong"), "causes are details: {out}");
    assert!(
            details.contains(
                "**Failure causes**\n\n- hello\n  - 20 × scenario: item had the wrong \\<name\\>\n  - 3 × io: connection reset by peer\n  \
                 - step login\n    - 3 × io: connection reset by peer\n"
            ),
            "{details}"
        );
    assert!(details.ends_with("\n</details>\n"), "{details}");

    let mut failing = report.clone();
    failing.scenarios[0].config.thresholds = vec!["error_rate<0.01".parse().unwrap_or_else(|e| panic!("{e}"))];
    failing.scenarios[0].thresholds = loadbench::report::check::evaluate(&failing.scenarios[0]);
    let out = render(&Context::new(&failing, 1, None, false));
    assert!(
        out.starts_with(
            "### loadbench results\n\n❌ loadbench: 1 of 1 failed: hello (error\\_rate \\< 0.01 (was 0.0712))\n"
        ),
        "{out}"
    );
}

#[test]
fn step_verdicts_are_rows_of_the_comparison_and_the_heading_names_both_sides() {
    let mut report = sample_report();
    report.scenarios.truncate(1);
    let latency = report.scenarios[0].latency_us.clone();
    let step = |p50: f64| loadbench::report::StepReport {
        name: "search".into(),
        iterations: 300,
        ok: 300,
        failed: 0,
        errors: Default::default(),
        causes: Default::default(),
        latency_us: latency.clone().map(|l| loadbench::report::LatencyReport { p50, p99: p50, ..l }),
    };
    let mut old = report.scenarios[0].clone();
    old.steps = vec![step(1_000.0)];
    old.runs = vec![cargo_loadbench::RunSample::of(&old); 3];
    let new = &mut report.scenarios[0];
    new.steps = vec![step(9_000.0)];
    new.runs = vec![cargo_loadbench::RunSample::of(new); 3];
    new.comparison = Some(crate::compare::compare_with_rows(new, Some(&old), "base", 0.05));
    let mut cx = Context::new(&report, 3, Some("base"), false);
    cx.saves_as = Some("head");
    let out = render(&cx);
    assert!(out.starts_with("### loadbench: `head` compared with baseline `base`\n"), "{out}");
    let row =
        out.lines().find(|l| l.contains("└ search") && l.contains("regressed")).unwrap_or_else(|| panic!("{out}"));
    let cells: Vec<&str> = row.trim_matches('|').split('|').map(str::trim).collect();
    // The first table a reviewer sees: old → new for each compared row, then the verdict.
    assert_eq!(
        cells,
        ["⚠️", "└ search", "-", "1.00ms → 9.00ms (+800.0%)", "1.00ms → 9.00ms (+800.0%)", "regressed (p50, p99)"]
    );
    let first_table = out.find("| scenario ").unwrap_or(usize::MAX);
    assert!(first_table < out.find("thresholds").unwrap_or(0), "old → new before the results: {out}");
    assert!(out.contains("| ⚠️ | \u{a0}\u{a0}\u{a0}\u{a0}└ search "), "{out}");
}
