//! The HDR histograms of a run's times, all alike: nanoseconds, 3 significant digits, growing on
//! demand; and their summary in the report's microseconds.

use hdrhistogram::Histogram;

use loadbench_grammar::Percentile;

use crate::report::LatencyReport;
use crate::report::histogram::Keep;

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
/// the fixed ones, and what `keep` asks for; `None` when it is empty.
pub(super) fn latency_of(h: &Histogram<u64>, extra: &[Percentile], keep: Keep) -> Option<LatencyReport> {
    crate::report::histogram::latency_report(h, extra, keep)
}
