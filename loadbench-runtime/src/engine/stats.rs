//! Per-worker measurements and their merge into a [`ScenarioReport`](crate::report::ScenarioReport).
//!
//! With histograms asked for (`--histograms`, a shard of a distributed run), each latency of the
//! report carries its HdrHistogram too, encoded only here, when the report is made: recording an
//! iteration costs the same either way.

use std::time::Duration;

use hdrhistogram::Histogram;

use loadbench_grammar::Percentile;

use super::causes::CauseCounts;
use super::connections::ConnectionStats;
use super::histogram::{latency_of, new_histogram};
use super::timeline::Timeline;
use crate::error::Error;
use crate::http::HttpCounters;
use crate::report::histogram::Keep;
use crate::report::{
    Causes, CheckReport, ErrorCounts, HookReport, HttpReport, LatencyReport, StepReport, TimelineSecond,
};

/// What one worker thread measured. Only that thread writes it, so recording takes no lock.
#[derive(Debug)]
pub(crate) struct WorkerStats {
    /// Latency of successful iterations, in nanoseconds; auto-resizing so no value is ever
    /// rejected, and merged with `add` (never `+=`, which panics on a range mismatch).
    pub(crate) latency_ns: Histogram<u64>,
    pub(crate) ok: u64,
    pub(crate) errors: ErrorCounts,
    pub(crate) http: HttpReport,
    /// Why iterations failed: their messages, counted within a bound.
    pub(crate) causes: CauseCounts,
    /// Open model: arrivals that found no idle virtual user and were not run.
    pub(crate) dropped: u64,
    /// Measured iterations still in flight when the run was cut short (its grace period over, or
    /// a second signal): their futures were dropped; neither failures nor latencies.
    pub(crate) cancelled: u64,
    /// One entry per second of the run, by the second an iteration ended in (a dropped arrival:
    /// the second it was due in).
    pub(crate) timeline: Timeline,
    /// Named steps (`ctx.step`), in the order they were first seen.
    pub(crate) steps: Vec<StepStats>,
    /// Named requests (`.name(…)`), in the order they were first sent.
    pub(crate) requests: Vec<StepStats>,
    /// Checks (`ctx.check`), in the order they were first made.
    pub(crate) checks: Vec<CheckReport>,
    /// Runs of the per-user setup (`setup = …`).
    pub(crate) setup: HookReport,
    /// Runs of the per-user teardown (`teardown = …`).
    pub(crate) teardown: HookReport,
    /// The connections opened: connect and handshake times, handshakes by kind.
    pub(crate) connections: ConnectionStats,
}

/// One named step's (or named request's) figures on one worker.
#[derive(Debug)]
pub(crate) struct StepStats {
    name: String,
    ok: u64,
    errors: ErrorCounts,
    /// Why runs failed: their messages, counted within a bound.
    causes: CauseCounts,
    /// Latency of successful runs of the step, in nanoseconds.
    latency_ns: Histogram<u64>,
}

impl StepStats {
    fn new(name: &str) -> StepStats {
        StepStats {
            name: name.to_owned(),
            ok: 0,
            errors: ErrorCounts::default(),
            causes: CauseCounts::default(),
            latency_ns: new_histogram(),
        }
    }

    /// Records one run that took `elapsed` and failed with `error`, if any.
    fn record(&mut self, error: Option<&Error>, elapsed: Duration) {
        match error {
            None => {
                self.ok += 1;
                let ns = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
                if self.latency_ns.record(ns).is_err() {
                    self.latency_ns.saturating_record(ns);
                }
            }
            Some(err) => {
                *self.errors.slot(err.kind()) += 1;
                self.causes.count(err);
            }
        }
    }
}

impl WorkerStats {
    pub(crate) fn new() -> WorkerStats {
        WorkerStats {
            latency_ns: new_histogram(),
            ok: 0,
            errors: ErrorCounts::default(),
            http: HttpReport::default(),
            causes: CauseCounts::default(),
            dropped: 0,
            cancelled: 0,
            timeline: Timeline::default(),
            steps: Vec::new(),
            requests: Vec::new(),
            checks: Vec::new(),
            setup: HookReport::default(),
            teardown: HookReport::default(),
            connections: ConnectionStats::default(),
        }
    }

    /// The figures of the step called `name`, created on first use.
    fn step(&mut self, name: &str) -> &mut StepStats {
        row(&mut self.steps, name)
    }

    /// Records one run of the step `name` that took `elapsed` and failed with `error`, if any.
    pub(crate) fn record_step(&mut self, name: &str, error: Option<&Error>, elapsed: Duration) {
        self.step(name).record(error, elapsed);
    }

    /// Records one request named `name` that took `elapsed` and failed with `error`, if any.
    pub(crate) fn record_request(&mut self, name: &str, error: Option<&Error>, elapsed: Duration) {
        row(&mut self.requests, name).record(error, elapsed);
    }

    /// Every step, then every named request: whether it is a step, its name, its successes, its
    /// failures by kind and its successes' latencies (for the live metrics).
    #[cfg(feature = "remote-write")]
    pub(crate) fn live_rows(&self) -> impl Iterator<Item = (bool, &str, u64, &ErrorCounts, &Histogram<u64>)> {
        let steps = self.steps.iter().map(|s| (true, s));
        let requests = self.requests.iter().map(|s| (false, s));
        steps.chain(requests).map(|(step, s)| (step, s.name.as_str(), s.ok, &s.errors, &s.latency_ns))
    }

    /// Records one evaluation of the check `name`.
    pub(crate) fn record_check(&mut self, name: &str, passed: bool) {
        let check = check(&mut self.checks, name);
        if passed {
            check.passes += 1;
        } else {
            check.fails += 1;
        }
    }

    /// Counts an arrival of the open model that no virtual user was free to serve.
    pub(crate) fn record_dropped(&mut self, second: usize) {
        self.dropped += 1;
        self.timeline.dropped(second);
    }

    /// Records one finished iteration that took `elapsed`; `second` places it in the timeline
    /// (`None` for failures that belong to no moment of the run, such as a crashed worker; a
    /// success without one would be counted in the timeline's open second).
    pub(crate) fn record(&mut self, outcome: Result<(), Error>, elapsed: Duration, second: Option<usize>) {
        // Nanoseconds once, as a `u64` from seconds and sub-second nanoseconds: `as_nanos`
        // would go through a `u128` on every iteration.
        let ns = elapsed.as_secs().saturating_mul(1_000_000_000).saturating_add(u64::from(elapsed.subsec_nanos()));
        match outcome {
            Ok(()) => {
                self.ok += 1;
                // Before the histogram has it: the timeline takes a second's latencies from
                // the histogram (`timeline.rs`).
                if let Some(second) = second {
                    self.timeline.succeeding(second, &self.latency_ns);
                }
                // `record` grows the histogram past its initial range; `saturating_record` would
                // silently clamp to it instead, so it is only the fallback.
                if self.latency_ns.record(ns).is_err() {
                    self.latency_ns.saturating_record(ns);
                }
            }
            Err(err) => {
                if let Some(second) = second {
                    self.timeline.failed(second);
                }
                *self.errors.slot(err.kind()) += 1;
                self.causes.count(&err);
            }
        }
    }

    pub(crate) fn absorb(&mut self, counters: &HttpCounters) {
        let version =
            crate::report::HttpVersion::of(counters.responses, counters.http2_responses, counters.http3_responses);
        self.http.version = crate::report::HttpVersion::merge(self.http.version, version);
        self.http.responses += counters.responses;
        self.http.bytes_received += counters.bytes_received;
        self.http.connections += counters.connections;
        self.http.retries += counters.retries;
        self.http.redirects += counters.redirects;
        for (code, n) in counters.status.iter() {
            *self.http.status.entry(code).or_default() += n;
        }
        self.connections.absorb(counters);
    }

    pub(crate) fn merge(&mut self, mut other: WorkerStats) {
        // Each timeline's open second is taken from its own histogram, before the two add up.
        self.timeline.close(&self.latency_ns);
        other.timeline.close(&other.latency_ns);
        // Both histograms auto-resize, so `add` cannot fail on range; keep going if it ever does
        // rather than lose the rest of the run.
        let _ = self.latency_ns.add(&other.latency_ns);
        self.ok += other.ok;
        self.errors.add(&other.errors);
        self.http.add(&other.http);
        self.connections.merge(other.connections);
        self.causes.merge(other.causes);
        self.dropped += other.dropped;
        self.cancelled += other.cancelled;
        self.timeline.merge(other.timeline);
        self.setup.merge(other.setup);
        self.teardown.merge(other.teardown);
        merge_rows(&mut self.steps, other.steps);
        merge_rows(&mut self.requests, other.requests);
        for other in other.checks {
            let mine = check(&mut self.checks, &other.name);
            mine.passes += other.passes;
            mine.fails += other.fails;
        }
    }

    /// Why the iterations failed: the most frequent messages, the rest summed.
    pub(crate) fn causes_report(&self) -> Causes {
        self.causes.report()
    }

    /// The figures of each step, in the order the steps were first seen; with `histograms`, each
    /// latency's histogram too.
    pub(crate) fn steps_report(&self, extra: &[Percentile], histograms: bool) -> Vec<StepReport> {
        rows_report(&self.steps, extra, histograms)
    }

    /// The figures of each named request, in the order the names were first sent; with
    /// `histograms`, each latency's histogram too.
    pub(crate) fn requests_report(&self, extra: &[Percentile], histograms: bool) -> Vec<StepReport> {
        rows_report(&self.requests, extra, histograms)
    }

    /// The per-second figures, one entry for every second from the start of the run to its last;
    /// with `histograms`, each second's histogram too.
    pub(crate) fn timeline_report(&self, histograms: bool) -> Vec<TimelineSecond> {
        self.timeline.report(histograms, &self.latency_ns)
    }

    /// The latency of the successful iterations, with the `extra` percentiles asked for; with
    /// `histograms`, its histogram too.
    pub(crate) fn latency_report(&self, extra: &[Percentile], histograms: bool) -> Option<LatencyReport> {
        latency_of(&self.latency_ns, extra, Keep { spectrum: true, histogram: histograms })
    }
}

/// The row called `name` in `rows`, created on first use. A linear search: a scenario has a
/// handful of steps or names, and comparing a few short strings beats hashing one.
fn row<'a>(rows: &'a mut Vec<StepStats>, name: &str) -> &'a mut StepStats {
    let index = match rows.iter().position(|s| s.name == name) {
        Some(index) => index,
        None => {
            rows.push(StepStats::new(name));
            rows.len() - 1
        }
    };
    &mut rows[index]
}

/// The check called `name` in `checks`, created on first use (a linear search, as [`row`]).
fn check<'a>(checks: &'a mut Vec<CheckReport>, name: &str) -> &'a mut CheckReport {
    let index = match checks.iter().position(|c| c.name == name) {
        Some(index) => index,
        None => {
            checks.push(CheckReport { name: name.to_owned(), passes: 0, fails: 0 });
            checks.len() - 1
        }
    };
    &mut checks[index]
}

/// Each row's figures, in the order the rows were first seen.
fn rows_report(rows: &[StepStats], extra: &[Percentile], histograms: bool) -> Vec<StepReport> {
    rows.iter()
        .map(|s| StepReport {
            name: s.name.clone(),
            iterations: s.ok + s.errors.total(),
            ok: s.ok,
            failed: s.errors.total(),
            errors: s.errors,
            causes: s.causes.report(),
            latency_us: latency_of(&s.latency_ns, extra, Keep { spectrum: true, histogram: histograms }),
        })
        .collect()
}

/// Adds `other`'s rows to `rows`, keeping the order in which they were first seen.
fn merge_rows(rows: &mut Vec<StepStats>, other: Vec<StepStats>) {
    for step in other {
        let mine = row(rows, &step.name);
        mine.ok += step.ok;
        mine.errors.add(&step.errors);
        mine.causes.merge(step.causes);
        let _ = mine.latency_ns.add(&step.latency_ns);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latencies_beyond_the_initial_range_are_kept_not_clamped() {
        let mut a = WorkerStats::new();
        a.record(Ok(()), Duration::from_secs(100), Some(0));
        let latency = a.latency_report(&[], false).expect("one sample");
        assert!((latency.max / 1e6 - 100.0).abs() < 0.1, "{latency:?}");
    }

    #[test]
    fn merged_latency_keeps_the_extremes() {
        let mut a = WorkerStats::new();
        a.record(Ok(()), Duration::from_micros(1_500), Some(0));
        a.record(Ok(()), Duration::from_micros(2_500), Some(2));
        let mut merged = WorkerStats::new();
        merged.merge(a);
        let latency = merged.latency_report(&[], false).expect("two samples");
        assert!((latency.min - 1_500.0).abs() < 2.0, "{latency:?}");
        assert!((latency.max - 2_500.0).abs() < 3.0, "{latency:?}");
        let timeline = merged.timeline_report(false);
        assert_eq!(timeline.iter().map(|s| s.requests).collect::<Vec<_>>(), [1, 0, 1]);
        assert_eq!(timeline[1].p50_us, None, "a second without iterations has no latency");
        assert!(timeline[2].p99_us.is_some_and(|p| (p - 2_500.0).abs() <= 25.0), "{timeline:?}");
        assert!(timeline.iter().all(|s| s.histogram.is_none()) && latency.histogram.is_none(), "only when asked");
    }

    #[test]
    fn histograms_asked_for_are_in_every_latency_and_decode_to_what_was_recorded() {
        use crate::report::histogram::decode;
        let mut stats = WorkerStats::new();
        for us in [900, 1_100, 1_500] {
            stats.record(Ok(()), Duration::from_micros(us), Some(0));
        }
        stats.record(Ok(()), Duration::from_micros(3_000), Some(1));
        stats.record_step("login", None, Duration::from_micros(700));
        stats.record_request("GET /", None, Duration::from_micros(600));
        stats.connections.record(Some(Duration::from_micros(80)), Some(Duration::from_micros(400)));
        let decoded = |text: Option<&String>| {
            decode(text.unwrap_or_else(|| panic!("no histogram"))).unwrap_or_else(|e| panic!("{e}"))
        };
        let latency = stats.latency_report(&[], true).unwrap_or_else(|| panic!("no latency"));
        let h = decoded(latency.histogram.as_ref());
        assert_eq!((h.len(), h.min(), h.max()), (4, stats.latency_ns.min(), stats.latency_ns.max()));
        assert_eq!(h, stats.latency_ns, "nanoseconds, value for value");
        for rows in [stats.steps_report(&[], true), stats.requests_report(&[], true)] {
            assert_eq!(decoded(rows[0].latency_us.as_ref().and_then(|l| l.histogram.as_ref())).len(), 1);
        }
        for connection in [stats.connections.connect_report(true), stats.connections.handshake_report(true)] {
            assert_eq!(decoded(connection.as_ref().and_then(|l| l.histogram.as_ref())).len(), 1);
        }
        // Each second's, in microseconds.
        let timeline = stats.timeline_report(true);
        let seconds: Vec<(u64, u64)> = timeline
            .iter()
            .map(|s| decoded(s.histogram.as_ref()))
            .map(|h| (h.len(), h.value_at_quantile(1.0)))
            .collect();
        assert_eq!(seconds.len(), 2);
        assert_eq!(seconds[0].0, 3);
        assert!(seconds[0].1.abs_diff(1_500) <= 15 && seconds[1].1.abs_diff(3_000) <= 30, "{seconds:?}");
    }
}
