//! The shards' timelines on one clock. Each shard counts its seconds from its own start, and the
//! shards do not start at the same instant (`--start-at` gets them within a few milliseconds;
//! started by hand, seconds apart), so second 0 of one is not second 0 of another: each shard's
//! second `k` is placed at its `started_unix_ms + k s`, and lands in the merged second its
//! offset from the earliest start falls in (whole seconds, rounded down). Counts add up; each
//! merged second's percentiles come from its shards' histograms added up, as one machine's
//! timeline would have them.

use std::path::Path;

use loadbench::report::TimelineSecond;

use super::MergeError;
use super::histograms::Sum;

/// The furthest apart, in milliseconds, that two shards of one scenario may start: the merged
/// timeline has an entry for every second from the first start to the last end, and shards a
/// day apart are not one run (a clock that is wrong by a day, or files of two runs).
pub const MAX_START_SPREAD_MS: u64 = 24 * 60 * 60 * 1_000;

/// One shard's timeline and where it starts.
#[derive(Debug, Clone, Copy)]
pub struct ShardSeconds<'a> {
    /// The file it came from, to name in a refusal.
    pub path: &'a Path,
    /// Its `started_unix_ms`.
    pub start_ms: u64,
    /// Its seconds, the first from its start.
    pub seconds: &'a [TimelineSecond],
}

/// One merged second being summed.
#[derive(Debug, Default)]
struct Second {
    requests: u64,
    errors: u64,
    dropped: u64,
    latency_us: Sum,
}

/// The merged timeline of `scenario` (its name, for refusals) from its shards' timelines, second 0
/// starting at `earliest_ms` (no shard starts before it, none more than [`MAX_START_SPREAD_MS`]
/// after it: the caller checks both). A second with successes but no histogram is refused: its
/// percentiles cannot be added.
pub fn merge(shards: &[ShardSeconds<'_>], earliest_ms: u64, scenario: &str) -> Result<Vec<TimelineSecond>, MergeError> {
    let mut merged: Vec<Second> = Vec::new();
    for shard in shards {
        let offset_ms = shard.start_ms.saturating_sub(earliest_ms);
        // The position, not the `second` field: the runtime writes one entry per second from 0,
        // and the position keeps the merged timeline as long as the files are, whatever they say.
        for (k, second) in shard.seconds.iter().enumerate() {
            let index = usize::try_from((offset_ms + k as u64 * 1_000) / 1_000).unwrap_or(usize::MAX);
            if merged.len() <= index {
                merged.resize_with(index + 1, Second::default);
            }
            let Some(into) = merged.get_mut(index) else { continue };
            into.requests += second.requests;
            into.errors += second.errors;
            into.dropped += second.dropped;
            let what = || format!("the latency of second {k} of `{scenario}`'s timeline");
            match &second.histogram {
                Some(text) => into.latency_us.add(text).map_err(|reason| MergeError::BadHistogram {
                    path: shard.path.to_owned(),
                    what: what(),
                    reason,
                })?,
                // Only successes have a latency: a second of failures has nothing to add.
                None if second.p50_us.is_some() => {
                    return Err(MergeError::NoHistogram { path: shard.path.to_owned(), what: what() });
                }
                None => {}
            }
        }
    }
    Ok(merged
        .into_iter()
        .enumerate()
        .map(|(index, s)| TimelineSecond {
            second: index as u64,
            requests: s.requests,
            errors: s.errors,
            dropped: s.dropped,
            p50_us: s.latency_us.quantile(0.50),
            p90_us: s.latency_us.quantile(0.90),
            p99_us: s.latency_us.quantile(0.99),
            histogram: s.latency_us.encoded(),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use hdrhistogram::Histogram;

    use super::*;

    /// A histogram of microseconds as the timeline makes them: 2 significant digits, growing.
    fn microseconds(values: impl IntoIterator<Item = u64>) -> Histogram<u64> {
        let mut h = Histogram::new_with_bounds(1, 10_000_000, 2).unwrap_or_else(|e| panic!("{e}"));
        h.auto(true);
        for v in values {
            h.record(v).unwrap_or_else(|e| panic!("{e}"));
        }
        h
    }

    fn second(requests: u64, errors: u64, latencies: &[u64]) -> TimelineSecond {
        let h = microseconds(latencies.iter().copied());
        let q = |q: f64| (!h.is_empty()).then(|| h.value_at_quantile(q) as f64);
        TimelineSecond {
            second: 0,
            requests,
            errors,
            dropped: 0,
            p50_us: q(0.5),
            p90_us: q(0.9),
            p99_us: q(0.99),
            histogram: (!h.is_empty()).then(|| super::super::histograms::tests::encoded(&h)),
        }
    }

    #[test]
    fn seconds_line_up_by_wall_clock_across_a_one_and_a_half_second_offset() {
        let (a, b) = (PathBuf::from("a.json"), PathBuf::from("b.json"));
        // Shard a starts at t = 10 s; shard b at t = 11.5 s. b's second 0 spans 11.5–12.5 s,
        // which starts in merged second 1; its second 1 (12.5–13.5 s) in merged second 2.
        let a_seconds =
            [second(10, 1, &[100; 9]), second(20, 0, &[200; 20]), second(5, 0, &[300; 5]), second(1, 1, &[])];
        let b_seconds = [second(7, 0, &[1_000; 7]), second(3, 3, &[])];
        let shards = [
            ShardSeconds { path: &a, start_ms: 10_000, seconds: &a_seconds },
            ShardSeconds { path: &b, start_ms: 11_500, seconds: &b_seconds },
        ];
        let merged = merge(&shards, 10_000, "hello").unwrap_or_else(|e| panic!("{e}"));
        let counts: Vec<(u64, u64, u64)> = merged.iter().map(|s| (s.second, s.requests, s.errors)).collect();
        assert_eq!(counts, [(0, 10, 1), (1, 27, 0), (2, 8, 3), (3, 1, 1)]);
        // Second 1: 20 at 200 µs and 7 at 1 ms, from one histogram of all 27.
        let all = microseconds([200; 20].into_iter().chain([1_000; 7]));
        let p = |q: f64| Some(all.value_at_quantile(q) as f64);
        assert_eq!((merged[1].p50_us, merged[1].p90_us, merged[1].p99_us), (p(0.5), p(0.9), p(0.99)));
        assert_eq!(merged[3].p50_us, None, "only failures");
        assert_eq!(merged[3].histogram, None);
        let decoded = loadbench::report::histogram::decode(merged[1].histogram.as_deref().unwrap_or_default());
        assert_eq!(decoded.map(|h| h.len()), Ok(27));
    }

    #[test]
    fn a_shard_that_starts_late_leaves_empty_seconds_before_it() {
        let (a, b) = (PathBuf::from("a.json"), PathBuf::from("b.json"));
        let (one, other) = ([second(4, 0, &[50; 4])], [second(6, 0, &[60; 6])]);
        let shards = [
            ShardSeconds { path: &b, start_ms: 3_200, seconds: &other },
            ShardSeconds { path: &a, start_ms: 0, seconds: &one },
        ];
        let merged = merge(&shards, 0, "hello").unwrap_or_else(|e| panic!("{e}"));
        let requests: Vec<u64> = merged.iter().map(|s| s.requests).collect();
        assert_eq!(requests, [4, 0, 0, 6]);
    }

    #[test]
    fn a_second_with_successes_and_no_histogram_is_refused() {
        let a = PathBuf::from("a.json");
        let mut bare = second(4, 0, &[50; 4]);
        bare.histogram = None;
        let seconds = [second(1, 1, &[]), bare];
        let shards = [ShardSeconds { path: &a, start_ms: 0, seconds: &seconds }];
        let err = merge(&shards, 0, "hello").map(drop).map_err(|e| e.to_string());
        assert_eq!(
            err,
            Err("a.json: the latency of second 1 of `hello`'s timeline was written without histograms: run the \
                 shards with a loadbench that writes them"
                .to_owned())
        );
    }
}
