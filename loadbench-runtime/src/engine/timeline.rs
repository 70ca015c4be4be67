//! The run second by second, as the JSON's `timeline` reports it: iterations, errors and drops
//! per second, and each second's median and 99th-percentile latency.
//!
//! With histograms asked for (`--histograms`, a shard of a distributed run), each second's
//! histogram is encoded into its entry as the report is made, from the same histogram its
//! percentiles are read from: the shards' seconds then merge exactly too.
//!
//! A success is recorded once, in the worker's whole latency histogram (nanoseconds, 3
//! significant digits): the open second's latencies are what that histogram gained since the
//! second began, taken as a difference when the second closes: recording them a second time, in
//! a histogram of the second's own, is a cost on every request (bench/RESULTS.md § Request path
//! instruction costs). The difference is then reduced to the timeline's precision,
//! microseconds at 2 significant digits: a value moves by at most the whole histogram's bucket
//! width (0.1 %) before it is reduced, which can put it in the next 2-digit bucket; the tests
//! hold a second's percentiles to within 1.1 % of what a histogram of the second's own gives.
//!
//! Memory stays flat however long the run: a worker keeps one copy of its whole histogram, as it
//! stood when the open second began; when the second is over, its latencies are kept as the
//! non-empty buckets of a 2-digit histogram, `(value, count)` pairs, a few hundred bytes where a
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
    /// The second whose successes are being recorded.
    open: Option<usize>,
    /// The worker's whole histogram as it stood when `open` began.
    mark: Option<Histogram<u64>>,
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

/// Latencies in nanoseconds (a whole histogram's, or part of one) as a second's histogram: each
/// bucket's highest value, in microseconds (at least 1), at 2 significant digits.
fn reduce(ns: &Histogram<u64>) -> Histogram<u64> {
    let mut us = second_histogram();
    for bucket in ns.iter_recorded() {
        record(&mut us, (bucket.value_iterated_to() / 1_000).max(1), bucket.count_at_value());
    }
    us
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

    /// An iteration is about to be recorded in `total`, the worker's whole latency histogram
    /// (nanoseconds), as a success that ended in `second`. Nothing else is done per success: the
    /// second's count and latencies are taken from `total` when the second closes.
    #[inline]
    pub(crate) fn succeeding(&mut self, second: usize, total: &Histogram<u64>) {
        if self.open != Some(second) {
            self.open_second(second, total);
        }
    }

    #[cold]
    fn open_second(&mut self, second: usize, total: &Histogram<u64>) {
        self.close(total);
        self.entry(second);
        self.open = Some(second);
        self.mark = Some(total.clone());
    }

    /// The latencies of the open second: what `total` gained since it began.
    fn open_latencies(&self, total: &Histogram<u64>) -> Option<(usize, Histogram<u64>)> {
        let open = self.open?;
        let mut gained = total.clone();
        if let Some(mark) = &self.mark {
            // The mark is an earlier state of `total`: every count of it is still there.
            if gained.subtract(mark).is_err() {
                gained.reset();
            }
        }
        Some((open, gained))
    }

    /// Closes the open second, if any: its successes and latencies are what `total` gained
    /// since it began, reduced to microseconds at 2 significant digits.
    pub(crate) fn close(&mut self, total: &Histogram<u64>) {
        let Some((open, gained)) = self.open_latencies(total) else { return };
        self.open = None;
        let reduced = reduce(&gained);
        let saturate = |n: u64| u32::try_from(n).unwrap_or(u32::MAX);
        if let Some(second) = self.seconds.get_mut(open) {
            second.requests += gained.len();
            second.latency_us.extend(
                reduced.iter_recorded().map(|b| (saturate(b.value_iterated_to()), saturate(b.count_at_value()))),
            );
        }
    }

    /// Adds `other`'s seconds to these; both are closed ([`Timeline::close`]).
    pub(crate) fn merge(&mut self, other: Timeline) {
        debug_assert!(self.open.is_none() && other.open.is_none(), "timelines are closed before they merge");
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
    /// `total` is the whole latency histogram the open second, if any, is recorded in.
    pub(crate) fn report(&self, histograms: bool, total: &Histogram<u64>) -> Vec<TimelineSecond> {
        let open = self.open_latencies(total).map(|(open, gained)| (open, gained.len(), reduce(&gained)));
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
                let mut requests = second.requests;
                if let Some((open, successes, reduced)) = &open
                    && *open == index
                {
                    let _ = h.add(reduced);
                    requests += successes;
                }
                TimelineSecond {
                    second: index as u64,
                    requests,
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

    use crate::engine::histogram::new_histogram;

    /// One worker: its timeline and its whole latency histogram.
    #[derive(Default)]
    struct Worker {
        timeline: Timeline,
        total: Option<Histogram<u64>>,
    }

    impl Worker {
        /// A success of `us` microseconds that ended in `second`, recorded as a worker does.
        fn succeed(&mut self, second: usize, us: u64) {
            let total = self.total.get_or_insert_with(new_histogram);
            self.timeline.succeeding(second, total);
            total.record(us * 1_000).unwrap();
        }

        fn closed(mut self) -> Timeline {
            self.timeline.close(self.total.get_or_insert_with(new_histogram));
            self.timeline
        }
    }

    /// The same latencies in one histogram per second of their own, as the timeline kept them
    /// before it took them from the whole histogram; and how many there were.
    fn reference(latencies: &[(usize, u64)], second: usize) -> (Option<f64>, Option<f64>, u64) {
        let mut h = second_histogram();
        for &(s, us) in latencies {
            if s == second {
                record(&mut h, us, 1);
            }
        }
        let q = |q: f64| (!h.is_empty()).then(|| h.value_at_quantile(q) as f64);
        (q(0.5), q(0.99), h.len())
    }

    /// Whether `got` is `want` within the timeline's precision (module docs): 1.1 %.
    fn close_to(got: Option<f64>, want: Option<f64>) -> bool {
        match (got, want) {
            (Some(got), Some(want)) => (got - want).abs() <= want * 0.011,
            (got, want) => got == want,
        }
    }

    #[test]
    fn closed_seconds_report_as_their_histograms_would() {
        // Two workers, seconds out of order on one of them, a wide spread of latencies.
        let mut all = Vec::new();
        let mut workers = [Worker::default(), Worker::default()];
        let mut x: u64 = 12345;
        for i in 0..20_000usize {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let us = 50 + (x >> 33) % 200_000;
            let second = if i % 97 == 0 { (i / 4_000).saturating_sub(1) } else { i / 4_000 };
            workers[i % 2].succeed(second, us);
            all.push((second, us));
        }
        workers[1].timeline.failed(2);
        workers[0].timeline.dropped(6);
        let [a, b] = workers;
        let mut merged = Timeline::default();
        merged.merge(a.closed());
        merged.merge(b.closed());
        let report = merged.report(false, &new_histogram());
        assert_eq!(report.len(), 7);
        assert_eq!(report.iter().map(|s| s.requests).sum::<u64>(), 20_001);
        assert_eq!((report[2].errors, report[6].dropped, report[6].p50_us), (1, 1, None));
        for (second, figures) in report.iter().enumerate().take(5) {
            let (p50, p99, successes) = reference(&all, second);
            assert_eq!(figures.requests - figures.errors, successes, "second {second}");
            assert!(close_to(figures.p50_us, p50) && close_to(figures.p99_us, p99), "second {second}: {figures:?}");
        }
    }

    #[test]
    fn the_open_second_is_reported_from_the_whole_histogram() {
        let mut worker = Worker::default();
        for us in [100, 200, 300] {
            worker.succeed(0, us);
        }
        for us in [1_000, 2_000] {
            worker.succeed(1, us);
        }
        let total = worker.total.as_ref().unwrap();
        let report = worker.timeline.report(false, total);
        assert_eq!(report.iter().map(|s| s.requests).collect::<Vec<_>>(), [3, 2]);
        assert!(close_to(report[0].p50_us, Some(200.0)), "{report:?}");
        assert!(close_to(report[1].p99_us, Some(2_000.0)), "{report:?}");
        // Closing changes nothing that is reported.
        let closed = worker.closed().report(false, &new_histogram());
        assert_eq!(closed, report);
    }

    #[test]
    fn a_closed_second_keeps_a_fraction_of_a_histograms_memory() {
        let mut worker = Worker::default();
        for second in 0..10 {
            for us in 0..5_000u64 {
                worker.succeed(second, 800 + us % 400);
            }
        }
        let t = worker.closed();
        let pairs: usize = t.seconds.iter().map(|s| s.latency_us.len()).sum();
        // 400 distinct microsecond values at 1 % resolution fall in well under 100 buckets.
        assert!(pairs < 10 * 100, "{pairs} buckets kept for 10 seconds");
    }
}
