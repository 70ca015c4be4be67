//! The side-by-side table of a run against several `--target NAME=URL`s: per scenario, one row
//! per target with its it/s, p50 and p99, their ratios to the first target's, and whether the
//! difference is beyond the noise ([`crate::targets`] computes it). The text and Markdown
//! outputs show it after the results table; CSV adds its columns to each row.

use cargo_loadbench::{ComparedMetric, Comparison, Method, ScenarioResult, Verdict};
use loadbench::report::units;

use super::{Context, noise_bands};
use crate::targets;

/// The side-by-side table's header.
pub const HEADER: [&str; 9] = ["scenario", "target", "it/s", "ratio", "p50", "ratio", "p99", "ratio", "verdict"];

/// The metrics the table shows, in its column order.
const SHOWN: [ComparedMetric; 3] = [ComparedMetric::Rps, ComparedMetric::P50, ComparedMetric::P99];

/// The first target's name, when the run compared several.
pub fn reference<'a>(cx: &Context<'a>) -> Option<&'a str> {
    targets::reference(cx.report)
}

/// The table's title: `Side by side, each target against `fast` (the first):`, without the
/// colon.
pub fn title(reference: &str) -> String {
    format!("Side by side, each target against `{reference}` (the first)")
}

/// One row per scenario and target, in the order they ran: each scenario's targets together.
pub fn rows(cx: &Context, reference: &str) -> Vec<Vec<String>> {
    cx.scenarios()
        .map(|(s, label)| {
            let target = s.target_name.as_deref().unwrap_or("-");
            let mut row = vec![scenario_label(label, s), target.to_owned()];
            for metric in SHOWN {
                let value = figure(s, metric).map_or_else(|| "-".to_owned(), |v| metric.show(v));
                let ratio = if s.setup_error.is_some() {
                    "-".to_owned()
                } else if s.target_name.as_deref() == Some(reference) {
                    ratio_text(1.0)
                } else {
                    ratio_of(s, metric).map_or_else(|| "-".to_owned(), ratio_text)
                };
                row.extend([value, ratio]);
            }
            row.push(match &s.side_by_side {
                Some(c) => verdict_cell(c),
                None if s.target_name.as_deref() == Some(reference) => "reference".to_owned(),
                None => "-".to_owned(),
            });
            row
        })
        .collect()
}

/// The table's label of `s` without the target, which has a column of its own here.
fn scenario_label(label: &str, s: &ScenarioResult) -> String {
    let suffix = s.target_name.as_deref().map(|t| format!(" [{t}]")).unwrap_or_default();
    label.strip_suffix(&suffix).unwrap_or(label).to_owned()
}

/// The scenario's (median) figure for `metric`.
fn figure(s: &ScenarioResult, metric: ComparedMetric) -> Option<f64> {
    if s.setup_error.is_some() {
        return None;
    }
    match metric {
        ComparedMetric::Rps => Some(s.rps),
        ComparedMetric::P50 => s.latency_us.as_ref().map(|l| l.p50),
        ComparedMetric::P99 => s.latency_us.as_ref().map(|l| l.p99),
        ComparedMetric::SuccessRate => (s.iterations > 0).then(|| s.ok as f64 / s.iterations as f64),
    }
}

/// This target's median of `metric` over the first target's, when both were measured.
pub fn ratio_of(s: &ScenarioResult, metric: ComparedMetric) -> Option<f64> {
    let change = s.side_by_side.as_ref()?.metrics.iter().find(|m| m.metric == metric)?;
    (change.old > 0.0).then(|| change.new / change.old)
}

/// `0.33×`, `2.95×`, `12.4×`, `1,234×`: three significant digits, as latencies are shown.
pub fn ratio_text(ratio: f64) -> String {
    if !ratio.is_finite() || ratio < 0.0 {
        "-".to_owned()
    } else if ratio < 9.995 {
        format!("{ratio:.2}×")
    } else if ratio < 99.95 {
        format!("{ratio:.1}×")
    } else {
        format!("{}×", units::thousands(ratio.round() as u64))
    }
}

/// `worse (it/s, p50)`, `better (p99)`, `within noise` or `not comparable`: the first target's
/// figures are the baseline, so a regression is this target doing worse than the first.
pub fn verdict_cell(comparison: &Comparison) -> String {
    let named = |verdict: Verdict| {
        comparison.metrics.iter().filter(|m| m.verdict == verdict).map(|m| m.metric.label()).collect::<Vec<_>>()
    };
    match comparison.verdict {
        Verdict::Regressed => format!("worse ({})", named(Verdict::Regressed).join(", ")),
        Verdict::Improved => format!("better ({})", named(Verdict::Improved).join(", ")),
        Verdict::NoChange => "within noise".to_owned(),
        Verdict::New | Verdict::NotComparable => "not comparable".to_owned(),
    }
}

/// `worse`, `better`, `within noise`, `not comparable`, for CSV.
pub fn verdict_word(comparison: &Comparison) -> &'static str {
    match comparison.verdict {
        Verdict::Regressed => "worse",
        Verdict::Improved => "better",
        Verdict::NoChange => "within noise",
        Verdict::New | Verdict::NotComparable => "not comparable",
    }
}

/// The lines under the table: what the ratios are, how the verdicts were reached, and why some
/// rows have none.
pub fn notes(cx: &Context, reference: &str) -> Vec<String> {
    let compared: Vec<(&ScenarioResult, &Comparison, &str)> =
        cx.scenarios().filter_map(|(s, label)| s.side_by_side.as_ref().map(|c| (s, c, label))).collect();
    let mut notes = vec![format!(
        "Ratios are each target's median over `{reference}`'s; for it/s higher is better, for latencies lower."
    )];
    let Some(noise) = compared.first().map(|(_, c, _)| noise_bands(c.noise_threshold)) else {
        return notes;
    };
    if let Some((_, c, _)) = compared.iter().find(|(_, c, _)| c.method == Method::Bootstrap) {
        notes.push(format!(
            "A difference counts when its 95% confidence interval (bootstrap over {} runs against {} of `{reference}`) lies wholly beyond ±{noise}.",
            c.runs, c.baseline_runs
        ));
    }
    if compared.iter().any(|(_, c, _)| c.method == Method::SingleRun) {
        notes.push(format!(
            "Single-run comparison: a difference counts when it is beyond ±{noise}, with no spread to judge the noise by; use --runs 3 or more."
        ));
    }
    for (_, c, label) in &compared {
        if c.verdict == Verdict::NotComparable {
            notes.push(format!("{label}: not comparable: {}", c.reason.as_deref().unwrap_or("unknown reason")));
        }
        if let Some(success) =
            c.metrics.iter().find(|m| m.metric == ComparedMetric::SuccessRate && m.verdict != Verdict::NoChange)
        {
            notes.push(format!(
                "{label}: success rate {} against {} for `{reference}`",
                success.metric.show(success.new),
                success.metric.show(success.old)
            ));
        }
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;
    use cargo_loadbench::{Results, RunSample};
    use loadbench::report::{ConfigReport, LatencyReport, ScenarioReport};

    /// `hello` against `fast` (3 runs), `slow` (three times slower) and `twin` (the same as
    /// `fast`), and `login` that could not run against `slow`.
    fn report() -> Results {
        let config = ConfigReport { concurrency: 10, count: Some(400), timeout_ms: 1_000, ..ConfigReport::default() };
        let scenario = |name: &str, target: &str, rps: &[f64], p50: f64| {
            let mut s = ScenarioResult::new(ScenarioReport::not_started(name, config.clone()));
            s.target_name = Some(target.into());
            s.iterations = 1_200;
            s.ok = 1_200;
            s.latency_us = Some(LatencyReport {
                mean: p50,
                stdev: 1.0,
                min: p50,
                p50,
                p90: p50,
                p95: p50,
                p99: p50 * 1.5,
                p99_9: p50 * 2.0,
                max: p50 * 3.0,
                percentiles: Default::default(),
                spectrum: Vec::new(),
                histogram: None,
            });
            s.rps = rps[1];
            s.runs = rps.iter().map(|&r| RunSample { rps: r, ..RunSample::of(&s) }).collect();
            s
        };
        let mut broken = ScenarioResult::new(ScenarioReport::not_started("login", config.clone()));
        broken.target_name = Some("slow".into());
        broken.setup_error = Some("its bench binary failed".into());
        let mut report = Results::new(std::time::SystemTime::UNIX_EPOCH);
        report.scenarios = vec![
            scenario("hello", "fast", &[980.0, 1_000.0, 1_020.0], 10_000.0),
            scenario("hello", "slow", &[330.0, 333.0, 336.0], 30_000.0),
            scenario("hello", "twin", &[990.0, 1_001.0, 1_010.0], 10_000.0),
            scenario("login", "fast", &[99.0, 100.0, 101.0], 1_000.0),
            broken,
        ];
        targets::compare_with_first(&mut report, "fast", 0.05);
        report
    }

    #[test]
    fn each_target_has_a_row_with_its_ratios_to_the_first_and_a_verdict() {
        let report = report();
        let cx = Context::new(&report, 3, None, false);
        assert_eq!(reference(&cx), Some("fast"));
        let rows = rows(&cx, "fast");
        assert_eq!(
            rows,
            [
                ["hello", "fast", "1,000", "1.00×", "10.0ms", "1.00×", "15.0ms", "1.00×", "reference"],
                ["hello", "slow", "333", "0.33×", "30.0ms", "3.00×", "45.0ms", "3.00×", "worse (it/s, p50, p99)"],
                ["hello", "twin", "1,001", "1.00×", "10.0ms", "1.00×", "15.0ms", "1.00×", "within noise"],
                ["login", "fast", "100", "1.00×", "1.00ms", "1.00×", "1.50ms", "1.00×", "reference"],
                ["login", "slow", "-", "-", "-", "-", "-", "-", "not comparable"],
            ]
        );
        let notes = notes(&cx, "fast");
        assert_eq!(
            notes,
            [
                "Ratios are each target's median over `fast`'s; for it/s higher is better, for latencies lower.",
                "A difference counts when its 95% confidence interval (bootstrap over 3 runs against 3 of `fast`) lies wholly beyond ±5% (±15% for p99).",
                "login [slow]: not comparable: it did not run",
            ]
        );
    }

    #[test]
    fn one_run_of_each_is_a_single_run_comparison() {
        let mut report = report();
        for s in &mut report.scenarios {
            s.runs.truncate(1);
        }
        let first = "fast";
        targets::compare_with_first(&mut report, first, 0.05);
        let cx = Context::new(&report, 1, None, false);
        let notes = notes(&cx, first);
        assert!(
            notes.contains(&"Single-run comparison: a difference counts when it is beyond ±5% (±15% for p99), with no spread to judge the noise by; use --runs 3 or more.".to_owned()),
            "{notes:#?}"
        );
        assert!(!notes.iter().any(|n| n.contains("bootstrap")), "{notes:#?}");
    }

    #[test]
    fn ratios_keep_three_significant_digits() {
        assert_eq!(
            [0.3333, 1.0, 2.954, 12.44, 150.2, 1_234.4, f64::NAN].map(ratio_text),
            ["0.33×", "1.00×", "2.95×", "12.4×", "150×", "1,234×", "-"]
        );
    }
}
