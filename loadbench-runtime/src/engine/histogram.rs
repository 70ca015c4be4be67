//! The HDR histograms of a run's times, all alike: nanoseconds, 3 significant digits, growing on
//! demand; and their summary in the report's microseconds.

use hdrhistogram::Histogram;

use loadbench_grammar::Percentile;

use crate::report::LatencyReport;

/// A latency histogram in nanoseconds: 3 significant digits (0.1 % resolution) from 1 ns, sized
/// up front for 10 s and growing on demand beyond that.
pub(super) fn new_histogram() -> Histogram<u64> {
    const INITIAL_HIGH_NS: u64 = 10_000_000_000;
    match Histogram::new_with_bounds(1, INITIAL_HIGH_NS, 3) {
        Ok(mut h) => {
            h.auto(true);
            h
        }
        Err(_) => unreachable!("constant bounds are valid"),
    }
}

/// Percentiles of a nanosecond histogram, in microseconds, with the `extra` ones asked for beside
/// the fixed ones; `None` when it is empty.
pub(super) fn latency_of(h: &Histogram<u64>, extra: &[Percentile]) -> Option<LatencyReport> {
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
        p95: at(0.95),
        p99: at(0.99),
        p99_9: at(0.999),
        max: us(h.max() as f64),
        percentiles: extra
            .iter()
            .filter(|p| !LatencyReport::FIXED.contains(p))
            .map(|p| (p.name(), at(p.quantile())))
            .collect(),
    })
}
