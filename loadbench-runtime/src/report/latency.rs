//! [`LatencyReport`]: a latency's percentiles, spectrum and histogram, in microseconds.

use std::collections::BTreeMap;

use loadbench_grammar::Percentile;
use serde::{Deserialize, Serialize};

/// Latency percentiles from the merged HDR histogram, in microseconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyReport {
    /// Arithmetic mean.
    pub mean: f64,
    /// Standard deviation.
    pub stdev: f64,
    /// Fastest iteration.
    pub min: f64,
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 95th percentile (0 in files written before it was measured).
    #[serde(default)]
    pub p95: f64,
    /// 99th percentile.
    pub p99: f64,
    /// 99.9th percentile.
    pub p99_9: f64,
    /// Slowest iteration.
    pub max: f64,
    /// Other percentiles the run was asked for (by thresholds such as `p75 < 5ms`, or table
    /// columns: `--percentiles`), by name: `{"p75": 640.0, "p99_99": 5210.0}`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub percentiles: BTreeMap<String, f64>,
    /// The percentile spectrum, HdrHistogram's classic plot: the latency at percentiles that
    /// halve the distance to 100 % five steps at a time (0, 10, 20, …, 50, 55, …, 75, 77.5, …),
    /// then at 100 %, for the HTML report's "nines" chart. Kept for a scenario's and a step's
    /// latency; empty elsewhere and in files from before it was kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub spectrum: Vec<SpectrumPoint>,
    /// The latencies themselves, in nanoseconds, as an HdrHistogram in its standard compressed
    /// encoding (base64 of the V2 deflate format, which HdrHistogram's other implementations
    /// read), when histograms were asked for (`--histograms`, and always with `--shard`), so that
    /// the shards of a run merge exactly; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histogram: Option<String>,
}

/// One point of a [`LatencyReport::spectrum`]: the latency, in microseconds, at or below which
/// `percentile` percent of the iterations ended.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SpectrumPoint {
    /// From 0 to 100.
    pub percentile: f64,
    /// Microseconds.
    pub value_us: f64,
}

impl LatencyReport {
    /// The percentiles every report holds in fields of their own.
    pub const FIXED: [Percentile; 5] =
        [Percentile::P50, Percentile::P90, Percentile::P95, Percentile::P99, Percentile::P999];

    /// The `percentile` of this latency, in microseconds; `None` when the run was not asked for
    /// it (see [`LatencyReport::percentiles`]).
    ///
    /// ```
    /// # use loadbench::report::LatencyReport;
    /// # use loadbench::threshold::Percentile;
    /// # fn check(latency: &LatencyReport) {
    /// let p95 = latency.percentile(Percentile::P95);
    /// # }
    /// ```
    pub fn percentile(&self, percentile: Percentile) -> Option<f64> {
        match percentile {
            Percentile::P50 => Some(self.p50),
            Percentile::P90 => Some(self.p90),
            Percentile::P95 => Some(self.p95),
            Percentile::P99 => Some(self.p99),
            Percentile::P999 => Some(self.p99_9),
            other => self.percentiles.get(&other.name()).copied(),
        }
    }
}
