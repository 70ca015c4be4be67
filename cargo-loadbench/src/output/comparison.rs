//! The comparison table that the text, Markdown and HTML outputs share: with a baseline, old
//! and new; with `cargo loadbench ab`, base and head; each row's change and verdict, its steps'
//! and named requests' rows under it, its title, and the notes that explain it.

use cargo_loadbench::{Commit, Commits, ComparedMetric, Comparison, Method, ScenarioResult, Verdict};
use loadbench::report::units;

use super::{Context, status};

impl Context<'_> {
    /// What the run is compared with, as the notes and the gate's line name it
    /// ([`Comparison::reference`] of its comparisons): ``baseline `main` ``, ``base `1a2b3c4` ``;
    /// `None` when no scenario was compared.
    pub fn against(&self) -> Option<String> {
        self.report.scenarios.iter().find_map(|s| s.comparison.as_ref()).map(Comparison::reference)
    }

    /// The comparison table's title: ``Compared with baseline `main` ``, or with `cargo loadbench
    /// ab` ``Head `5e6f7a8` (Cache the page) compared with base `1a2b3c4` (Add a page), in 6
    /// paired rounds``, each commit's subject passed through `subject` (an escaper).
    pub fn comparison_title(&self, subject: impl Fn(&str) -> String) -> Option<String> {
        match (self.commits, self.baseline) {
            (Some(Commits { base, head }), _) => {
                let commit = |c: &Commit| {
                    let uncommitted = if c.uncommitted { ", with uncommitted changes" } else { "" };
                    format!("`{}` ({}{uncommitted})", c.short, subject(&c.subject))
                };
                let rounds = if self.runs == 1 { "1 round".to_owned() } else { format!("{} paired rounds", self.runs) };
                Some(format!("Head {} compared with base {}, in {rounds}", commit(head), commit(base)))
            }
            (None, Some(baseline)) => Some(format!("Compared with baseline `{baseline}`")),
            (None, None) => None,
        }
    }
}

/// The comparison table's header.
pub(super) const COMPARISON_HEADER: [&str; 11] = [
    "scenario", "it/s old", "it/s new", "change", "p50 old", "p50 new", "change", "p99 old", "p99 new", "change",
    "verdict",
];

/// [`COMPARISON_HEADER`] as `cargo loadbench ab` names its sides: base and head.
const AB_HEADER: [&str; 11] = [
    "scenario",
    "it/s base",
    "it/s head",
    "change",
    "p50 base",
    "p50 head",
    "change",
    "p99 base",
    "p99 head",
    "change",
    "verdict",
];

impl Context<'_> {
    /// The comparison table's header: old and new, or base and head.
    pub(super) fn comparison_header(&self) -> &'static [&'static str; 11] {
        if self.commits.is_some() { &AB_HEADER } else { &COMPARISON_HEADER }
    }
}

/// One row of the comparison table for `scenario`, or `None` when it was not compared.
pub(super) fn comparison_row(scenario: &ScenarioResult, label: &str) -> Option<Vec<String>> {
    Some(compared_cells(label.to_owned(), scenario.comparison.as_ref()?))
}

/// The rows of the comparison table for `scenario`: its own, then one per compared step
/// (`  └ login`) and named request (`  ↳ GET /items/{id}`), as in the results table; none when
/// it was not compared.
pub(super) fn comparison_rows(scenario: &ScenarioResult, label: &str) -> Vec<Vec<String>> {
    let Some(own) = comparison_row(scenario, label) else {
        return Vec::new();
    };
    let rows = status::rows(scenario).filter_map(|row| {
        let marker = if row.kind == "step" { "└" } else { loadbench::report::named::REQUEST_MARKER };
        Some(compared_cells(format!("  {marker} {}", row.report.name), row.comparison?))
    });
    std::iter::once(own).chain(rows).collect()
}

/// A comparison's cells after the name: old, new and change of it/s, p50 and p99 (`-` where not
/// compared), and the verdict.
fn compared_cells(name: String, comparison: &Comparison) -> Vec<String> {
    let mut row = vec![name];
    for metric in [ComparedMetric::Rps, ComparedMetric::P50, ComparedMetric::P99] {
        match comparison.metrics.iter().find(|m| m.metric == metric) {
            Some(m) => row.extend([metric.show(m.old), metric.show(m.new), units::change(m.change)]),
            None => row.extend(["-".to_owned(), "-".to_owned(), "-".to_owned()]),
        }
    }
    row.push(verdict_cell(comparison));
    row
}

/// The reviewer's rows of the comparison for `scenario`: its own, then its compared steps and
/// named requests, each with it/s, p50 and p99 as `761 → 382 (-49.8%)` (`-` where not compared)
/// and the verdict; none when it was not compared. Markdown's first table, where a reviewer looks.
pub(super) fn old_to_new_rows(scenario: &ScenarioResult, label: &str) -> Vec<Vec<String>> {
    comparison_rows(scenario, label)
        .into_iter()
        .map(|row| {
            // [name, then (old, new, change) × 3, verdict]
            let mut cells = vec![row[0].clone()];
            for triple in row[1..10].chunks(3) {
                cells.push(match triple {
                    [old, new, change] if old != "-" => format!("{old} → {new} ({change})"),
                    _ => "-".to_owned(),
                });
            }
            cells.push(row[10].clone());
            cells
        })
        .collect()
}

/// `regressed (p99, it/s)`, `improved (p50)`, `no change`, `new`, `not comparable`. The
/// success rate is named first, as the verdict weighs it first.
pub(super) fn verdict_cell(comparison: &Comparison) -> String {
    let named = |verdict: Verdict| {
        let mut metrics: Vec<ComparedMetric> =
            comparison.metrics.iter().filter(|m| m.verdict == verdict).map(|m| m.metric).collect();
        metrics.sort_by_key(|&m| m != ComparedMetric::SuccessRate);
        metrics.into_iter().map(ComparedMetric::label).collect::<Vec<_>>()
    };
    match comparison.verdict {
        v @ (Verdict::Regressed | Verdict::Improved) => format!("{} ({})", v.label(), named(v).join(", ")),
        other => other.label().to_owned(),
    }
}

/// The lines that explain a comparison table: how verdicts were reached, and why some scenarios
/// have none.
pub(super) fn comparison_notes(cx: &Context) -> Vec<String> {
    let compared: Vec<(&ScenarioResult, &str)> = cx.scenarios().filter(|(s, _)| s.comparison.is_some()).collect();
    let mut notes = Vec::new();
    let Some(noise) = compared.iter().find_map(|(s, _)| s.comparison.as_ref()).map(|c| c.noise_threshold) else {
        return notes;
    };
    let noise = noise_bands(noise);
    let methods = |method: Method| {
        compared.iter().filter(move |(s, _)| s.comparison.as_ref().is_some_and(|c| c.method == method))
    };
    if let Some((s, _)) = methods(Method::Bootstrap).next()
        && let Some(c) = &s.comparison
    {
        notes.push(format!(
            "A change counts when its 95% confidence interval (bootstrap over {} runs against {} in the baseline) lies wholly beyond ±{noise}.",
            c.runs, c.baseline_runs
        ));
    }
    if let Some((s, _)) = methods(Method::Paired).next()
        && let Some(c) = &s.comparison
    {
        notes.push(format!(
            "A change is the median of the rounds' ratios head / base; it counts when its 95% confidence interval (bootstrap over {} paired rounds) lies wholly beyond ±{noise}.",
            c.runs
        ));
    }
    let single: Vec<&str> = methods(Method::SingleRun).map(|(_, label)| *label).collect();
    if !single.is_empty() && cx.commits.is_some() {
        notes.push(format!(
            "Verdict from one round ({}): a change counts when it is beyond ±{noise}, with no spread to judge the noise by; use --rounds 3 or more.",
            single.join(", ")
        ));
    } else if !single.is_empty() {
        notes.push(format!(
            "Verdict from one run ({}): a change counts when it is beyond ±{noise}, with no spread to judge the noise by; use --runs 3 or more on both sides.",
            single.join(", ")
        ));
    }
    for (s, label) in &compared {
        if let Some(c) = &s.comparison {
            if c.verdict == Verdict::New && c.commits.is_some() {
                notes.push(format!("{label}: new scenario: not in the base"));
            } else if c.verdict == Verdict::New {
                notes.push(format!("{label}: new scenario: no baseline"));
            }
            if c.verdict == Verdict::NotComparable {
                notes.push(format!("{label}: not comparable: {}", c.reason.as_deref().unwrap_or("unknown reason")));
            }
            if let Some(success) =
                c.metrics.iter().find(|m| m.metric == ComparedMetric::SuccessRate && m.verdict == Verdict::Regressed)
            {
                notes.push(format!(
                    "{label}: success rate {} → {}",
                    success.metric.show(success.old),
                    success.metric.show(success.new)
                ));
            }
        }
    }
    if !cx.fail_on_regression && compared.iter().any(|(s, _)| crate::gate::regressed_anywhere(s)) {
        notes.push("Regressions do not fail the run without --fail-on-regression.".to_owned());
    }
    notes
}

/// `5% (±15% for p99)`: the noise bands of a noise threshold (a fraction), for the notes.
pub(super) fn noise_bands(noise: f64) -> String {
    let band = |factor: f64| format!("{}%", (noise * factor * 1_000.0).round() / 10.0);
    format!("{} (±{} for p99)", band(1.0), band(crate::compare::TAIL_NOISE_FACTOR))
}

#[cfg(test)]
mod tests {
    use super::super::tests::sample_report;
    use super::super::{Format, render};
    use super::*;
    use cargo_loadbench::Results;

    /// [`sample_report`]'s `hello`, regressed in 3 paired rounds against a base four times as
    /// fast, as `cargo loadbench ab` leaves it; the head with uncommitted changes.
    fn ab_report() -> Results {
        let mut report = sample_report();
        report.scenarios.truncate(1);
        let mut base = report.scenarios[0].clone();
        base.rps *= 4.0;
        for run in &mut base.runs {
            run.rps *= 4.0;
        }
        let hello = &mut report.scenarios[0];
        let mut comparison = crate::compare::compare_paired(hello, Some(&base), "1a2b3c4", 0.05);
        let commit = |sha: &str, subject: &str, uncommitted| Commit {
            sha: sha.repeat(8),
            short: sha.repeat(2).chars().take(7).collect(),
            subject: subject.into(),
            uncommitted,
        };
        comparison.commits = Some(Commits {
            base: commit("1a2b3c4d", "Add a <cache> | fast", false),
            head: commit("5e6f7a8b", "Drop the cache", true),
        });
        hello.comparison = Some(comparison);
        report
    }

    #[test]
    fn every_format_names_both_commits_and_calls_the_sides_base_and_head() {
        let report = ab_report();
        let cx = Context::new(&report, 3, None, true);
        assert_eq!(cx.against().as_deref(), Some("base `1a2b3c4`"));

        let table = render(Format::Table, &cx).unwrap_or_default();
        let title = "Head `5e6f7a8` (Drop the cache, with uncommitted changes) compared with base `1a2b3c4` (Add a <cache> | fast), in 3 paired rounds:";
        assert!(table.contains(title), "{table}");
        assert!(table.contains("| scenario | it/s base | it/s head | change |"), "{table}");
        assert!(table.contains("A change is the median of the rounds' ratios head / base; it counts when its 95% confidence interval (bootstrap over 3 paired rounds)"), "{table}");

        let markdown = render(Format::Markdown, &cx).unwrap_or_default();
        assert!(markdown.starts_with("### loadbench: head `5e6f7a8` compared with base `1a2b3c4`\n"), "{markdown}");
        assert!(markdown.contains("(Add a \\<cache\\> \\| fast)"), "subjects escaped: {markdown}");
        assert!(markdown.contains("regressed (it/s) against base \\`1a2b3c4\\`"), "{markdown}");

        let junit = render(Format::Junit, &cx).unwrap_or_default();
        let xml = roxmltree::Document::parse(&junit).unwrap_or_else(|e| panic!("{e}: {junit}"));
        let name = xml.root_element().attribute("name").unwrap_or_default();
        assert_eq!(
            name,
            "loadbench: head 5e6f7a8 (Drop the cache) with uncommitted changes compared with base 1a2b3c4 (Add a <cache> | fast)"
        );
        let property = |key: &str| {
            xml.descendants()
                .find(|n| n.attribute("name") == Some(key))
                .and_then(|n| n.attribute("value"))
                .unwrap_or_default()
        };
        assert_eq!(property("loadbench.base"), format!("{} Add a <cache> | fast", "1a2b3c4d".repeat(8)));
        assert!(junit.contains("base `1a2b3c4`: regressed: it/s "), "{junit}");

        let html = render(Format::Html, &cx).unwrap_or_default();
        assert!(html.contains("Head <code>5e6f7a8</code> (Drop the cache, with uncommitted changes) compared with base <code>1a2b3c4</code> (Add a &lt;cache&gt; | fast), in 3 paired rounds."), "{html}");
        assert!(html.contains("<h3>Compared with base 1a2b3c4</h3>"), "the section's comparison table");

        let json = render(Format::Json, &cx).unwrap_or_default();
        let back: Results = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}"));
        let c = back.scenarios[0].comparison.as_ref().and_then(|c| c.commits.as_ref()).map(|c| c.head.uncommitted);
        assert_eq!(c, Some(true), "read back, a saved ab run is rendered as one again");
        assert_eq!(Context::new(&back, 3, None, true).against().as_deref(), Some("base `1a2b3c4`"));
    }
}
