//! Per-worker measurements and their merge into a [`ScenarioReport`](crate::report::ScenarioReport).

use std::collections::BTreeMap;
use std::time::Duration;

use hdrhistogram::Histogram;

use crate::ctx::HttpCounters;
use crate::error::{Error, ErrorKind};
use crate::report::{ErrorCounts, HttpReport, LatencyReport};

/// What one worker thread measured. Only that thread writes it, so recording takes no lock.
#[derive(Debug)]
pub(crate) struct WorkerStats {
    /// Latency of successful iterations, in nanoseconds; auto-resizing so no value is ever
    /// rejected, and merged with `add` (never `+=`, which panics on a range mismatch).
    pub(crate) latency_ns: Histogram<u64>,
    pub(crate) ok: u64,
    pub(crate) errors: ErrorCounts,
    pub(crate) http: HttpReport,
    /// One example message per error kind, so the report can say what went wrong.
    pub(crate) first_errors: BTreeMap<&'static str, String>,
}

/// A latency histogram in nanoseconds: 3 significant digits (0.1 % resolution) from 1 ns, sized
/// up front for 10 s and growing on demand beyond that.
fn new_histogram() -> Histogram<u64> {
    const INITIAL_HIGH_NS: u64 = 10_000_000_000;
    match Histogram::new_with_bounds(1, INITIAL_HIGH_NS, 3) {
        Ok(mut h) => {
            h.auto(true);
            h
        }
        Err(_) => unreachable!("constant bounds are valid"),
    }
}

impl WorkerStats {
    pub(crate) fn new() -> WorkerStats {
        WorkerStats {
            latency_ns: new_histogram(),
            ok: 0,
            errors: ErrorCounts::default(),
            http: HttpReport::default(),
            first_errors: BTreeMap::new(),
        }
    }

    pub(crate) fn record(&mut self, outcome: Result<(), Error>, elapsed: Duration) {
        match outcome {
            Ok(()) => {
                self.ok += 1;
                let ns = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
                // `record` grows the histogram past its initial range; `saturating_record` would
                // silently clamp to it instead, so it is only the fallback.
                if self.latency_ns.record(ns).is_err() {
                    self.latency_ns.saturating_record(ns);
                }
            }
            Err(err) => {
                let (slot, name) = match err.kind() {
                    ErrorKind::Connect => (&mut self.errors.connect, "connect"),
                    ErrorKind::Timeout => (&mut self.errors.timeout, "timeout"),
                    ErrorKind::Status => (&mut self.errors.status, "status"),
                    ErrorKind::Io => (&mut self.errors.io, "io"),
                    ErrorKind::Scenario => (&mut self.errors.scenario, "scenario"),
                };
                *slot += 1;
                self.first_errors.entry(name).or_insert_with(|| err.to_string());
            }
        }
    }

    pub(crate) fn absorb(&mut self, counters: &HttpCounters) {
        self.http.responses += counters.responses;
        self.http.bytes_received += counters.bytes_received;
        self.http.connections += counters.connections;
        for &(code, n) in &counters.status {
            *self.http.status.entry(code).or_default() += n;
        }
    }

    pub(crate) fn merge(&mut self, other: WorkerStats) {
        // Both histograms auto-resize, so `add` cannot fail on range; keep going if it ever does
        // rather than lose the rest of the run.
        let _ = self.latency_ns.add(&other.latency_ns);
        self.ok += other.ok;
        self.errors.add(&other.errors);
        self.http.responses += other.http.responses;
        self.http.bytes_received += other.http.bytes_received;
        self.http.connections += other.http.connections;
        for (code, n) in other.http.status {
            *self.http.status.entry(code).or_default() += n;
        }
        for (kind, message) in other.first_errors {
            self.first_errors.entry(kind).or_insert(message);
        }
    }

    pub(crate) fn latency_report(&self) -> Option<LatencyReport> {
        let h = &self.latency_ns;
        if h.is_empty() {
            return None;
        }
        // Microseconds with nanosecond precision.
        let us = |ns: f64| ns.round() / 1_000.0;
        let at = |q: f64| us(h.value_at_quantile(q) as f64);
        Some(LatencyReport {
            mean: us(h.mean()),
            stdev: us(h.stdev()),
            min: us(h.min() as f64),
            p50: at(0.50),
            p90: at(0.90),
            p99: at(0.99),
            p99_9: at(0.999),
            max: us(h.max() as f64),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latencies_beyond_the_initial_range_are_kept_not_clamped() {
        let mut a = WorkerStats::new();
        a.record(Ok(()), Duration::from_secs(100));
        let latency = a.latency_report().expect("one sample");
        assert!((latency.max / 1e6 - 100.0).abs() < 0.1, "{latency:?}");
    }

    #[test]
    fn merged_latency_keeps_the_extremes() {
        let mut a = WorkerStats::new();
        a.record(Ok(()), Duration::from_micros(1_500));
        a.record(Ok(()), Duration::from_micros(2_500));
        let mut merged = WorkerStats::new();
        merged.merge(a);
        let latency = merged.latency_report().expect("two samples");
        assert!((latency.min - 1_500.0).abs() < 2.0, "{latency:?}");
        assert!((latency.max - 2_500.0).abs() < 3.0, "{latency:?}");
    }
}
