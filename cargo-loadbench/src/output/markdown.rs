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
    table.load_style(presets::ASCII_MARKDOWN).set_header(header.iter().map(AsRef::as_ref));
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
mod tests;
