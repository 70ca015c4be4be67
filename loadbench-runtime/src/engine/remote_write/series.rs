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
use super::rows::RowCounts;
use crate::cli::HistogramKind;
use crate::engine::progress::window::{BUCKETS, bucket_end, bucket_middle};
use crate::engine::progress::{KINDS, LiveReading};

/// A native histogram's schema: 2^(1/8) between bucket boundaries, the live buckets' resolution.
const SCHEMA: i32 = 3;

/// The zero bucket of a native histogram holds what took under a microsecond (the first live
/// bucket), in seconds.
const ZERO_THRESHOLD: f64 = 0.5e-6;

/// The last classic bound, in microseconds: past it a latency is a timeout's, not a figure to
/// read in buckets.
const CLASSIC_LIMIT_US: u64 = 1 << 26;

/// The classic buckets' bounds: the live buckets ending at 12·2^k and 16·2^k microseconds (two per
/// power of two) up to [`CLASSIC_LIMIT_US`], after the first live bucket's end; then `+Inf`.
fn classic_bounds() -> Vec<usize> {
    (0..BUCKETS).filter(|&i| i == 1 || (i >= 8 && i % 4 == 3 && bucket_end(i) <= CLASSIC_LIMIT_US)).collect()
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
    fn labels(&self, name: &str, extra: &[(&str, &str)]) -> Vec<Label> {
        let mut labels: Vec<Label> = std::iter::once(("__name__", name))
            .chain(extra.iter().copied())
            .chain(self.labels.iter().map(|(n, v)| (n.as_str(), v.as_str())))
            .map(|(name, value)| Label { name: name.to_owned(), value: value.to_owned() })
            .collect();
        labels.sort_by(|a, b| a.name.cmp(&b.name));
        labels
    }

    fn float(&self, name: &str, extra: &[(&str, &str)], value: f64, timestamp: i64) -> TimeSeries {
        TimeSeries {
            labels: self.labels(name, extra),
            samples: vec![Sample { value, timestamp }],
            histograms: Vec::new(),
        }
    }
}

/// The push of `reading` and of the steps' and named requests' `rows`, taken at `timestamp`
/// (milliseconds since the Unix epoch).
pub(super) fn write_request(
    scope: &Scope,
    reading: &LiveReading,
    rows: &[RowCounts],
    kind: HistogramKind,
    timestamp: i64,
) -> WriteRequest {
    let totals = &reading.totals;
    let mut series = vec![
        scope.float("loadbench_iterations_total", &[], totals.done as f64, timestamp),
        scope.float("loadbench_requests_total", &[], reading.responses as f64, timestamp),
        scope.float("loadbench_received_bytes_total", &[], reading.bytes_received as f64, timestamp),
    ];
    for (kind, count) in &reading.errors {
        series.push(scope.float("loadbench_failures_total", &[("kind", *kind)], *count as f64, timestamp));
    }
    latency(scope, "loadbench_latency_seconds", &[], &totals.latency, kind, timestamp, &mut series);
    for row in rows {
        let word = row.kind.word();
        let named = [(word, row.name.as_str())];
        let iterations = (row.ok + row.errors.total()) as f64;
        series.push(scope.float(&format!("loadbench_{word}_iterations_total"), &named, iterations, timestamp));
        let failures = format!("loadbench_{word}_failures_total");
        for (error, name) in KINDS {
            let mut errors = row.errors;
            let count = *errors.slot(error) as f64;
            series.push(scope.float(&failures, &[named[0], ("kind", name)], count, timestamp));
        }
        let histogram = format!("loadbench_{word}_latency_seconds");
        latency(scope, &histogram, &named, &row.latency, kind, timestamp, &mut series);
    }
    WriteRequest { timeseries: series }
}

/// The series of latencies `buckets` under `name`: a native histogram, or classic buckets
/// (`name_bucket`, `name_count`, `name_sum`).
fn latency(
    scope: &Scope,
    name: &str,
    extra: &[(&str, &str)],
    buckets: &[u64; BUCKETS],
    kind: HistogramKind,
    timestamp: i64,
    series: &mut Vec<TimeSeries>,
) {
    let count: u64 = buckets.iter().sum();
    let sum: f64 = buckets.iter().enumerate().map(|(i, &n)| bucket_middle(i) * n as f64).sum::<f64>() / 1e6;
    match kind {
        HistogramKind::Native => series.push(TimeSeries {
            labels: scope.labels(name, extra),
            samples: Vec::new(),
            histograms: vec![native(buckets, count, sum, timestamp)],
        }),
        HistogramKind::Classic => {
            let bucket_name = format!("{name}_bucket");
            let mut below = 0;
            let mut from = 0;
            let bounds = classic_bounds().into_iter().map(|end| {
                below += buckets[from..=end].iter().sum::<u64>();
                from = end + 1;
                ((bucket_end(end) as f64 / 1e6).to_string(), below)
            });
            let bounds: Vec<(String, u64)> = bounds.chain([("+Inf".to_owned(), count)]).collect();
            for (le, below) in &bounds {
                let labels: Vec<(&str, &str)> = extra.iter().copied().chain([("le", le.as_str())]).collect();
                series.push(scope.float(&bucket_name, &labels, *below as f64, timestamp));
            }
            series.push(scope.float(&format!("{name}_count"), extra, count as f64, timestamp));
            series.push(scope.float(&format!("{name}_sum"), extra, sum, timestamp));
        }
    }
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
    use crate::engine::progress::window::{LatencyBuckets, Totals, bucket_of};
    use crate::engine::remote_write::rows::RowKind;

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
        let request = write_request(&scope(), &reading(&[100, 200]), &[], HistogramKind::Native, 42);
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
        let request = write_request(&scope(), &reading(&latencies), &[], HistogramKind::Native, 1);
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
    fn steps_and_named_requests_are_series_of_their_own() {
        let errors = crate::report::ErrorCounts { timeout: 3, ..Default::default() };
        let mut latency = Box::new([0; BUCKETS]);
        latency[bucket_of(2_000)] = 5;
        let rows = [
            RowCounts { kind: RowKind::Request, name: "GET /".into(), ok: 5, errors, latency: latency.clone() },
            RowCounts { kind: RowKind::Step, name: "login".into(), ok: 5, errors, latency },
        ];
        let request = write_request(&scope(), &reading(&[]), &rows, HistogramKind::Classic, 1);
        let request_row = Some(("request", "GET /"));
        assert_eq!(value(&request, "loadbench_request_iterations_total", request_row), Some(8.0));
        assert_eq!(value(&request, "loadbench_step_iterations_total", Some(("step", "login"))), Some(8.0));
        let timeouts = request.timeseries.iter().find(|s| {
            let has = |n: &str, v: &str| s.labels.iter().any(|l| l.name == n && l.value == v);
            has("__name__", "loadbench_request_failures_total") && has("kind", "timeout") && has("request", "GET /")
        });
        assert_eq!(timeouts.and_then(|s| s.samples.first()).map(|s| s.value), Some(3.0));
        assert_eq!(value(&request, "loadbench_request_latency_seconds_count", request_row), Some(5.0));
        assert_eq!(
            value(&request, "loadbench_step_latency_seconds_sum", Some(("step", "login"))).map(|s| s > 0.0),
            Some(true)
        );
    }

    #[test]
    fn classic_buckets_are_cumulative_and_exact() {
        let latencies = [3, 100, 100, 105, 1_000, 50_000];
        let request = write_request(&scope(), &reading(&latencies), &[], HistogramKind::Classic, 1);
        let bucket = |le: &str| value(&request, "loadbench_latency_seconds_bucket", Some(("le", le)));
        assert_eq!(bucket("+Inf"), Some(6.0));
        assert_eq!(value(&request, "loadbench_latency_seconds_count", None), Some(6.0));
        // The bounds on either side of 100: the 3 falls under the lower, the three near 100 under the
        // upper.
        assert_eq!(bucket("0.000096"), Some(1.0));
        assert_eq!(bucket("0.000128"), Some(4.0));
        assert_eq!(bucket("0.001024"), Some(5.0));
        let bounds = classic_bounds();
        assert!(bounds.windows(2).all(|pair| bucket_end(pair[0]) < bucket_end(pair[1])));
        assert_eq!(bucket_end(*bounds.last().unwrap()), 1 << 26);
    }
}
