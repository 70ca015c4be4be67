//! The HDR histograms of a run's times, all alike: nanoseconds, 3 significant digits, growing on
//! demand; and their summary in the report's microseconds.

use hdrhistogram::Histogram;

use loadbench_grammar::Percentile;

use crate::report::{LatencyReport, SpectrumPoint};

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
/// the fixed ones, and its spectrum when `spectrum` is set; `None` when it is empty.
pub(super) fn latency_of(h: &Histogram<u64>, extra: &[Percentile], spectrum: bool) -> Option<LatencyReport> {
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
        spectrum: if spectrum { spectrum_of(h) } else { Vec::new() },
        histogram: None,
    })
}

/// Ticks per halving of the distance to 100 %, as HdrHistogram's `outputPercentileDistribution`
/// prints by default: about 100 points for a million samples.
const TICKS_PER_HALF_DISTANCE: u32 = 5;

/// The spectrum of `h` in microseconds (see [`LatencyReport::spectrum`]).
fn spectrum_of(h: &Histogram<u64>) -> Vec<SpectrumPoint> {
    let mut points: Vec<SpectrumPoint> = h
        .iter_quantiles(TICKS_PER_HALF_DISTANCE)
        .map(|v| SpectrumPoint {
            percentile: v.quantile_iterated_to() * 100.0,
            value_us: h.highest_equivalent(v.value_iterated_to()) as f64 / 1_000.0,
        })
        .collect();
    // The iterator ends on the last bucket, at a quantile of 1 but not always at the maximum's
    // own bucket value: the plot ends on the maximum.
    points.dedup_by(|b, a| a.percentile == b.percentile);
    points.push(SpectrumPoint { percentile: 100.0, value_us: h.max() as f64 / 1_000.0 });
    points.dedup_by(|b, a| {
        a.percentile == b.percentile && {
            a.value_us = a.value_us.max(b.value_us);
            true
        }
    });
    points
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spectrum_climbs_from_the_minimum_to_the_maximum() {
        let mut h = new_histogram();
        for ns in 1..=10_000u64 {
            h.record(ns * 1_000).unwrap_or_else(|e| panic!("{e}"));
        }
        let Some(latency) = latency_of(&h, &[], true) else { panic!("an empty histogram") };
        let spectrum = &latency.spectrum;
        assert!((40..=140).contains(&spectrum.len()), "{} points", spectrum.len());
        assert_eq!(spectrum.first().map(|p| p.percentile), Some(0.0));
        assert_eq!(spectrum.last().map(|p| (p.percentile, p.value_us)), Some((100.0, latency.max)));
        assert!(spectrum.windows(2).all(|w| w[0].percentile < w[1].percentile && w[0].value_us <= w[1].value_us));
        // The median's point reads the median, within the histogram's 0.1 %.
        let median = spectrum.iter().find(|p| p.percentile == 50.0).map_or(0.0, |p| p.value_us);
        assert!((median - 5_000.0).abs() <= 5.0, "median {median}");
        assert!(latency_of(&h, &[], false).is_some_and(|l| l.spectrum.is_empty()), "only when asked");
    }
}
