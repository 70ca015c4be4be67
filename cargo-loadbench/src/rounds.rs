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
    let zero_rtt = median_latency(ran.iter().filter_map(|s| s.quic.as_ref()?.zero_rtt_us.as_ref()));
    let ttfb = median_latency(ran.iter().filter_map(|s| s.quic.as_ref()?.ttfb_us.as_ref()));
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
        if let (Some(quic), Some(other)) = (&mut merged.quic, &other.quic) {
            quic.zero_rtt_offered += other.zero_rtt_offered;
            quic.zero_rtt_accepted += other.zero_rtt_accepted;
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
    // The QUIC part as the TLS one: counts added, times the runs' medians.
    if let Some(quic) = &mut merged.quic {
        quic.zero_rtt_us = zero_rtt;
        quic.ttfb_us = ttfb;
    }
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
mod tests;
