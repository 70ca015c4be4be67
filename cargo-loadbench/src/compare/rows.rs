//! Steps (`ctx.step`) and named requests (`.name(…)`) compared with their baseline, each like a
//! scenario: the same medians across runs, the same bootstrap interval held against the same
//! noise bands, the success rate first. A row is found in the baseline by its name within the
//! same scenario.
//!
//! Req/s is left out: a step runs once per iteration (a named request as often as the body sends
//! it), so its rate is the scenario's and moves with it; compared, one slow step would make every
//! other step "regressed (it/s)". The scenario's own verdict judges the rate.

use cargo_loadbench::{ComparedMetric, Comparison, RowComparison, RowSample, RunSample, ScenarioResult, Verdict};
use loadbench::report::{ScenarioReport, StepReport};

use super::{Judging, Pairing};

/// What a row's verdict weighs.
const ROW_METRICS: [ComparedMetric; 3] = [ComparedMetric::P50, ComparedMetric::P99, ComparedMetric::SuccessRate];

/// [`compare`](super::compare), with each step and named request of `current` compared as well
/// ([`Comparison::steps`], [`Comparison::requests`]) when the scenario itself has a verdict (a
/// scenario that is new or not comparable says so once, not once per row).
pub fn compare_with_rows(
    current: &ScenarioResult,
    baseline: Option<&ScenarioResult>,
    name: &str,
    noise: f64,
) -> Comparison {
    with_rows(current, baseline, Judging { name, noise, pairing: Pairing::Independent })
}

/// [`compare_with_rows`], judged as `how` says, the rows as the scenario.
pub(super) fn with_rows(current: &ScenarioResult, baseline: Option<&ScenarioResult>, how: Judging) -> Comparison {
    let mut comparison = super::compare_as(current, baseline, how);
    let judged = matches!(comparison.verdict, Verdict::Regressed | Verdict::Improved | Verdict::NoChange);
    if let (Some(baseline), true) = (baseline, judged) {
        comparison.steps = rows(current, baseline, how, Kind::Steps);
        comparison.requests = rows(current, baseline, how, Kind::Requests);
    }
    comparison
}

/// Which rows of a scenario.
#[derive(Clone, Copy)]
enum Kind {
    Steps,
    Requests,
}

impl Kind {
    fn of(self, scenario: &ScenarioReport) -> &[StepReport] {
        match self {
            Kind::Steps => &scenario.steps,
            Kind::Requests => &scenario.requests,
        }
    }

    fn in_run(self, run: &RunSample) -> &[RowSample] {
        match self {
            Kind::Steps => &run.steps,
            Kind::Requests => &run.requests,
        }
    }
}

/// Each row of `current` of `kind` against the row of the same name in `baseline` (new when it
/// has none).
fn rows(current: &ScenarioResult, baseline: &ScenarioResult, how: Judging, kind: Kind) -> Vec<RowComparison> {
    kind.of(current)
        .iter()
        .map(|row| {
            let new = as_scenario(current, row, kind);
            let old = kind.of(baseline).iter().find(|r| r.name == row.name).map(|r| as_scenario(baseline, r, kind));
            RowComparison {
                name: row.name.clone(),
                comparison: super::compare_metrics(&new, old.as_ref(), how, &ROW_METRICS),
            }
        })
        .collect()
}

/// `row` of `scenario` as a scenario of its own, for [`compare_metrics`](super::compare_metrics):
/// the scenario's load (so that the same checks of comparability apply), the row's figures, and
/// its figures in each run when every run kept them (else the merged figures stand as one run,
/// as a baseline saved before rows were kept per run).
fn as_scenario(scenario: &ScenarioResult, row: &StepReport, kind: Kind) -> ScenarioResult {
    let mut s = ScenarioResult::new(ScenarioReport::not_started(row.name.clone(), scenario.config.clone()));
    s.iterations = row.iterations;
    s.ok = row.ok;
    s.failed = row.failed;
    s.latency_us = row.latency_us.clone();
    let runs: Option<Vec<RunSample>> = scenario
        .runs
        .iter()
        .map(|run| {
            kind.in_run(run).iter().find(|r| r.name == row.name).map(|r| RunSample {
                started_at: run.started_at.clone(),
                duration_us: run.duration_us,
                iterations: r.iterations,
                failed: r.failed,
                ok: Some(r.ok),
                // Not compared (see the module's comment).
                rps: 0.0,
                latency_us: r.latency_us.clone(),
                steps: Vec::new(),
                requests: Vec::new(),
            })
        })
        .collect();
    s.runs = runs.unwrap_or_default();
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::tests::scenario_with_runs;
    use cargo_loadbench::Method;

    /// `scenario` with a step `name` whose runs took these p50 = p99 latencies (µs).
    fn with_step(mut scenario: ScenarioResult, name: &str, latencies: &[f64]) -> ScenarioResult {
        let latency = |us: f64| scenario_with_runs("x", &[(1.0, us)]).runs[0].latency_us.clone();
        for (run, &us) in scenario.runs.iter_mut().zip(latencies) {
            run.steps.push(RowSample {
                name: name.into(),
                iterations: 100,
                ok: 100,
                failed: 0,
                latency_us: latency(us),
            });
        }
        let median = crate::compare::median(latencies).unwrap_or_default();
        scenario.steps.push(StepReport {
            name: name.into(),
            iterations: 100 * latencies.len() as u64,
            ok: 100 * latencies.len() as u64,
            failed: 0,
            errors: Default::default(),
            causes: Default::default(),
            latency_us: latency(median),
        });
        scenario
    }

    #[test]
    fn a_slower_step_regressed_and_the_others_did_not() {
        let runs = [(1000.0, 200.0), (1010.0, 201.0), (990.0, 199.0)];
        let old = with_step(
            with_step(scenario_with_runs("shop", &runs), "page", &[100.0, 101.0, 99.0]),
            "search",
            &[100.0, 101.0, 99.0],
        );
        // The scenario's rate drops with the slower step; the page step's latency does not move.
        let slower = [(500.0, 400.0), (505.0, 401.0), (495.0, 399.0)];
        let new = with_step(
            with_step(scenario_with_runs("shop", &slower), "page", &[100.0, 100.5, 99.5]),
            "search",
            &[300.0, 301.0, 299.0],
        );
        let c = compare_with_rows(&new, Some(&old), "main", 0.05);
        assert_eq!(c.verdict, Verdict::Regressed);
        let verdicts: Vec<(&str, Verdict, Method)> =
            c.steps.iter().map(|r| (r.name.as_str(), r.comparison.verdict, r.comparison.method)).collect();
        assert_eq!(
            verdicts,
            [("page", Verdict::NoChange, Method::Bootstrap), ("search", Verdict::Regressed, Method::Bootstrap)]
        );
        let metrics: Vec<ComparedMetric> = c.steps[1].comparison.metrics.iter().map(|m| m.metric).collect();
        assert_eq!(metrics, ROW_METRICS, "it/s is the scenario's, not compared per step");
        assert!(c.requests.is_empty());
    }

    #[test]
    fn a_new_step_is_new_and_a_new_scenario_has_no_rows() {
        let old = scenario_with_runs("shop", &[(1000.0, 200.0)]);
        let new = with_step(scenario_with_runs("shop", &[(1000.0, 200.0)]), "login", &[50.0]);
        let c = compare_with_rows(&new, Some(&old), "main", 0.05);
        assert_eq!(c.steps.len(), 1);
        assert_eq!((c.steps[0].name.as_str(), c.steps[0].comparison.verdict), ("login", Verdict::New));
        assert!(compare_with_rows(&new, None, "main", 0.05).steps.is_empty());
    }

    #[test]
    fn a_baseline_without_runs_per_step_compares_its_merged_step_as_one_run() {
        let mut old =
            with_step(scenario_with_runs("shop", &[(1000.0, 200.0), (1000.0, 200.0)]), "page", &[100.0, 100.0]);
        for run in &mut old.runs {
            run.steps.clear();
        }
        let new = with_step(scenario_with_runs("shop", &[(1000.0, 200.0), (1000.0, 200.0)]), "page", &[200.0, 200.0]);
        let c = compare_with_rows(&new, Some(&old), "main", 0.05);
        let step = &c.steps[0].comparison;
        assert_eq!((step.verdict, step.method, step.baseline_runs), (Verdict::Regressed, Method::SingleRun, 1));
    }
}
