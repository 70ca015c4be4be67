//! The run second by second, as the JSON's `timeline` reports it: iterations, errors and drops
//! per second, and each second's median and 99th-percentile latency.
//!
//! With histograms asked for (`--histograms`, a shard of a distributed run), each second's
//! histogram is encoded into its entry as the report is made, from the same histogram its
//! percentiles are read from: the shards' seconds then merge exactly too.
//!
//! Memory stays flat however long the run: only the second being recorded has a histogram (one
//! per worker, reused from second to second); when the second is over, its latencies are kept as
//! the histogram's non-empty buckets, `(value, count)` pairs, a few hundred bytes where a
//! histogram is about 17 kB. A histogram per second made a five-minute soak's generator grow by
//! 5 MB, and an hour's by 60 MB per worker. Recording a bucket's value into a histogram of the
//! same precision lands in the same bucket, so workers' seconds merge and report exactly as the
//! histograms themselves would.

use hdrhistogram::Histogram;

use crate::report::TimelineSecond;
use crate::report::histogram::encode;

/// One worker's timeline, or the merge of several.
#[derive(Debug, Default)]
pub(crate) struct Timeline {
    seconds: Vec<Second>,
    /// The second whose latencies `current` holds.
    open: Option<usize>,
    /// Latencies of the open second; made on the first success and reused after.
    current: Option<Histogram<u64>>,
}

/// One second's figures on one worker (or merged).
#[derive(Debug, Default)]
struct Second {
    requests: u64,
    errors: u64,
    dropped: u64,
    /// Latencies of the second's successful iterations, in microseconds, once the second is
    /// closed: the buckets of its histogram, by their highest value (saturated at `u32::MAX` µs,
    /// 71 minutes). A bucket can appear more than once (a worker that went back to an earlier
    /// second, or a merge); counts then add up.
    latency_us: Vec<(u32, u32)>,
}

/// Latency of one second in microseconds, at 2 significant digits: 1 % resolution is plenty to
/// see drift from second to second.
fn second_histogram() -> Histogram<u64> {
    match Histogram::new_with_bounds(1, 10_000_000, 2) {
        Ok(mut h) => {
            h.auto(true);
            h
        }
        Err(_) => unreachable!("constant bounds are valid"),
    }
}

fn record(h: &mut Histogram<u64>, us: u64, n: u64) {
    // `record_n` grows the histogram past its initial range; `saturating_record_n` would clamp.
    if h.record_n(us, n).is_err() {
        h.saturating_record_n(us, n);
    }
}

impl Timeline {
    /// The entry of `second`, created (with any before it) on first use.
    fn entry(&mut self, second: usize) -> &mut Second {
        if self.seconds.len() <= second {
            self.seconds.resize_with(second + 1, Second::default);
        }
        match self.seconds.get_mut(second) {
            Some(entry) => entry,
            None => unreachable!("resized to hold `second` just above"),
        }
    }

    /// An arrival of the open model, due in `second`, that no virtual user was free to serve.
    pub(crate) fn dropped(&mut self, second: usize) {
        self.entry(second).dropped += 1;
    }

    /// An iteration that ended in `second` with an error.
    pub(crate) fn failed(&mut self, second: usize) {
        let entry = self.entry(second);
        entry.requests += 1;
        entry.errors += 1;
    }

    /// An iteration that ended in `second` after `us` microseconds.
    pub(crate) fn succeeded(&mut self, second: usize, us: u64) {
        self.entry(second).requests += 1;
        if self.open != Some(second) {
            self.close();
            self.open = Some(second);
        }
        record(self.current.get_or_insert_with(second_histogram), us, 1);
    }

    /// Moves the open second's latencies from the histogram to its bucket list.
    fn close(&mut self) {
        let (Some(open), Some(h)) = (self.open.take(), self.current.as_mut()) else { return };
        if h.is_empty() {
            return;
        }
        let saturate = |n: u64| u32::try_from(n).unwrap_or(u32::MAX);
        let buckets = h.iter_recorded().map(|b| (saturate(b.value_iterated_to()), saturate(b.count_at_value())));
        if let Some(second) = self.seconds.get_mut(open) {
            second.latency_us.extend(buckets);
        }
        h.reset();
    }

    /// Adds `other`'s seconds to these.
    pub(crate) fn merge(&mut self, mut other: Timeline) {
        self.close();
        other.close();
        for (index, theirs) in other.seconds.into_iter().enumerate() {
            let mine = self.entry(index);
            mine.requests += theirs.requests;
            mine.errors += theirs.errors;
            mine.dropped += theirs.dropped;
            mine.latency_us.extend(theirs.latency_us);
        }
    }

    /// The per-second figures, one entry for every second from the start of the run to its last;
    /// with `histograms`, each second's latencies (in microseconds) as an encoded HdrHistogram.
    pub(crate) fn report(&self, histograms: bool) -> Vec<TimelineSecond> {
        let mut h = second_histogram();
        let quantile = |h: &Histogram<u64>, q: f64| (!h.is_empty()).then(|| h.value_at_quantile(q) as f64);
        self.seconds
            .iter()
            .enumerate()
            .map(|(index, second)| {
                h.reset();
                for &(us, n) in &second.latency_us {
                    record(&mut h, u64::from(us), u64::from(n));
                }
                if let (Some(open), Some(current)) = (self.open, &self.current)
                    && open == index
                {
                    let _ = h.add(current);
                }
                TimelineSecond {
                    second: index as u64,
                    requests: second.requests,
                    errors: second.errors,
                    dropped: second.dropped,
                    p50_us: quantile(&h, 0.50),
                    p90_us: quantile(&h, 0.90),
                    p99_us: quantile(&h, 0.99),
                    histogram: if histograms && !h.is_empty() { encode(&h).ok() } else { None },
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same latencies in one histogram per second, as the timeline kept them before.
    fn reference(latencies: &[(usize, u64)], second: usize) -> (Option<f64>, Option<f64>) {
        let mut h = second_histogram();
        for &(s, us) in latencies {
            if s == second {
                record(&mut h, us, 1);
            }
        }
        let q = |q: f64| (!h.is_empty()).then(|| h.value_at_quantile(q) as f64);
        (q(0.5), q(0.99))
    }

    #[test]
    fn closed_seconds_report_as_their_histograms_would() {
        // Two workers, seconds out of order on one of them, a wide spread of latencies.
        let mut all = Vec::new();
        let mut workers = [Timeline::default(), Timeline::default()];
        let mut x: u64 = 12345;
        for i in 0..20_000usize {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let us = 50 + (x >> 33) % 200_000;
            let second = if i % 97 == 0 { (i / 4_000).saturating_sub(1) } else { i / 4_000 };
            workers[i % 2].succeeded(second, us);
            all.push((second, us));
        }
        workers[1].failed(2);
        workers[0].dropped(6);
        let [a, b] = workers;
        let mut merged = Timeline::default();
        merged.merge(a);
        merged.merge(b);
        let report = merged.report(false);
        assert_eq!(report.len(), 7);
        assert_eq!(report.iter().map(|s| s.requests).sum::<u64>(), 20_001);
        assert_eq!((report[2].errors, report[6].dropped, report[6].p50_us), (1, 1, None));
        for (second, figures) in report.iter().enumerate().take(5) {
            assert_eq!((figures.p50_us, figures.p99_us), reference(&all, second), "second {second}");
        }
    }

    #[test]
    fn a_closed_second_keeps_a_fraction_of_a_histograms_memory() {
        let mut t = Timeline::default();
        for second in 0..10 {
            for us in 0..5_000u64 {
                t.succeeded(second, 800 + us % 400);
            }
        }
        t.close();
        let pairs: usize = t.seconds.iter().map(|s| s.latency_us.len()).sum();
        // 400 distinct microsecond values at 1 % resolution fall in well under 100 buckets.
        assert!(pairs < 10 * 100, "{pairs} buckets kept for 10 seconds");
    }
}
