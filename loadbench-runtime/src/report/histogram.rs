//! Histograms in the results: a latency report made from an HdrHistogram, and the histogram
//! itself in HdrHistogram's standard compressed encoding (the V2 format, deflated, in base64),
//! which other HdrHistogram implementations read and which adds up exactly: the shards of a
//! distributed run merge into the percentiles of all their samples, not an average of averages.
//!
//! ```
//! use loadbench::report::histogram::{decode, encode};
//! let mut h = hdrhistogram::Histogram::<u64>::new(3).unwrap();
//! h.record(1_500).unwrap();
//! let text = encode(&h).unwrap();
//! assert_eq!(decode(&text).unwrap().len(), 1);
//! ```

use base64::Engine as _;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer as _, V2DeflateSerializer};
use loadbench_grammar::Percentile;

use super::{LatencyReport, SpectrumPoint};

/// What a [`LatencyReport`] holds beside its figures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Keep {
    /// Its percentile spectrum ([`LatencyReport::spectrum`]).
    pub spectrum: bool,
    /// The histogram itself ([`LatencyReport::histogram`]).
    pub histogram: bool,
}

/// `h` in HdrHistogram's V2 deflate encoding, in base64 (standard alphabet, padded).
pub fn encode(h: &Histogram<u64>) -> Result<String, String> {
    let mut bytes = Vec::new();
    V2DeflateSerializer::new().serialize(h, &mut bytes).map_err(|e| format!("cannot encode a histogram: {e:?}"))?;
    Ok(base64::engine::general_purpose::STANDARD.encode(bytes))
}

/// A histogram from [`encode`]'s text (or any HdrHistogram implementation's V2 or V2 deflate
/// encoding, in base64).
pub fn decode(text: &str) -> Result<Histogram<u64>, String> {
    let bytes =
        base64::engine::general_purpose::STANDARD.decode(text.trim()).map_err(|e| format!("not base64: {e}"))?;
    Deserializer::new().deserialize(&mut bytes.as_slice()).map_err(|e| format!("not an HdrHistogram: {e:?}"))
}

/// The latency report of a histogram of nanoseconds: its figures in microseconds, the `extra`
/// percentiles asked for beside the fixed ones, and what `keep` asks for; `None` when it is
/// empty. What a bench binary writes, and what `cargo loadbench merge` computes again from the
/// shards' histograms added up.
pub fn latency_report(h: &Histogram<u64>, extra: &[Percentile], keep: Keep) -> Option<LatencyReport> {
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
        spectrum: if keep.spectrum { spectrum_of(h) } else { Vec::new() },
        histogram: if keep.histogram { encode(h).ok() } else { None },
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

    /// A histogram of nanoseconds as the engine makes them: 3 significant digits, growing.
    fn nanoseconds() -> Histogram<u64> {
        let mut h = Histogram::new_with_bounds(1, 10_000_000_000, 3).unwrap_or_else(|e| panic!("{e}"));
        h.auto(true);
        h
    }

    #[test]
    fn the_spectrum_climbs_from_the_minimum_to_the_maximum() {
        let mut h = nanoseconds();
        for ns in 1..=10_000u64 {
            h.record(ns * 1_000).unwrap_or_else(|e| panic!("{e}"));
        }
        let Some(latency) = latency_report(&h, &[], Keep { spectrum: true, histogram: false }) else {
            panic!("an empty histogram")
        };
        let spectrum = &latency.spectrum;
        assert!((40..=140).contains(&spectrum.len()), "{} points", spectrum.len());
        assert_eq!(spectrum.first().map(|p| p.percentile), Some(0.0));
        assert_eq!(spectrum.last().map(|p| (p.percentile, p.value_us)), Some((100.0, latency.max)));
        assert!(spectrum.windows(2).all(|w| w[0].percentile < w[1].percentile && w[0].value_us <= w[1].value_us));
        // The median's point reads the median, within the histogram's 0.1 %.
        let median = spectrum.iter().find(|p| p.percentile == 50.0).map_or(0.0, |p| p.value_us);
        assert!((median - 5_000.0).abs() <= 5.0, "median {median}");
        assert!(latency_report(&h, &[], Keep::default()).is_some_and(|l| l.spectrum.is_empty()), "only when asked");
    }

    #[test]
    fn a_histogram_survives_its_encoding_and_merges_exactly() {
        let (mut a, mut b, mut all) = (nanoseconds(), nanoseconds(), nanoseconds());
        for ns in (1..=5_000u64).map(|i| i * 7_919 % 1_000_003 + 1) {
            a.record(ns).unwrap_or_else(|e| panic!("{e}"));
            all.record(ns).unwrap_or_else(|e| panic!("{e}"));
        }
        for ns in (1..=3_000u64).map(|i| i * 104_729 % 50_000_017 + 1) {
            b.record(ns).unwrap_or_else(|e| panic!("{e}"));
            all.record(ns).unwrap_or_else(|e| panic!("{e}"));
        }
        let decoded = |h: &Histogram<u64>| decode(&encode(h).unwrap_or_default()).unwrap_or_else(|e| panic!("{e}"));
        let mut merged = decoded(&a);
        merged.add(decoded(&b)).unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(merged, all, "value for value");
        let keep = Keep { spectrum: true, histogram: true };
        assert_eq!(latency_report(&merged, &[], keep), latency_report(&all, &[], keep));
        assert!(decode("not base64!").is_err_and(|e| e.starts_with("not base64")));
        assert!(decode("aGVsbG8=").is_err_and(|e| e.starts_with("not an HdrHistogram")));
    }
}
