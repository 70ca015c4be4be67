//! `--runs N`: a command's whole plan run N times, in rounds (every selected scenario once per
//! round, so that drift of the machine over time, a neighbour starting or thermal throttling,
//! touches every scenario alike instead of whichever happened to run last), and the rounds merged
//! into one report: one entry per scenario that summarises its runs and keeps each run's figures
//! in [`ScenarioResult::runs`].
//!
//! Counts (iterations, failures by kind, responses, bytes, connections, wall time) are totals
//! over the runs: nothing is lost, and `error_rate` stays failures over iterations. Rates and
//! latencies are medians across runs, figure by figure, as the comparison with a baseline uses
//! them: a median of runs is what the verdict is about. A run's HdrHistograms, when its results
//! carry them (`--histograms`, `--shard`), stay in its entry of `runs` (and a single run's in the
//! summary itself): the runs of one scenario are repeated measurements, not parts to add up.

use std::ops::ControlFlow;
use std::time::SystemTime;

use cargo_loadbench::{Results, RunSample, ScenarioResult};
use loadbench::cli::interrupt;
use loadbench::report::{Causes, CheckReport, ErrorCounts, LatencyReport, StepReport, Warning};

use crate::compare::median;

/// Runs `round` (numbered from 1) `runs` times, or until Ctrl-C or a round that breaks, and
/// merges the rounds' reports into one; shared by the workspace's scenarios and
/// `cargo loadbench url`.
pub fn in_rounds(runs: u32, mut round: impl FnMut(u32) -> (Results, ControlFlow<()>)) -> Results {
    let started_at = SystemTime::now();
    let mut rounds = Vec::with_capacity(runs as usize);
    for number in 1..=runs {
        if interrupt::interrupted() {
            break;
        }
        let (report, flow) = round(number);
        rounds.push(report);
        if flow.is_break() {
            break;
        }
    }
    merge(rounds, Results::new(started_at))
}

/// One report from the rounds, in the order the scenarios first ran. Each round is a complete
/// report of every bench binary that ran in it; `rounds` must not be empty for the header (tool,
/// machine, start) to come from a run, else `fallback` stands in.
pub fn merge(rounds: Vec<Results>, fallback: Results) -> Results {
    let interrupted = rounds.iter().any(|r| r.interrupted);
    let mut rounds = rounds.into_iter();
    let mut merged = rounds.next().unwrap_or(fallback);
    merged.interrupted |= interrupted;
    // (package, bench, name, target) → every run's report, in order.
    let mut groups: Vec<Vec<ScenarioResult>> = merged.scenarios.drain(..).map(|s| vec![s]).collect();
    for round in rounds {
        for scenario in round.scenarios {
            match groups.iter_mut().find(|g| same_scenario(&g[0], &scenario)) {
                Some(group) => group.push(scenario),
                None => groups.push(vec![scenario]),
            }
        }
    }
    merged.scenarios = groups.into_iter().filter_map(merge_scenario).collect();
    merged
}

/// The same scenario against the same target: side by side, each target's runs are merged
/// apart from the others'.
fn same_scenario(a: &ScenarioResult, b: &ScenarioResult) -> bool {
    a.same_scenario(b) && a.target_name == b.target_name
}

/// The summary of one scenario's runs; `None` only for an empty group.
fn merge_scenario(runs: Vec<ScenarioResult>) -> Option<ScenarioResult> {
    let mut runs = runs.into_iter();
    let mut merged = runs.next()?;
    let rest: Vec<ScenarioResult> = runs.collect();
    let all: Vec<&ScenarioResult> = std::iter::once(&merged).chain(&rest).collect();
    // Only runs that ran have figures; a run that could not start is a setup error, below.
    let ran: Vec<&ScenarioResult> = all.iter().copied().filter(|s| s.setup_error.is_none()).collect();

    let samples: Vec<RunSample> = ran.iter().map(|s| RunSample::of(s)).collect();
    let rps = median(&ran.iter().map(|s| s.rps).collect::<Vec<_>>());
    let attempts_per_sec = median(&ran.iter().map(|s| s.attempts_per_sec).collect::<Vec<_>>());
    let steps = merge_steps(&ran, |r| &r.steps);
    let requests = merge_steps(&ran, |r| &r.requests);
    let checks = sum_checks(ran.iter().flat_map(|r| &r.checks));
    let achieved = median(&ran.iter().filter_map(|s| s.rate.map(|r| r.achieved)).collect::<Vec<_>>());
    let latency = median_latency(ran.iter().filter_map(|s| s.latency_us.as_ref()));
    let connect = median_latency(ran.iter().filter_map(|s| s.connect_us.as_ref()));
    let handshake = median_latency(ran.iter().filter_map(|s| s.tls_handshake_us.as_ref()));
    let setup_error = all.iter().find_map(|s| s.setup_error.clone());
    // A run where the generator was the limit taints the summary: keep its self-check, so the
    // table still warns.
    let generator =
        all.iter().filter_map(|s| s.generator.as_ref()).find(|g| g.saturated).or(merged.generator.as_ref()).cloned();
    let interrupted = all.iter().any(|s| s.interrupted);
    let warnings = merge_warnings(&all);

    for other in &rest {
        merged.duration_us = merged.duration_us.saturating_add(other.duration_us);
        merged.iterations += other.iterations;
        merged.ok += other.ok;
        merged.failed += other.failed;
        merged.errors.add(&other.errors);
        merged.causes.merge(&other.causes);
        merged.http.add(&other.http);
        if let (Some(tls), Some(other)) = (&mut merged.tls, &other.tls) {
            tls.add(other);
        }
        merged.dropped += other.dropped;
        merged.cancelled += other.cancelled;
        merged.not_started += other.not_started;
        // Counted over the runs that found nothing listening, as the other figures are.
        merged.nothing_listening = match (merged.nothing_listening.take(), &other.nothing_listening) {
            (Some(a), Some(b)) => Some(loadbench::report::NothingListening { refused: a.refused + b.refused, ..a }),
            (a, b) => a.or_else(|| b.clone()),
        };
        merged.remote_write = match (merged.remote_write.take(), &other.remote_write) {
            (Some(mut a), Some(b)) => {
                a.add(b);
                Some(a)
            }
            (a, b) => a.or_else(|| b.clone()),
        };
    }
    merged.steps = steps;
    merged.requests = requests;
    merged.checks = checks;
    merged.rps = rps.unwrap_or(0.0);
    merged.attempts_per_sec = attempts_per_sec.unwrap_or(0.0);
    // The open model's achieved rate is a rate like req/s: the median of the runs. (The
    // timeline stays the first run's: seconds of different runs do not line up.)
    if let (Some(rate), Some(achieved)) = (&mut merged.rate, achieved) {
        rate.achieved = achieved;
    }
    merged.latency_us = latency;
    merged.connect_us = connect;
    merged.tls_handshake_us = handshake;
    merged.setup_error = setup_error;
    merged.generator = generator;
    merged.interrupted = interrupted;
    merged.runs = samples;
    merged.warnings = warnings;
    // Evaluated again on the merged figures, with the command line's thresholds added.
    merged.thresholds.clear();
    Some(merged)
}

/// Each step's counts summed over the runs and its latencies' medians, steps in the order the
/// first run that had them ran them; the same for named requests (`rows` picks which).
fn merge_steps(runs: &[&ScenarioResult], rows: fn(&ScenarioResult) -> &Vec<StepReport>) -> Vec<StepReport> {
    let mut names: Vec<&str> = Vec::new();
    for step in runs.iter().flat_map(|r| rows(r)) {
        if !names.contains(&step.name.as_str()) {
            names.push(&step.name);
        }
    }
    names
        .into_iter()
        .map(|name| {
            let of: Vec<&StepReport> = runs.iter().flat_map(|r| rows(r)).filter(|s| s.name == name).collect();
            let mut errors = ErrorCounts::default();
            let mut causes = Causes::default();
            for step in &of {
                errors.add(&step.errors);
                causes.merge(&step.causes);
            }
            StepReport {
                name: name.to_owned(),
                iterations: of.iter().map(|s| s.iterations).sum(),
                ok: of.iter().map(|s| s.ok).sum(),
                failed: of.iter().map(|s| s.failed).sum(),
                errors,
                causes,
                latency_us: median_latency(of.iter().filter_map(|s| s.latency_us.as_ref())),
            }
        })
        .collect()
}

/// Checks by name, in the order first made, passes and failures added: over the runs of a
/// scenario here, over the shards of a distributed run in `merge`.
pub fn sum_checks<'a>(checks: impl Iterator<Item = &'a CheckReport>) -> Vec<CheckReport> {
    let mut merged: Vec<CheckReport> = Vec::new();
    for check in checks {
        match merged.iter_mut().find(|c| c.name == check.name) {
            Some(mine) => {
                mine.passes += check.passes;
                mine.fails += check.fails;
            }
            None => merged.push(check.clone()),
        }
    }
    merged
}

/// Each latency figure's median across runs.
fn median_latency<'a>(latencies: impl Iterator<Item = &'a LatencyReport>) -> Option<LatencyReport> {
    let latencies: Vec<&LatencyReport> = latencies.collect();
    // One run is its own median, histogram included (`--histograms`, a shard's results): what a
    // merge of shards adds up.
    if let [one] = latencies.as_slice() {
        return Some((*one).clone());
    }
    let field = |pick: fn(&LatencyReport) -> f64| median(&latencies.iter().map(|l| pick(l)).collect::<Vec<_>>());
    Some(LatencyReport {
        mean: field(|l| l.mean)?,
        stdev: field(|l| l.stdev)?,
        min: field(|l| l.min)?,
        p50: field(|l| l.p50)?,
        p90: field(|l| l.p90)?,
        p95: field(|l| l.p95)?,
        p99: field(|l| l.p99)?,
        p99_9: field(|l| l.p99_9)?,
        max: field(|l| l.max)?,
        // A percentile only some runs computed is the median of those that did.
        percentiles: latencies
            .iter()
            .flat_map(|l| l.percentiles.keys())
            .filter_map(|name| {
                let values: Vec<f64> = latencies.iter().filter_map(|l| l.percentiles.get(name).copied()).collect();
                Some((name.clone(), median(&values)?))
            })
            .collect(),
        // Spectra of different runs have their points at different percentiles: the one drawn is
        // the median run's, by p99 (the lower middle one of an even number).
        spectrum: {
            let mut by_p99: Vec<&&LatencyReport> = latencies.iter().collect();
            by_p99.sort_by(|a, b| a.p99.total_cmp(&b.p99));
            by_p99.get(by_p99.len().saturating_sub(1) / 2).map(|l| l.spectrum.clone()).unwrap_or_default()
        },
        // The figures above are medians of the runs, not of one distribution; each run's own
        // histogram stays in `runs`.
        histogram: None,
    })
}

/// The warnings of every run, one of each kind (the first run's message): a run that measured
/// nothing taints the summary, as a saturated generator does.
fn merge_warnings(runs: &[&ScenarioResult]) -> Vec<Warning> {
    let mut warnings: Vec<Warning> = Vec::new();
    for warning in runs.iter().flat_map(|r| &r.warnings) {
        if !warnings.iter().any(|w| w.kind == warning.kind) {
            warnings.push(warning.clone());
        }
    }
    warnings
}

#[cfg(test)]
mod tests {
    use super::*;
    use loadbench::report::{ConfigReport, ScenarioReport};

    fn scenario(name: &str, rps: f64, p50: f64, failed: u64) -> ScenarioResult {
        let config = ConfigReport { concurrency: 2, count: Some(10), timeout_ms: 1_000, ..ConfigReport::default() };
        let mut s = ScenarioResult::new(ScenarioReport::not_started(name, config));
        s.package = Some("shop".into());
        s.bench = Some("api".into());
        s.iterations = 10;
        s.failed = failed;
        s.ok = 10 - failed;
        s.errors.status = failed;
        s.duration_us = 1_000;
        s.rps = rps;
        s.http.responses = 10;
        s.http.status = [(200, 10 - failed), (500, failed)].into_iter().filter(|&(_, n)| n > 0).collect();
        s.latency_us = Some(LatencyReport {
            mean: p50,
            stdev: 1.0,
            min: p50 / 2.0,
            p50,
            p90: p50 * 2.0,
            p95: p50 * 2.0,
            p99: p50 * 3.0,
            p99_9: p50 * 4.0,
            max: p50 * 5.0,
            percentiles: Default::default(),
            spectrum: Vec::new(),
            histogram: None,
        });
        s
    }

    fn round(scenarios: Vec<ScenarioResult>) -> Results {
        let mut report = Results::new(std::time::SystemTime::UNIX_EPOCH);
        report.scenarios = scenarios;
        report
    }

    #[test]
    fn counts_add_up_and_rates_and_latencies_are_medians() {
        let rounds = vec![
            round(vec![scenario("hello", 100.0, 10.0, 0), scenario("status", 50.0, 1.0, 0)]),
            round(vec![scenario("hello", 300.0, 30.0, 1), scenario("status", 60.0, 2.0, 0)]),
            round(vec![scenario("hello", 200.0, 20.0, 2), scenario("status", 55.0, 3.0, 0)]),
        ];
        let merged = merge(rounds, round(Vec::new()));
        let names: Vec<&str> = merged.scenarios.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["hello", "status"]);
        let hello = &merged.scenarios[0];
        assert_eq!((hello.iterations, hello.ok, hello.failed, hello.errors.status), (30, 27, 3, 3));
        assert_eq!(hello.http.status.get(&500), Some(&3));
        assert_eq!(hello.http.status.get(&200), Some(&27));
        assert_eq!(hello.duration_us, 3_000);
        assert_eq!(hello.rps, 200.0);
        let latency = hello.latency_us.as_ref().unwrap_or_else(|| panic!("latency"));
        assert_eq!((latency.p50, latency.p99, latency.max), (20.0, 60.0, 100.0));
        let run_rps: Vec<f64> = hello.runs.iter().map(|r| r.rps).collect();
        assert_eq!(run_rps, [100.0, 300.0, 200.0], "every run, in order");
        assert_eq!(hello.runs[2].failed, 2);
    }

    #[test]
    fn open_model_figures_and_steps_merge_like_the_scenario_s_own() {
        let rounds: Vec<Results> = [(1_900.0, 5, 10.0), (2_000.0, 0, 30.0), (1_950.0, 1, 20.0)]
            .into_iter()
            .map(|(achieved, dropped, p50)| {
                let mut s = scenario("open", achieved, p50, 0);
                s.rate = Some(loadbench::report::RateReport { requested: 2_000.0, achieved });
                s.dropped = dropped;
                s.steps = vec![StepReport {
                    name: "insert".into(),
                    iterations: 10,
                    ok: 9,
                    failed: 1,
                    errors: ErrorCounts { io: 1, ..Default::default() },
                    causes: Default::default(),
                    latency_us: s.latency_us.clone(),
                }];
                round(vec![s])
            })
            .collect();
        let merged = merge(rounds, round(Vec::new()));
        let open = &merged.scenarios[0];
        assert_eq!(open.dropped, 6);
        assert_eq!(open.rate.map(|r| (r.requested, r.achieved)), Some((2_000.0, 1_950.0)));
        let insert = &open.steps[0];
        assert_eq!((insert.iterations, insert.ok, insert.failed, insert.errors.io), (30, 27, 3, 3));
        assert_eq!(insert.latency_us.as_ref().map(|l| l.p50), Some(20.0));
    }

    #[test]
    fn warnings_and_asked_percentiles_survive_the_merge() {
        let rounds: Vec<Results> = [10.0, 30.0, 20.0]
            .into_iter()
            .enumerate()
            .map(|(i, p75)| {
                let mut s = scenario("hello", 100.0, 10.0, 0);
                if let Some(latency) = &mut s.latency_us {
                    latency.percentiles.insert("p75".into(), p75);
                }
                if i == 1 {
                    let kind = loadbench::report::WarningKind::TooFast;
                    s.warnings = vec![Warning { kind, message: "too fast".into() }];
                }
                round(vec![s])
            })
            .collect();
        let merged = merge(rounds, round(Vec::new()));
        let hello = &merged.scenarios[0];
        assert_eq!(hello.warnings.iter().map(|w| w.message.as_str()).collect::<Vec<_>>(), ["too fast"]);
        assert_eq!(hello.latency_us.as_ref().and_then(|l| l.percentiles.get("p75")), Some(&20.0));
    }

    #[test]
    fn named_requests_merge_like_steps_and_checks_add_up() {
        let rounds: Vec<Results> = [(10.0, 1, false), (30.0, 0, true), (20.0, 2, true)]
            .into_iter()
            .map(|(p50, fails, later_check)| {
                let mut s = scenario("items", 100.0, p50, 0);
                s.requests = vec![StepReport {
                    name: "GET /items/{id}".into(),
                    iterations: 10,
                    ok: 10 - fails,
                    failed: fails,
                    errors: ErrorCounts { status: fails, ..Default::default() },
                    causes: Default::default(),
                    latency_us: s.latency_us.clone(),
                }];
                s.checks = vec![CheckReport { name: "has id".into(), passes: 10 - fails, fails }];
                if later_check {
                    s.checks.push(CheckReport { name: "later".into(), passes: 1, fails: 0 });
                }
                round(vec![s])
            })
            .collect();
        let merged = merge(rounds, round(Vec::new()));
        let items = &merged.scenarios[0];
        assert!(items.steps.is_empty(), "{:?}", items.steps);
        let row = &items.requests[0];
        assert_eq!((row.name.as_str(), row.iterations, row.ok, row.failed), ("GET /items/{id}", 30, 27, 3));
        assert_eq!(row.errors.status, 3);
        assert_eq!(row.latency_us.as_ref().map(|l| l.p50), Some(20.0), "the median run's");
        let checks: Vec<(&str, u64, u64)> = items.checks.iter().map(|c| (c.name.as_str(), c.passes, c.fails)).collect();
        assert_eq!(checks, [("has id", 27, 3), ("later", 2, 0)], "in the order first made");
    }

    #[test]
    fn one_run_keeps_its_figures_and_records_itself() {
        let merged = merge(vec![round(vec![scenario("hello", 123.0, 7.0, 0)])], round(Vec::new()));
        let hello = &merged.scenarios[0];
        assert_eq!((hello.rps, hello.iterations), (123.0, 10));
        assert_eq!(hello.runs.len(), 1);
        assert_eq!(hello.runs[0].rps, 123.0);
    }

    #[test]
    fn one_run_keeps_its_histogram_and_several_keep_theirs_in_runs() {
        let with_histogram = |rps: f64| {
            let mut s = scenario("hello", rps, 7.0, 0);
            if let Some(latency) = &mut s.latency_us {
                latency.histogram = Some(format!("histogram of {rps}"));
            }
            s
        };
        let histogram = |latency: Option<&LatencyReport>| latency.and_then(|l| l.histogram.clone());
        let one = merge(vec![round(vec![with_histogram(1.0)])], round(Vec::new()));
        assert_eq!(histogram(one.scenarios[0].latency_us.as_ref()).as_deref(), Some("histogram of 1"));
        let two = merge(vec![round(vec![with_histogram(1.0)]), round(vec![with_histogram(2.0)])], round(Vec::new()));
        let hello = &two.scenarios[0];
        assert_eq!(histogram(hello.latency_us.as_ref()), None, "a median of runs is no one histogram");
        let runs: Vec<Option<String>> = hello.runs.iter().map(|r| histogram(r.latency_us.as_ref())).collect();
        assert_eq!(runs, [Some("histogram of 1".to_owned()), Some("histogram of 2".to_owned())]);
    }

    #[test]
    fn runs_against_different_servers_stay_apart_in_the_order_they_first_ran() {
        let against = |target: &str, rps: f64| {
            let mut s = scenario("hello", rps, 1.0, 0);
            s.target_name = Some(target.into());
            s
        };
        let rounds =
            (0..3).map(|r| round(vec![against("fast", 300.0 + f64::from(r)), against("slow", 100.0)])).collect();
        let merged = merge(rounds, round(Vec::new()));
        let merged: Vec<(Option<&str>, usize, f64)> =
            merged.scenarios.iter().map(|s| (s.target_name.as_deref(), s.runs.len(), s.rps)).collect();
        assert_eq!(merged, [(Some("fast"), 3, 301.0), (Some("slow"), 3, 100.0)]);
    }

    #[test]
    fn scenarios_of_different_targets_stay_apart_and_a_failed_run_is_a_setup_error() {
        let mut other = scenario("hello", 1.0, 1.0, 0);
        other.bench = Some("admin".into());
        let mut broken = scenario("hello", 0.0, 0.0, 0);
        broken.setup_error = Some("its bench binary failed".into());
        broken.latency_us = None;
        let merged =
            merge(vec![round(vec![scenario("hello", 100.0, 10.0, 0), other]), round(vec![broken])], round(Vec::new()));
        assert_eq!(merged.scenarios.len(), 2);
        let hello = &merged.scenarios[0];
        assert_eq!(hello.setup_error.as_deref(), Some("its bench binary failed"));
        assert_eq!(hello.runs.len(), 1, "only the run that ran has figures");
        assert_eq!(hello.rps, 100.0);
    }

    #[test]
    fn a_saturated_round_keeps_what_limited_it() {
        let generator = |limit: Option<loadbench::report::GeneratorLimit>| loadbench::report::GeneratorReport {
            worker_threads: 2,
            cpu_seconds: Some(0.04),
            cpu_utilization: Some(0.02),
            lag_p99_us: Some(if limit.is_some() { 31_000 } else { 100 }),
            lag_max_us: None,
            saturated: limit.is_some(),
            waited_for_cpu: Some(if limit.is_some() { 0.4 } else { 0.0 }),
            limit,
            read_delay_p99_us: None,
            read_delay_max_us: None,
            late_reads: false,
        };
        let mut calm = scenario("hello", 100.0, 10.0, 0);
        calm.generator = Some(generator(None));
        let mut busy = scenario("hello", 90.0, 12.0, 0);
        busy.generator = Some(generator(Some(loadbench::report::GeneratorLimit::MachineBusy)));
        let merged = merge(vec![round(vec![calm]), round(vec![busy])], round(Vec::new()));
        let kept = merged.scenarios[0].generator.clone().unwrap_or_else(|| panic!("a self-check"));
        assert_eq!(kept.limit, Some(loadbench::report::GeneratorLimit::MachineBusy), "{kept:?}");
        assert_eq!(kept.waited_for_cpu, Some(0.4));
    }
}
