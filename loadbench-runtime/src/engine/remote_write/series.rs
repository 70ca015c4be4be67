//! A reading of a scenario's counts as Prometheus series: counters of iterations, failures by
//! kind, responses and bytes received, and the successes' latency as a native histogram or as
//! classic buckets. Every series carries `scenario`, `shard`, `run` and the user's labels.
//!
//! Latency comes from the progress counts' log-linear buckets (an eighth of a power of two of
//! microseconds each). Classic buckets are exact: each `le` is one of those buckets' ends. A
//! native histogram (schema 3, seconds) puts each of those buckets in the native bucket holding
//! its middle, which is within the live buckets' own precision (1/16) of where its latencies
//! were; the count is exact either way. The sum is taken from the buckets' middles.

use std::collections::BTreeMap;

use super::LivePush;
use super::proto::{BucketSpan, Histogram, Label, Sample, TimeSeries, WriteRequest};
use crate::cli::HistogramKind;
use crate::engine::progress::LiveReading;
use crate::engine::progress::window::{BUCKETS, bucket_end, bucket_middle};

/// A native histogram's schema: 2^(1/8) between bucket boundaries, the live buckets' resolution.
const SCHEMA: i32 = 3;

/// The zero bucket of a native histogram holds what took under a microsecond (the first live
/// bucket), in seconds.
const ZERO_THRESHOLD: f64 = 0.5e-6;

/// The classic buckets' bounds: the live buckets ending at 12·2^k and 16·2^k microseconds, from
/// 2 µs to about 67 s (two per power of two), then `+Inf`.
fn classic_bounds() -> Vec<usize> {
    (0..BUCKETS).filter(|&i| i == 1 || (i >= 8 && i % 4 == 3 && bucket_end(i) <= 1 << 26)).collect()
}

/// The labels a scenario's series share, sorted by name once `__name__` and a series' own are in.
#[derive(Debug, Clone)]
pub(super) struct Scope {
    labels: Vec<(String, String)>,
}

impl Scope {
    pub(super) fn new(scenario: &str, push: &LivePush) -> Scope {
        let mut labels = vec![
            ("scenario".to_owned(), scenario.to_owned()),
            ("shard".to_owned(), push.shard.clone()),
            ("run".to_owned(), push.run.clone()),
        ];
        labels.extend(push.config.labels.iter().map(|l| (l.name.clone(), l.value.clone())));
        Scope { labels }
    }

    /// The labels of series `name`, with `extra` (such as `kind`), sorted.
    fn labels(&self, name: &str, extra: Option<(&str, &str)>) -> Vec<Label> {
        let mut labels: Vec<Label> = std::iter::once(("__name__", name))
            .chain(extra)
            .chain(self.labels.iter().map(|(n, v)| (n.as_str(), v.as_str())))
            .map(|(name, value)| Label { name: name.to_owned(), value: value.to_owned() })
            .collect();
        labels.sort_by(|a, b| a.name.cmp(&b.name));
        labels
    }

    fn float(&self, name: &str, extra: Option<(&str, &str)>, value: f64, timestamp: i64) -> TimeSeries {
        TimeSeries {
            labels: self.labels(name, extra),
            samples: vec![Sample { value, timestamp }],
            histograms: Vec::new(),
        }
    }
}

/// The push of `reading`, taken at `timestamp` (milliseconds since the Unix epoch).
pub(super) fn write_request(scope: &Scope, reading: &LiveReading, kind: HistogramKind, timestamp: i64) -> WriteRequest {
    let totals = &reading.totals;
    let mut series = vec![
        scope.float("loadbench_iterations_total", None, totals.done as f64, timestamp),
        scope.float("loadbench_requests_total", None, reading.responses as f64, timestamp),
        scope.float("loadbench_received_bytes_total", None, reading.bytes_received as f64, timestamp),
    ];
    for (kind, count) in &reading.errors {
        series.push(scope.float("loadbench_failures_total", Some(("kind", *kind)), *count as f64, timestamp));
    }
    let latency = &totals.latency;
    let count: u64 = latency.iter().sum();
    let sum: f64 = latency.iter().enumerate().map(|(i, &n)| bucket_middle(i) * n as f64).sum::<f64>() / 1e6;
    match kind {
        HistogramKind::Native => series.push(TimeSeries {
            labels: scope.labels("loadbench_latency_seconds", None),
            samples: Vec::new(),
            histograms: vec![native(latency, count, sum, timestamp)],
        }),
        HistogramKind::Classic => {
            let mut below = 0;
            let mut from = 0;
            for end in classic_bounds() {
                below += latency[from..=end].iter().sum::<u64>();
                from = end + 1;
                let le = (bucket_end(end) as f64 / 1e6).to_string();
                series.push(scope.float(
                    "loadbench_latency_seconds_bucket",
                    Some(("le", le.as_str())),
                    below as f64,
                    timestamp,
                ));
            }
            series.push(scope.float("loadbench_latency_seconds_bucket", Some(("le", "+Inf")), count as f64, timestamp));
            series.push(scope.float("loadbench_latency_seconds_count", None, count as f64, timestamp));
            series.push(scope.float("loadbench_latency_seconds_sum", None, sum, timestamp));
        }
    }
    WriteRequest { timeseries: series }
}

/// The index of the schema-3 native bucket holding `seconds` (above zero): bucket `i` holds
/// (2^((i-1)/8), 2^(i/8)].
fn native_index(seconds: f64) -> i32 {
    (seconds.log2() * f64::from(1 << SCHEMA)).ceil() as i32
}

/// The live buckets' counts as a native histogram of seconds.
fn native(latency: &[u64; BUCKETS], count: u64, sum: f64, timestamp: i64) -> Histogram {
    let mut zero = 0;
    let mut buckets: BTreeMap<i32, u64> = BTreeMap::new();
    for (i, &n) in latency.iter().enumerate().filter(|(_, n)| **n > 0) {
        let seconds = bucket_middle(i) / 1e6;
        if seconds <= ZERO_THRESHOLD {
            zero += n;
        } else {
            *buckets.entry(native_index(seconds)).or_default() += n;
        }
    }
    let mut spans: Vec<BucketSpan> = Vec::new();
    let mut deltas = Vec::with_capacity(buckets.len());
    let (mut next, mut previous) = (None::<i32>, 0i64);
    for (&index, &n) in &buckets {
        if next == Some(index)
            && let Some(span) = spans.last_mut()
        {
            span.length += 1;
        } else {
            spans.push(BucketSpan { offset: next.map_or(index, |end| index - end), length: 1 });
        }
        next = Some(index + 1);
        let n = i64::try_from(n).unwrap_or(i64::MAX);
        deltas.push(n - previous);
        previous = n;
    }
    Histogram {
        count_int: Some(count),
        sum,
        schema: SCHEMA,
        zero_threshold: ZERO_THRESHOLD,
        zero_count_int: Some(zero),
        positive_spans: spans,
        positive_deltas: deltas,
        timestamp,
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::cli::{Label as UserLabel, RemoteWriteConfig};
    use crate::engine::progress::window::{LatencyBuckets, Totals};

    fn scope() -> Scope {
        let config = RemoteWriteConfig {
            url: "http://p/".into(),
            labels: vec![UserLabel { name: "Env".into(), value: "ci".into() }],
            interval: Duration::from_secs(1),
            histograms: HistogramKind::Native,
        };
        Scope::new("GET /", &LivePush { config, run: "r1".into(), shard: "0".into() })
    }

    fn reading(latencies_us: &[u64]) -> LiveReading {
        let buckets = LatencyBuckets::default();
        for &us in latencies_us {
            buckets.record(Duration::from_micros(us));
        }
        let mut totals = Totals::empty();
        buckets.add_to(&mut totals.latency);
        totals.done = latencies_us.len() as u64 + 2;
        totals.failed = 2;
        LiveReading { totals, errors: vec![("connect", 0), ("status", 2)], responses: 7, bytes_received: 700 }
    }

    fn value(request: &WriteRequest, name: &str, extra: Option<(&str, &str)>) -> Option<f64> {
        let series = request.timeseries.iter().find(|s| {
            s.labels.iter().any(|l| l.name == "__name__" && l.value == name)
                && extra.is_none_or(|(n, v)| s.labels.iter().any(|l| l.name == n && l.value == v))
        })?;
        series.samples.first().map(|s| s.value)
    }

    #[test]
    fn counters_carry_the_scopes_labels_sorted() {
        let request = write_request(&scope(), &reading(&[100, 200]), HistogramKind::Native, 42);
        assert_eq!(value(&request, "loadbench_iterations_total", None), Some(4.0));
        assert_eq!(value(&request, "loadbench_requests_total", None), Some(7.0));
        assert_eq!(value(&request, "loadbench_received_bytes_total", None), Some(700.0));
        assert_eq!(value(&request, "loadbench_failures_total", Some(("kind", "status"))), Some(2.0));
        assert_eq!(value(&request, "loadbench_failures_total", Some(("kind", "connect"))), Some(0.0));
        for series in &request.timeseries {
            let names: Vec<&str> = series.labels.iter().map(|l| l.name.as_str()).collect();
            let mut sorted = names.clone();
            sorted.sort_unstable();
            assert_eq!(names, sorted);
            assert!(["Env", "run", "scenario", "shard"].iter().all(|n| names.contains(n)), "{names:?}");
            assert!(
                series
                    .samples
                    .iter()
                    .map(|s| s.timestamp)
                    .chain(series.histograms.iter().map(|h| h.timestamp))
                    .all(|t| t == 42)
            );
        }
    }

    /// Expands a native histogram's spans and deltas into (index, count).
    fn expand(h: &Histogram) -> Vec<(i32, i64)> {
        let mut out = Vec::new();
        let (mut index, mut count, mut deltas) = (0, 0, h.positive_deltas.iter());
        // Offsets after the first span's count from the end of the span before.
        for span in &h.positive_spans {
            index += span.offset;
            for _ in 0..span.length {
                count += deltas.next().copied().unwrap_or(0);
                out.push((index, count));
                index += 1;
            }
        }
        out
    }

    #[test]
    fn a_native_histogram_holds_every_success_near_its_latency() {
        let latencies = [0, 100, 100, 105, 1_000, 50_000, 50_000, 3_000_000];
        let request = write_request(&scope(), &reading(&latencies), HistogramKind::Native, 1);
        let histogram = request.timeseries.iter().flat_map(|s| &s.histograms).next().unwrap();
        assert_eq!(histogram.count_int, Some(8));
        assert_eq!(histogram.zero_count_int, Some(1), "the latency under a microsecond");
        let buckets = expand(histogram);
        let total: i64 = buckets.iter().map(|(_, n)| n).sum();
        assert_eq!(total + 1, 8, "every success in a bucket: {buckets:?}");
        // Each latency's native bucket is within one bucket of its own.
        for &us in &latencies[1..] {
            let own = native_index(us as f64 / 1e6);
            assert!(buckets.iter().any(|(i, _)| (i - own).abs() <= 1), "{us} µs: {buckets:?}");
        }
        let sum = histogram.sum;
        let exact: f64 = latencies.iter().map(|&us| us as f64 / 1e6).sum();
        assert!((sum - exact).abs() <= exact / 16.0, "{sum} against {exact}");
    }

    #[test]
    fn classic_buckets_are_cumulative_and_exact() {
        let latencies = [3, 100, 100, 105, 1_000, 50_000];
        let request = write_request(&scope(), &reading(&latencies), HistogramKind::Classic, 1);
        let bucket = |le: &str| value(&request, "loadbench_latency_seconds_bucket", Some(("le", le)));
        assert_eq!(bucket("+Inf"), Some(6.0));
        assert_eq!(value(&request, "loadbench_latency_seconds_count", None), Some(6.0));
        // 96 µs and 128 µs are bounds: 3 µs at or below the first, the three of 100-105 below the second.
        assert_eq!(bucket("0.000096"), Some(1.0));
        assert_eq!(bucket("0.000128"), Some(4.0));
        assert_eq!(bucket("0.001024"), Some(5.0));
        let bounds = classic_bounds();
        assert!(bounds.windows(2).all(|pair| bucket_end(pair[0]) < bucket_end(pair[1])));
        assert_eq!(bucket_end(*bounds.last().unwrap()), 1 << 26);
    }
}
