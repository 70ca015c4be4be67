//! GitHub-flavoured Markdown: a heading, the results table (steps and named requests as rows
//! under their scenario, as in the terminal's table; each scenario's checks as a line below it),
//! and with a baseline the comparison table (against several targets, the side-by-side table);
//! for pull-request comments and `GITHUB_STEP_SUMMARY`.

use comfy_table::{Table, presets};
use loadbench::report::{named, table, units};

use super::{COMPARISON_HEADER, Context, comparison_notes, comparison_row, runs_note, side_by_side, thresholds_cell};

/// The results table's headers: those of the terminal's, with thresholds for bytes.
fn header(cx: &Context) -> Vec<String> {
    let mut header = table::header(&cx.columns);
    header.pop();
    header.push("thresholds".to_owned());
    header
}

/// The Markdown document.
pub fn render(cx: &Context) -> String {
    let mut out = String::from("### loadbench results\n\n");
    let header = header(cx);
    let rows = cx.scenarios().flat_map(|(s, label)| {
        let mut name = label.to_owned();
        if s.interrupted {
            name.push_str(" (interrupted)");
        }
        if let Some(error) = &s.setup_error {
            let mut row = vec!["-".to_owned(); header.len()];
            row[0] = name;
            row[1] = format!("did not run: {error}");
            return vec![row];
        }
        // Each step under its scenario, as in the terminal's table.
        let steps = s.steps.iter().map(|step| table::step_row_with(s, step, &cx.columns));
        let requests = s.requests.iter().map(|request| table::request_row_with(s, request, &cx.columns));
        let mut row = vec![name, units::thousands(s.iterations), units::thousands(s.failed), units::rate(s.rps)];
        row.extend(cx.columns.cells(s.latency_us.as_ref()));
        row.push(thresholds_cell(s));
        std::iter::once(row).chain(steps).chain(requests).collect::<Vec<_>>()
    });
    out.push_str(&markdown_table(&header, rows));
    let checks: Vec<String> = cx
        .scenarios()
        .filter_map(|(s, label)| Some(format!("- {}: {}\n", escape(label), escape(&named::checks_line(s)?))))
        .collect();
    if !checks.is_empty() {
        out.push('\n');
        out.extend(checks);
    }
    if let Some(note) = runs_note(cx) {
        out.push_str(&format!("\n_{note}_\n"));
    }
    let warnings: Vec<String> = cx
        .scenarios()
        .flat_map(|(s, label)| {
            s.warnings.iter().map(move |w| format!("- **warning** {}: {}", escape(label), escape(&w.message)))
        })
        .collect();
    if !warnings.is_empty() {
        out.push('\n');
        for line in warnings {
            out.push_str(&line);
            out.push('\n');
        }
    }
    let comparisons: Vec<Vec<String>> = cx.scenarios().filter_map(|(s, label)| comparison_row(s, label)).collect();
    if let Some(baseline) = cx.baseline
        && !comparisons.is_empty()
    {
        out.push_str(&format!("\n#### Compared with baseline `{baseline}`\n\n"));
        out.push_str(&markdown_table(&COMPARISON_HEADER, comparisons.into_iter()));
        let notes = comparison_notes(cx);
        if !notes.is_empty() {
            out.push('\n');
            for note in notes {
                out.push_str(&format!("- {}\n", escape(&note)));
            }
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
    fn pipes_in_names_are_escaped_and_every_row_has_every_cell() {
        let report = sample_report();
        let out = render(&Context::new(&report, 3, Some("main"), true));
        assert!(out.starts_with("### loadbench results\n\n| scenario "), "{out}");
        assert!(out.contains("| guarded\\|pipe "), "{out}");
        assert!(out.contains("failed: p50 \\< 10ms (was 20.0ms)"), "{out}");
        assert!(out.contains("#### Compared with baseline `main`"), "{out}");
        for line in out.lines().filter(|l| l.starts_with('|')) {
            let cells = line.replace("\\|", "").matches('|').count() - 1;
            assert!(
                cells == header(&Context::new(&report, 1, None, false)).len() || cells == COMPARISON_HEADER.len(),
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
        let rows: Vec<Vec<&str>> = unescaped
            .lines()
            .filter(|l| l.starts_with('|'))
            .map(|l| l.trim_matches('|').split('|').map(str::trim).collect())
            .collect();
        let at = |name: &str| rows.iter().position(|r| r[0] == name).unwrap_or_else(|| panic!("{name}: {out}"));
        assert_eq!(at("└ login"), at(&first) + 1, "{out}");
        assert_eq!(at("└ query"), at(&first) + 2, "{out}");
        assert_eq!(rows[at("└ login")][1..3], ["30", "2"]);
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
            let line = text.lines().find(|l| l.starts_with("| scenario")).unwrap_or_default();
            line.trim_matches('|').split('|').map(|c| c.trim().to_owned()).collect()
        };
        assert_eq!(cells(&out), ["scenario", "requests", "failed", "req/s", "p90", "p99.9", "max", "thresholds"]);
        let warning = format!("\n- **warning** {}: did the body forget \\`.send().await\\`?\n", escape(&first));
        assert!(out.contains(&warning), "{out}");
        let default = render(&Context::new(&report, 1, None, false));
        assert_eq!(cells(&default)[4..8], ["p50", "p95", "p99", "max"], "{default}");
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
        let rows: Vec<Vec<&str>> = out
            .lines()
            .filter(|l| l.starts_with('|'))
            .map(|l| l.trim_matches('|').split('|').map(str::trim).collect())
            .collect();
        assert_eq!(rows[2][..3], ["hello", "300", "0"], "{out}");
        assert_eq!(rows[3][..3], ["↳ GET /items/{id}", "30", "2"], "{out}");
        assert!(rows.iter().all(|r| r.len() == header(&Context::new(&report, 1, None, false)).len()), "{out}");
        assert!(out.contains("\n- hello: checks 99.2% passed: has\\_id 99.2% (992 of 1,000)\n"), "{out}");
    }
}
