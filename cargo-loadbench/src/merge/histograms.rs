//! The shards' histograms added up. Percentiles do not average: the p99 of two shards is not the
//! mean of their p99s, so every latency of the merged document is computed again from the sum of
//! the shards' HdrHistograms, which is exactly the histogram one machine would have recorded.

use hdrhistogram::Histogram;
use loadbench::report::LatencyReport;
use loadbench::report::histogram::{self, Keep};
use loadbench::threshold::Percentile;

/// A running sum of encoded histograms (`LatencyReport::histogram`, `TimelineSecond::histogram`).
#[derive(Debug, Default)]
pub struct Sum {
    /// `None` until the first histogram arrives; then that histogram, growing to hold the others.
    total: Option<Histogram<u64>>,
}

impl Sum {
    /// Adds the histogram `text` encodes; the reason in words when it does not decode or add.
    pub fn add(&mut self, text: &str) -> Result<(), String> {
        let h = histogram::decode(text)?;
        match &mut self.total {
            // The first one sets the precision (the shards' are alike: the same runtime wrote
            // them); it grows past its encoded range as the others need.
            None => {
                let mut h = h;
                h.auto(true);
                self.total = Some(h);
            }
            Some(total) => total.add(&h).map_err(|e| format!("it cannot be added to the others: {e}"))?,
        }
        Ok(())
    }

    /// The latency report of the sum (nanoseconds in, microseconds out), with the `extra`
    /// percentiles and what `keep` asks for; `None` when nothing was recorded.
    pub fn latency(&self, extra: &[Percentile], keep: Keep) -> Option<LatencyReport> {
        self.total.as_ref().and_then(|h| histogram::latency_report(h, extra, keep))
    }

    /// The value at `quantile` as a timeline second reports it (the histogram's own unit, no
    /// rounding); `None` when empty.
    pub fn quantile(&self, quantile: f64) -> Option<f64> {
        self.total.as_ref().filter(|h| !h.is_empty()).map(|h| h.value_at_quantile(quantile) as f64)
    }

    /// The sum, encoded again for the merged document; `None` when empty (or, never in
    /// practice, when it cannot be encoded: the figures are still right, only the histogram is
    /// left out).
    pub fn encoded(&self) -> Option<String> {
        self.total.as_ref().filter(|h| !h.is_empty()).and_then(|h| histogram::encode(h).ok())
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A histogram of nanoseconds as the engine makes them: 3 significant digits, growing.
    pub fn nanoseconds(values: impl IntoIterator<Item = u64>) -> Histogram<u64> {
        let mut h = Histogram::new_with_bounds(1, 10_000_000_000, 3).unwrap_or_else(|e| panic!("{e}"));
        h.auto(true);
        for v in values {
            h.record(v).unwrap_or_else(|e| panic!("{e}"));
        }
        h
    }

    pub fn encoded(h: &Histogram<u64>) -> String {
        histogram::encode(h).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn the_sum_is_the_histogram_of_all_the_samples() {
        let a: Vec<u64> = (1..=3_000).map(|i| i * 7_919 % 2_000_003 + 1).collect();
        // Beyond the first one's range: the sum grows.
        let b: Vec<u64> = (1..=2_000).map(|i| i * 104_729 % 90_000_000_017 + 1).collect();
        let mut sum = Sum::default();
        assert!(sum.latency(&[], Keep::default()).is_none() && sum.encoded().is_none());
        sum.add(&encoded(&nanoseconds(a.iter().copied()))).unwrap_or_else(|e| panic!("{e}"));
        sum.add(&encoded(&nanoseconds(b.iter().copied()))).unwrap_or_else(|e| panic!("{e}"));
        let all = nanoseconds(a.into_iter().chain(b));
        let keep = Keep { spectrum: true, histogram: true };
        let p75: Percentile = "p75".parse().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(sum.latency(&[p75], keep), histogram::latency_report(&all, &[p75], keep));
        assert!(sum.add("not base64!").is_err_and(|e| e.starts_with("not base64")));
    }
}
