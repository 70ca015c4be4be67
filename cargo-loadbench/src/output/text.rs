//! The terminal table: the runtime's results table, then (with a baseline) the comparison table,
//! each followed by the lines that explain it.

use comfy_table::{CellAlignment, ContentArrangement, Table, presets};
use loadbench::table;

use super::{COMPARISON_HEADER, Context, comparison_notes, comparison_row, runs_note};

/// The whole text output.
pub fn render(cx: &Context) -> String {
    let mut out = table::render(cx.report);
    if let Some(note) = runs_note(cx) {
        out.push_str(&note);
        out.push('\n');
    }
    let rows: Vec<Vec<String>> = cx.scenarios().filter_map(|(s, label)| comparison_row(s, label)).collect();
    if let Some(baseline) = cx.baseline
        && !rows.is_empty()
    {
        out.push_str(&format!("\nCompared with baseline `{baseline}`:\n"));
        let mut comparison = Table::new();
        // As the runtime's table: the same on a terminal, in a CI log and in a test.
        comparison
            .load_style(presets::ASCII_FULL_CONDENSED)
            .force_no_tty()
            .set_content_arrangement(ContentArrangement::Disabled)
            .set_header(COMPARISON_HEADER);
        for row in rows {
            comparison.add_row(row);
        }
        for column in comparison.column_iter_mut().skip(1).take(COMPARISON_HEADER.len() - 2) {
            column.set_cell_alignment(CellAlignment::Right);
        }
        out.push_str(&comparison.to_string());
        out.push('\n');
        for note in comparison_notes(cx) {
            out.push_str(&note);
            out.push('\n');
        }
    }
    for note in &cx.notes {
        out.push_str(note);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::tests::sample_report;
    use super::*;

    #[test]
    fn the_comparison_follows_the_results_with_its_explanations() {
        let report = sample_report();
        let cx = Context::new(&report, 3, Some("main"), false);
        let out = render(&cx);
        let (results, comparison) =
            out.split_once("\nCompared with baseline `main`:\n").unwrap_or_else(|| panic!("{out}"));
        assert!(results.contains("| hello "), "{results}");
        assert!(results.contains("guarded|pipe: threshold failed: p50 < 10ms (was 20.0ms)"), "{results}");
        assert!(results.contains("3 runs of each scenario, in rounds"), "{results}");
        let row = comparison.lines().find(|l| l.starts_with("| hello ")).unwrap_or_default();
        assert!(row.contains("| regressed (req/s, p50, p99) |"), "{comparison}");
        let fresh = comparison.lines().find(|l| l.starts_with("| fresh ")).unwrap_or_default();
        let cells: Vec<&str> = fresh.trim_matches('|').split('|').map(str::trim).collect();
        assert_eq!(cells.last(), Some(&"new"), "{comparison}");
        assert!(comparison.contains("A change counts when its 95% confidence interval (bootstrap over 3 runs against 3 in the baseline) lies wholly beyond ±5% (±15% for p99)."), "{comparison}");
        assert!(comparison.contains("Regressions do not fail the run without --fail-on-regression."), "{comparison}");
        assert!(!render(&Context::new(&report, 3, Some("main"), true)).contains("do not fail the run"));
    }

    #[test]
    fn without_a_baseline_it_is_the_runtime_table() {
        let mut report = sample_report();
        for s in &mut report.scenarios {
            s.comparison = None;
        }
        let cx = Context::new(&report, 1, None, false);
        assert_eq!(render(&cx), table::render(&report));
    }
}
