//! GitHub-flavoured Markdown, for pull-request comments and `GITHUB_STEP_SUMMARY`: a heading
//! (naming the baseline when comparing), a one-line verdict (`❌ loadbench: 1 of 5 failed:
//! checkout (p99 < 50ms (was 61.0ms))`), the results table with a ✅/⚠️/❌ mark per row (see
//! [`super::status`]) and each step (`└`) and named request (`↳`) indented under its scenario
//! with non-breaking spaces (a table cell's plain spaces are trimmed), then the details in a
//! collapsible `<details>` block: thresholds, failure causes, checks, warnings, the comparison
//! with the baseline (steps and named requests included) or the side-by-side table, and notes.

use comfy_table::{Table, presets};
use loadbench::report::{named, table, units};

use super::status::{self, Mark};
use super::{Context, comparison_notes, old_to_new_rows, runs_note, side_by_side, thresholds_cell};

/// The results table's headers: the mark, then those of the terminal's, with thresholds for
/// bytes.
fn header(cx: &Context) -> Vec<String> {
    let mut header = table::header(&cx.columns);
    header.pop();
    header.push("thresholds".to_owned());
    header.insert(0, String::new());
    header
}

/// The heading: `loadbench results`, or with a baseline `loadbench: `head` compared with
/// baseline `base`` (the run's own name is the baseline it saves, if it saves one), or with `cargo
/// loadbench ab` `loadbench: head `5e6f7a8` compared with base `1a2b3c4``.
pub fn heading(cx: &Context) -> String {
    if let Some(commits) = cx.commits {
        return format!("loadbench: head `{}` compared with base `{}`", commits.head.short, commits.base.short);
    }
    match cx.baseline {
        Some(baseline) => {
            let head = cx.saves_as.map_or_else(|| "this run".to_owned(), |name| format!("`{name}`"));
            format!("loadbench: {head} compared with baseline `{baseline}`")
        }
        None => "loadbench results".to_owned(),
    }
}

/// The one-line verdict: `✅ loadbench: 5 scenarios passed`, `⚠️ loadbench: 5 scenarios passed,
/// 1 with warnings: hello (…)`, `❓ loadbench: 1 of 5 inconclusive, …`, `❌ loadbench: 1 of 5
/// failed: checkout (p99 < 50ms (was 61.0ms))`.
pub fn verdict_line(cx: &Context) -> String {
    let (mark, text) = status::run(cx, |t| escape(t).to_string());
    format!("{} loadbench: {text}", mark.emoji())
}

/// `  └ login` with its leading spaces non-breaking, which a Markdown table keeps.
fn indented(cell: &str) -> String {
    let rest = cell.trim_start_matches(' ');
    format!("{}{rest}", "\u{a0}".repeat(2 * (cell.len() - rest.len())))
}

/// The columns of [`old_to_new`]: the mark, the scenario, it/s, p50, p99 and the verdict.
const OLD_TO_NEW_COLUMNS: usize = 6;

/// The first table when the run was compared (with a baseline, or base and head): each scenario
/// and its compared rows, old → new for it/s, p50 and p99 with the change, and the verdict, so
/// that a reviewer sees the numbers before the details; empty otherwise.
fn old_to_new(cx: &Context) -> String {
    let rows: Vec<Vec<String>> = cx
        .scenarios()
        .flat_map(|(s, label)| {
            // Each row's mark, as the results table marks it: the scenario's, then each compared
            // step's and named request's, in the order `old_to_new_rows` lists them.
            let own = status::scenario(cx, s).mark;
            let compared = status::rows(s).filter(|r| r.comparison.is_some()).map(|r| status::row(cx, &r).mark);
            let mut rows = old_to_new_rows(s, label);
            for (row, mark) in rows.iter_mut().zip(std::iter::once(own).chain(compared)) {
                row[0] = indented(&row[0]);
                row.insert(0, mark.emoji().to_owned());
            }
            rows
        })
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    let (old, new) = if cx.commits.is_some() { ("base", "head") } else { ("old", "new") };
    let header: [String; OLD_TO_NEW_COLUMNS] = [
        "".to_owned(),
        "scenario".to_owned(),
        format!("it/s {old} → {new}"),
        format!("p50 {old} → {new}"),
        format!("p99 {old} → {new}"),
        "verdict".to_owned(),
    ];
    let mut out = markdown_table(&header, rows.into_iter());
    out.push('\n');
    out
}

/// The Markdown document: the heading, the verdict, the old → new table when compared, the
/// results table, then the details.
pub fn render(cx: &Context) -> String {
    let mut out = format!("### {}\n\n{}\n\n", heading(cx), verdict_line(cx));
    out.push_str(&old_to_new(cx));
    let header = header(cx);
    let rows = cx.scenarios().flat_map(|(s, label)| {
        let mark = status::scenario(cx, s).mark.emoji().to_owned();
        let mut name = label.to_owned();
        if s.interrupted {
            name.push_str(" (interrupted)");
        }
        if let Some(error) = &s.setup_error {
            let mut row = vec!["-".to_owned(); header.len()];
            row[0] = mark;
            row[1] = name;
            row[2] = format!("did not run: {error}");
            return vec![row];
        }
        // Each step and named request under its scenario, as in the terminal's table.
        let rows = status::rows(s).map(|row| {
            let mut cells = if row.kind == "step" {
                table::step_row_with(s, row.report, &cx.columns)
            } else {
                table::request_row_with(s, row.report, &cx.columns)
            };
            cells[0] = indented(&cells[0]);
            cells.insert(0, status::row(cx, &row).mark.emoji().to_owned());
            cells
        });
        let mut row = vec![
            mark,
            name,
            units::thousands(s.iterations),
            units::thousands(s.failed),
            units::thousands(s.http.responses),
            units::rate(s.responses_per_sec()),
        ];
        row.extend(cx.columns.cells(s.latency_us.as_ref()));
        row.push(thresholds_cell(s));
        std::iter::once(row).chain(rows).collect::<Vec<_>>()
    });
    out.push_str(&markdown_table(&header, rows));
    let details = details(cx);
    if !details.is_empty() {
        out.push_str("\n<details><summary>Details: thresholds, failure causes, checks, comparisons</summary>\n");
        out.push_str(&details);
        out.push_str("\n</details>\n");
    }
    out.push_str(&html_reports_line(cx));
    out
}

/// The last line when HTML reports were written beside the Markdown, saying where they are; empty
/// without any.
fn html_reports_line(cx: &Context) -> String {
    if cx.html_reports.is_empty() {
        return String::new();
    }
    let pages: Vec<String> = cx.html_reports.iter().map(|p| format!("`{}`", p.display())).collect();
    format!("\n📊 HTML report: {}, in this run's artifacts (download and open it in a browser).\n", pages.join(", "))
}

/// What goes in the `<details>` block, each part after a blank line; empty when there is nothing.
fn details(cx: &Context) -> String {
    let mut out = String::new();
    let mut list = |title: &str, lines: Vec<String>| {
        if !lines.is_empty() {
            out.push_str(&format!("\n**{title}**\n\n"));
            for line in lines {
                out.push_str(&line);
                out.push('\n');
            }
        }
    };
    let thresholds = cx.scenarios().flat_map(|(s, label)| {
        s.thresholds.iter().map(move |o| {
            let mark = match (o.passed, o.threshold.metric.is_generator()) {
                (true, _) => Mark::Pass,
                (false, true) => Mark::Inconclusive,
                (false, false) => Mark::Fail,
            };
            format!("- {} {}: {}", mark.emoji(), escape(label), escape(&o.to_string()))
        })
    });
    list("Thresholds", thresholds.collect());
    let mut causes = Vec::new();
    for (s, label) in cx.scenarios() {
        let own = status::cause_lines(&s.causes);
        let rows: Vec<(String, Vec<String>)> = status::rows(s)
            .map(|row| (format!("{} {}", row.kind, row.report.name), status::cause_lines(&row.report.causes)))
            .filter(|(_, lines)| !lines.is_empty())
            .collect();
        if own.is_empty() && rows.is_empty() {
            continue;
        }
        causes.push(format!("- {}", escape(label)));
        causes.extend(own.iter().map(|line| format!("  - {}", escape(line))));
        for (row, lines) in rows {
            causes.push(format!("  - {}", escape(&row)));
            causes.extend(lines.iter().map(|line| format!("    - {}", escape(line))));
        }
    }
    list("Failure causes", causes);
    let checks = cx
        .scenarios()
        .filter_map(|(s, label)| Some(format!("- {}: {}", escape(label), escape(&named::checks_line(s)?))));
    list("Checks", checks.collect());
    let warnings = cx.scenarios().flat_map(|(s, label)| {
        s.warnings.iter().map(move |w| format!("- **warning** {}: {}", escape(label), escape(&w.message)))
    });
    list("Warnings", warnings.collect());
    if let Some(note) = runs_note(cx) {
        out.push_str(&format!("\n_{note}_\n"));
    }
    // The comparison's numbers are the first table; how its verdicts were reached is here.
    let compared = cx.scenarios().any(|(s, _)| s.comparison.is_some());
    if let Some(title) = cx.comparison_title(escape)
        && compared
    {
        out.push_str(&format!("\n#### {title}\n\n"));
        for note in comparison_notes(cx) {
            out.push_str(&format!("- {}\n", escape(&note)));
        }
    }
    if let Some(reference) = side_by_side::reference(cx) {
        out.push_str(&format!("\n#### {}\n\n", side_by_side::title(reference)));
        out.push_str(&markdown_table(&side_by_side::HEADER, side_by_side::rows(cx, reference).into_iter()));
        out.push('\n');
        for note in side_by_side::notes(cx, reference) {
            out.push_str(&format!("- {}\n", escape(&note)));
        }
    }
    for note in &cx.notes {
        out.push_str(&format!("\n{}\n", escape(note)));
    }
    out
}

/// A pipe table from comfy-table's Markdown preset, with cells escaped.
fn markdown_table<S: AsRef<str>>(header: &[S], rows: impl Iterator<Item = Vec<String>>) -> String {
    let mut table = Table::new();
    table.load_style(presets::ASCII_MARKDOWN).force_no_tty().set_header(header.iter().map(AsRef::as_ref));
    for row in rows {
        table.add_row(row.iter().map(|cell| escape(cell)));
    }
    let mut out = table.to_string();
    out.push('\n');
    out
}

/// A cell's text with the characters that would break a GitHub table or turn into markup
/// escaped: `|` ends a cell, and `*`, `_`, `` ` ``, `<`, `[` start formatting.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '|' | '\\' | '*' | '_' | '`' | '<' | '>' | '[' | ']') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
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
        let last =
            "\n📊 HTML report: `out/loadbench.html`, in this run's artifacts (download and open it in a browser).\n";
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
            assert!(
                cells == header(&Context::new(&report, 1, None, false)).len() || cells == OLD_TO_NEW_COLUMNS,
                "{line}"
            );
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
        assert_eq!(
            rows[at("└ login")][..6],
            ["⚠️", "└ login", "30", "2", "-", "18.7"],
            "a step whose runs failed: {out}"
        );
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
        report.scenarios[0].checks =
            vec![loadbench::report::CheckReport { name: "has_id".into(), passes: 992, fails: 8 }];
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
            causes: loadbench::report::Causes::from_counts([(
                ("io".to_owned(), "connection reset by peer".to_owned()),
                3,
            )]),
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
}
