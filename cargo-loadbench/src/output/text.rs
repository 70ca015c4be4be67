//! The terminal table: the runtime's results table, then (with a baseline) the comparison table
//! or (against several targets) the side-by-side table, each followed by the lines that explain
//! it.

use comfy_table::{CellAlignment, ContentArrangement, Table, presets};
use loadbench::report::table;

use super::{Context, comparison_notes, comparison_rows, runs_note, side_by_side};

/// The whole text output.
pub fn render(cx: &Context) -> String {
    let rows: Vec<_> = cx.scenarios().map(|(s, label)| (&s.report, label)).collect();
    let mut out = table::render_rows_with(&rows, &cx.columns);
    if let Some(note) = runs_note(cx) {
        out.push_str(&note);
        out.push('\n');
    }
    let rows: Vec<Vec<String>> = cx.scenarios().flat_map(|(s, label)| comparison_rows(s, label)).collect();
    if let Some(title) = cx.comparison_title(str::to_owned)
        && !rows.is_empty()
    {
        out.push_str(&format!("\n{title}:\n"));
        out.push_str(&ascii_table(cx.comparison_header(), rows, 1));
        for note in comparison_notes(cx) {
            out.push_str(&note);
            out.push('\n');
        }
    }
    if let Some(reference) = side_by_side::reference(cx) {
        out.push_str(&format!("\n{}:\n", side_by_side::title(reference)));
        out.push_str(&ascii_table(&side_by_side::HEADER, side_by_side::rows(cx, reference), 2));
        for note in side_by_side::notes(cx, reference) {
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

/// A table in the runtime's style, its columns after the first `names` and before the last
/// (the verdict) right-aligned, with a closing newline.
fn ascii_table(header: &[&str], rows: Vec<Vec<String>>, names: usize) -> String {
    let mut table = Table::new();
    // As the runtime's table: the same on a terminal, in a CI log and in a test.
    table
        .load_style(presets::ASCII_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(header.iter().copied());
    for row in rows {
        table.add_row(row);
    }
    for column in table.column_iter_mut().skip(names).take(header.len().saturating_sub(names + 1)) {
        column.set_cell_alignment(CellAlignment::Right);
    }
    let mut out = table.to_string();
    out.push('\n');
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
        assert!(row.contains("| regressed (it/s, p50, p99) |"), "{comparison}");
        let fresh = comparison.lines().find(|l| l.starts_with("| fresh ")).unwrap_or_default();
        let cells: Vec<&str> = fresh.trim_matches('|').split('|').map(str::trim).collect();
        assert_eq!(cells.last(), Some(&"new"), "{comparison}");
        assert!(comparison.contains("A change counts when its 95% confidence interval (bootstrap over 3 runs against 3 in the baseline) lies wholly beyond ±5% (±15% for p99)."), "{comparison}");
        assert!(comparison.contains("Regressions do not fail the run without --fail-on-regression."), "{comparison}");
        assert!(!render(&Context::new(&report, 3, Some("main"), true)).contains("do not fail the run"));
    }

    #[test]
    fn several_targets_get_the_side_by_side_table_after_the_results() {
        let mut report = sample_report();
        report.scenarios.truncate(1);
        report.scenarios[0].comparison = None;
        let mut slow = report.scenarios[0].clone();
        slow.target_name = Some("slow".into());
        slow.rps /= 3.0;
        for run in &mut slow.runs {
            run.rps /= 3.0;
        }
        report.scenarios[0].target_name = Some("fast".into());
        report.scenarios.push(slow);
        crate::targets::compare_with_first(&mut report, "fast", 0.05);
        let out = render(&Context::new(&report, 3, None, false));
        let (results, side) = out
            .split_once("\nSide by side, each target against `fast` (the first):\n")
            .unwrap_or_else(|| panic!("{out}"));
        assert!(results.contains("| hello [fast] ") && results.contains("| hello [slow] "), "{results}");
        let header = side.lines().nth(1).unwrap_or_default();
        assert!(header.starts_with("| scenario | target | it/s | ratio |"), "{side}");
        let slow = side.lines().find(|l| l.contains("| slow ")).unwrap_or_default();
        let cells: Vec<&str> = slow.trim_matches('|').split('|').map(str::trim).collect();
        assert_eq!(cells, ["hello", "slow", "81.7", "0.33×", "20.3ms", "1.00×", "40.6ms", "1.00×", "worse (it/s)"]);
        assert!(side.contains("Ratios are each target's median over `fast`'s"), "{side}");

        report.scenarios.truncate(1);
        assert!(!render(&Context::new(&report, 3, None, false)).contains("Side by side"), "one target: no table");
    }

    /// The cells of the results table's row named `name`.
    fn cells(table: &str, name: &str) -> Vec<String> {
        table
            .lines()
            .map(|line| line.trim_matches('|').split('|').map(|c| c.trim().to_owned()).collect::<Vec<_>>())
            .find(|cells| cells.first().is_some_and(|c| c == name))
            .unwrap_or_else(|| panic!("no row `{name}` in\n{table}"))
    }

    /// `hello` of `shop/api`, as the results of one run.
    fn one(name: &str) -> cargo_loadbench::ScenarioResult {
        let mut report = sample_report();
        report.scenarios.truncate(1);
        let mut hello = report.scenarios.remove(0);
        hello.report.name = name.to_owned();
        hello.comparison = None;
        hello
    }

    fn table_of(scenarios: Vec<cargo_loadbench::ScenarioResult>) -> String {
        let mut report = sample_report();
        report.scenarios = scenarios;
        render(&Context::new(&report, 1, None, false))
    }

    #[test]
    fn names_are_qualified_only_when_several_targets_ran() {
        let mut other = one("hello");
        other.bench = Some("admin".into());
        let out = table_of(vec![one("hello"), other.clone()]);
        assert_eq!(cells(&out, "api/hello")[1], "300");
        assert_eq!(cells(&out, "admin/hello")[1], "300");
        other.package = Some("market".into());
        let out = table_of(vec![one("hello"), other]);
        assert_eq!(cells(&out, "shop/api/hello")[1], "300");
        assert_eq!(cells(&out, "market/admin/hello")[1], "300");
        assert_eq!(cells(&table_of(vec![one("hello"), one("status")]), "status")[1], "300", "one target: bare names");
    }

    #[test]
    fn names_carry_the_server_only_when_several_ran() {
        let mut fast = one("hello");
        fast.target_name = Some("fast".into());
        let mut slow = fast.clone();
        slow.target_name = Some("slow".into());
        slow.failed = 3;
        let out = table_of(vec![fast.clone(), slow]);
        assert_eq!(cells(&out, "hello [fast]")[2], "0");
        assert_eq!(cells(&out, "hello [slow]")[2], "3");
        assert!(out.contains("\nhello [slow]: 3 of 300 iterations failed"), "{out}");
        let alone = table_of(vec![fast]);
        assert_eq!(cells(&alone, "hello")[1], "300", "one named server is not worth naming");
    }

    #[test]
    fn without_a_baseline_it_is_the_runtime_table() {
        let mut report = sample_report();
        for s in &mut report.scenarios {
            s.comparison = None;
        }
        let cx = Context::new(&report, 1, None, false);
        let rows: Vec<_> = report.scenarios.iter().map(|s| (&s.report, s.name.as_str())).collect();
        assert_eq!(render(&cx), table::render_rows(&rows));
    }
}
