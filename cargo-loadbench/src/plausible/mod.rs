//! Whether a results document deserves trust: figures a run could have measured, counts that
//! agree with each other, histograms that hold the successes they describe; and, for a baseline,
//! enough successes to stand for the server's normal behaviour. The one home of these rules:
//! every file `cargo loadbench report` and `merge` read, and every baseline, passes
//! [`check_results`]; the shards of a merge pass [`sums_fit`] too.
//!
//! A baseline is the yardstick of every later verdict, so one that is wrong wrongs them all: a
//! baseline saved from a run where every request was refused made each healthy run after it look
//! like a regression, and a hand-edited or truncated file with `rps: -5` or `rps: 0` beside
//! successful iterations would judge anything. A shard is a part of a whole run: one whose
//! histogram holds more samples than it had successes rewrites every percentile of the merge.
//! Each is refused with one line naming the field ([`Implausible`]).
//!
//! Every count is added with checked arithmetic: a sum that does not fit is a refusal, never a
//! wrap.

mod counts;
mod sums;

use std::fmt;

use cargo_loadbench::{Results, RunSample, ScenarioResult};
use loadbench::report::LatencyReport;

pub use self::counts::check_results;
pub use self::sums::sums_fit;

/// What is wrong with a document: the field, as a JSON path (`scenarios[0].ok`), and what is
/// wrong with it, in a sentence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Implausible {
    /// Where: `shard.count`, `scenarios[0].latency_us.histogram`.
    pub field: String,
    /// What is wrong with it.
    pub what: String,
}

impl fmt::Display for Implausible {
    /// `FIELD: what is wrong`, as a refusal names it after the file.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.what)
    }
}

/// A refusal of `field` because of `what`.
fn wrong(field: impl Into<String>, what: impl Into<String>) -> Implausible {
    Implausible { field: field.into(), what: what.into() }
}
/// The lowest share of successful iterations (of those that succeeded or failed) a scenario may
/// have in a baseline. Below it the figures describe a failing server, and comparing a healthy
/// run with them says nothing useful.
pub const SUCCESS_FLOOR: f64 = 0.5;

/// The first scenario of `report` (among those that ran to the end) whose success rate is below
/// [`SUCCESS_FLOOR`], as a sentence saying why it cannot be a baseline.
pub fn below_success_floor(report: &Results) -> Option<String> {
    report.scenarios.iter().filter(|s| s.setup_error.is_none() && !s.interrupted).find_map(|s| {
        let attempts = s.ok + s.failed;
        if attempts == 0 {
            return Some(format!("scenario `{}` finished no iteration", s.name));
        }
        let rate = s.ok as f64 / attempts as f64;
        (rate < SUCCESS_FLOOR).then(|| {
            format!(
                "scenario `{}` succeeded in {:.1}% of its iterations ({} of {attempts}), below the {:.0}% a baseline needs",
                s.name,
                rate * 100.0,
                s.ok,
                SUCCESS_FLOOR * 100.0
            )
        })
    })
}

/// The first figure of `report` that no run could have measured, as `scenario `hello`: rps is
/// -5`, or a success rate below [`SUCCESS_FLOOR`]; `None` when the baseline can be trusted. An
/// empty one can: `--allow-no-scenarios` saves it, and comparing with it finds nothing to compare.
pub fn check_baseline(report: &Results) -> Option<String> {
    report
        .scenarios
        .iter()
        .find_map(impossible)
        .or_else(|| check_results(report).err().map(|e| e.to_string()))
        .or_else(|| below_success_floor(report))
}

/// What is impossible about one scenario's figures, if anything.
fn impossible(s: &ScenarioResult) -> Option<String> {
    let problem = |what: String| Some(format!("scenario `{}`: {what}", s.name));
    if let Some(what) = bad_rate("rps", s.rps).or_else(|| bad_rate("attempts_per_sec", s.attempts_per_sec)) {
        return problem(what);
    }
    if s.ok.checked_add(s.failed).is_none_or(|finished| finished > s.iterations) {
        return problem(format!("ok {} + failed {} is more than its {} iterations", s.ok, s.failed, s.iterations));
    }
    // Over several runs `rps` is their median, which may be 0 while a minority of runs succeeded.
    if s.ok > 0 && s.rps == 0.0 && s.runs.len() <= 1 {
        return problem(format!("rps is 0 with {} successful iterations", s.ok));
    }
    if s.ok == 0 && s.rps > 0.0 {
        return problem(format!("rps is {} with no successful iteration", s.rps));
    }
    // Files from before attempts_per_sec existed read it as 0.
    if s.attempts_per_sec > 0.0 && s.rps > s.attempts_per_sec * (1.0 + 1e-9) {
        return problem(format!("rps {} is more than attempts_per_sec {}", s.rps, s.attempts_per_sec));
    }
    if let Some(what) = s.latency_us.as_ref().and_then(bad_latency) {
        return problem(what);
    }
    s.runs
        .iter()
        .enumerate()
        .find_map(|(i, run)| bad_run(run).and_then(|what| problem(format!("run {}: {what}", i + 1))))
}

fn bad_rate(name: &str, value: f64) -> Option<String> {
    (!value.is_finite() || value < 0.0).then(|| format!("{name} is {value}"))
}

fn bad_run(run: &RunSample) -> Option<String> {
    let ok = run.ok.unwrap_or(0);
    if ok.checked_add(run.failed).is_none_or(|finished| finished > run.iterations) {
        return Some(format!("ok {ok} + failed {} is more than its {} iterations", run.failed, run.iterations));
    }
    bad_rate("rps", run.rps).or_else(|| run.latency_us.as_ref().and_then(bad_latency))
}

/// Latencies are durations, and percentiles never decrease.
fn bad_latency(l: &LatencyReport) -> Option<String> {
    let figures = [("min", l.min), ("p50", l.p50), ("p90", l.p90), ("p99", l.p99), ("p99_9", l.p99_9), ("max", l.max)];
    for (name, value) in figures.iter().copied().chain([("mean", l.mean), ("stdev", l.stdev)]) {
        if !value.is_finite() || value < 0.0 {
            return Some(format!("latency {name} is {value}"));
        }
    }
    figures.windows(2).find(|pair| pair[0].1 > pair[1].1).map(|pair| {
        let ((low, low_value), (high, high_value)) = (pair[0], pair[1]);
        format!("latency {low} {low_value} is above {high} {high_value}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use loadbench::report::{ConfigReport, ScenarioReport};

    fn healthy() -> Results {
        let config = ConfigReport { concurrency: 1, count: Some(100), timeout_ms: 1_000, ..ConfigReport::default() };
        let mut s = ScenarioResult::new(ScenarioReport::not_started("hello", config));
        (s.iterations, s.ok, s.failed) = (100, 90, 10);
        s.errors.status = 10;
        s.http.responses = 100;
        s.http.status = [(200, 90), (503, 10)].into_iter().collect();
        (s.rps, s.attempts_per_sec) = (900.0, 1_000.0);
        s.latency_us = Some(LatencyReport {
            mean: 2.0,
            stdev: 1.0,
            min: 1.0,
            p50: 2.0,
            p90: 3.0,
            p95: 3.5,
            p99: 4.0,
            p99_9: 5.0,
            max: 6.0,
            percentiles: Default::default(),
            spectrum: Vec::new(),
            histogram: None,
        });
        s.runs = vec![RunSample::of(&s)];
        let mut report = Results::new(std::time::SystemTime::now());
        report.scenarios = vec![s];
        report
    }

    fn judged(change: impl FnOnce(&mut ScenarioResult)) -> Option<String> {
        let mut report = healthy();
        change(&mut report.scenarios[0]);
        check_baseline(&report)
    }

    #[test]
    fn a_healthy_baseline_passes() {
        assert_eq!(check_baseline(&healthy()), None);
        assert_eq!(judged(|s| s.attempts_per_sec = 0.0), None, "a file from before attempts_per_sec");
        assert_eq!(judged(|s| s.runs.clear()), None, "one run keeps no samples");
        assert_eq!(judged(|s| s.latency_us = None), None);
        let mostly_timeouts_then_fine = |s: &mut ScenarioResult| {
            // The median of runs at 0, 0 and 1000 req/s: 0, though 1000 iterations succeeded.
            s.rps = 0.0;
            s.runs = [0.0, 0.0, 1_000.0].map(|rps| RunSample { rps, ..RunSample::of(s) }).to_vec();
        };
        assert_eq!(judged(mostly_timeouts_then_fine), None);
    }

    #[test]
    fn impossible_figures_are_named() {
        for (change, expected) in [
            (
                Box::new(|s: &mut ScenarioResult| s.rps = -5.0) as Box<dyn FnOnce(&mut ScenarioResult)>,
                "scenario `hello`: rps is -5",
            ),
            (Box::new(|s| s.rps = f64::NAN), "scenario `hello`: rps is NaN"),
            (Box::new(|s| s.attempts_per_sec = f64::INFINITY), "scenario `hello`: attempts_per_sec is inf"),
            (Box::new(|s| s.rps = 0.0), "scenario `hello`: rps is 0 with 90 successful iterations"),
            (Box::new(|s| s.ok = 95), "scenario `hello`: ok 95 + failed 10 is more than its 100 iterations"),
            (
                Box::new(|s| s.ok = u64::MAX),
                "scenario `hello`: ok 18446744073709551615 + failed 10 is more than its 100 iterations",
            ),
            (Box::new(|s| s.rps = 2_000.0), "scenario `hello`: rps 2000 is more than attempts_per_sec 1000"),
            (
                Box::new(|s| {
                    (s.ok, s.failed, s.iterations) = (0, 100, 100);
                }),
                "scenario `hello`: rps is 900 with no successful iteration",
            ),
            (
                Box::new(|s| {
                    if let Some(l) = &mut s.latency_us {
                        l.p99 = 1.0;
                    }
                }),
                "scenario `hello`: latency p90 3 is above p99 1",
            ),
            (
                Box::new(|s| {
                    if let Some(l) = &mut s.latency_us {
                        l.mean = -1.0;
                    }
                }),
                "scenario `hello`: latency mean is -1",
            ),
            (Box::new(|s| s.runs[0].rps = -1.0), "scenario `hello`: run 1: rps is -1"),
            (
                Box::new(|s| s.runs[0].failed = 101),
                "scenario `hello`: run 1: ok 90 + failed 101 is more than its 100 iterations",
            ),
        ] {
            assert_eq!(judged(change).as_deref(), Some(expected));
        }
        let mut empty = healthy();
        empty.scenarios.clear();
        // What --allow-no-scenarios saves: read back as "nothing to compare", not refused.
        assert_eq!(check_baseline(&empty), None);
    }

    #[test]
    fn a_mostly_failing_run_is_below_the_floor() {
        let refused = |ok: u64, failed: u64| {
            let mut report = healthy();
            let s = &mut report.scenarios[0];
            (s.iterations, s.ok, s.failed) = (ok + failed, ok, failed);
            s.rps = if ok > 0 { 1.0 } else { 0.0 };
            s.attempts_per_sec = 1.0;
            below_success_floor(&report)
        };
        assert_eq!(
            refused(0, 100).as_deref(),
            Some("scenario `hello` succeeded in 0.0% of its iterations (0 of 100), below the 50% a baseline needs")
        );
        assert!(refused(49, 51).is_some_and(|r| r.contains("49.0%")));
        assert_eq!(refused(50, 50), None, "the floor itself is enough");
        assert_eq!(refused(0, 0).as_deref(), Some("scenario `hello` finished no iteration"));
        let mut interrupted = healthy();
        (interrupted.scenarios[0].ok, interrupted.scenarios[0].interrupted) = (0, true);
        assert_eq!(below_success_floor(&interrupted), None, "not saved anyway");
    }
}
