//! Latency over the last seconds without a lock: each worker counts its successful iterations'
//! latencies in a fixed array of log-linear buckets (its own, written by it alone), and the
//! progress thread sums the workers' arrays each tick and subtracts the sum of a few seconds ago.
//!
//! A bucket spans an eighth of a power of two of microseconds (three significant bits), so a
//! percentile read as its bucket's midpoint is within 1/16 (6.25 %) of the recorded value:
//! plenty for a live p50 and p99, and 304 buckets cover up to 2^40 µs (twelve days).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Sub-buckets per power of two, as bits: 8 per octave.
const SUB_BITS: u32 = 3;
const SUB: usize = 1 << SUB_BITS;
/// Latencies at or above 2^40 µs count in the last bucket.
const TOP_BITS: u32 = 40;
/// Buckets in all: the values below `SUB` one each, then `SUB` per power of two up to the top.
pub(crate) const BUCKETS: usize = SUB + (TOP_BITS - SUB_BITS) as usize * SUB;

/// The bucket of a latency of `us` microseconds.
pub(crate) fn bucket_of(us: u64) -> usize {
    let us = us.min((1 << TOP_BITS) - 1);
    if us < SUB as u64 {
        return us as usize;
    }
    let bits = 63 - us.leading_zeros(); // >= SUB_BITS
    let sub = (us >> (bits - SUB_BITS)) as usize & (SUB - 1);
    SUB + (bits - SUB_BITS) as usize * SUB + sub
}

/// The middle of bucket `index`, in microseconds: what a percentile falling in it reads as.
pub(crate) fn bucket_middle(index: usize) -> f64 {
    if index < SUB {
        return index as f64;
    }
    let octave = ((index - SUB) / SUB) as u32;
    let sub = ((index - SUB) % SUB) as u64;
    let width = 1u64 << octave;
    ((SUB as u64 + sub) * width) as f64 + width as f64 / 2.0
}

/// Where bucket `index` ends, in microseconds: the smallest whole number of microseconds above
/// every latency it holds (the last bucket's is its start's double, though it holds everything
/// above).
#[cfg(any(feature = "remote-write", test))]
pub(crate) fn bucket_end(index: usize) -> u64 {
    if index < SUB {
        return index as u64 + 1;
    }
    let octave = ((index - SUB) / SUB) as u32;
    let sub = ((index - SUB) % SUB) as u64;
    (SUB as u64 + sub + 1) << octave
}

/// One worker's latency counts, written by that worker only.
#[derive(Debug)]
pub(crate) struct LatencyBuckets([AtomicU64; BUCKETS]);

impl Default for LatencyBuckets {
    fn default() -> LatencyBuckets {
        LatencyBuckets(std::array::from_fn(|_| AtomicU64::new(0)))
    }
}

impl LatencyBuckets {
    /// Counts one latency. Single writer: a load and a store (no locked read-modify-write).
    #[inline]
    pub(crate) fn record(&self, elapsed: Duration) {
        let us = elapsed.as_secs().saturating_mul(1_000_000).saturating_add(u64::from(elapsed.subsec_micros()));
        let bucket = &self.0[bucket_of(us)];
        bucket.store(bucket.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
    }

    /// Adds this worker's counts so far to `into`.
    pub(crate) fn add_to(&self, into: &mut [u64; BUCKETS]) {
        for (sum, bucket) in into.iter_mut().zip(&self.0) {
            *sum += bucket.load(Ordering::Relaxed);
        }
    }
}

/// The latency at quantile `q` (0 to 1) of counts `buckets`, in microseconds; `None` when empty.
pub(crate) fn quantile(buckets: &[u64; BUCKETS], q: f64) -> Option<f64> {
    let total: u64 = buckets.iter().sum();
    if total == 0 {
        return None;
    }
    // The rank HdrHistogram uses: the smallest value with at least q of the count at or below it.
    let rank = ((q * total as f64).ceil() as u64).clamp(1, total);
    let mut seen = 0;
    for (index, &n) in buckets.iter().enumerate() {
        seen += n;
        if seen >= rank {
            return Some(bucket_middle(index));
        }
    }
    None
}

/// The mean of counts `buckets`, in microseconds; `None` when empty.
pub(crate) fn mean(buckets: &[u64; BUCKETS]) -> Option<f64> {
    let total: u64 = buckets.iter().sum();
    let sum: f64 = buckets.iter().enumerate().map(|(i, &n)| bucket_middle(i) * n as f64).sum();
    (total > 0).then(|| sum / total as f64)
}

/// The sums of every worker's counts at one tick.
#[derive(Debug, Clone)]
pub(crate) struct Totals {
    pub(crate) done: u64,
    pub(crate) failed: u64,
    pub(crate) latency: Box<[u64; BUCKETS]>,
}

impl Totals {
    pub(crate) fn empty() -> Totals {
        Totals { done: 0, failed: 0, latency: Box::new([0; BUCKETS]) }
    }
}

/// The readings of the last seconds, oldest first, for figures over a window rather than since
/// the start.
#[derive(Debug, Default)]
pub(crate) struct Window {
    readings: VecDeque<(Instant, Totals)>,
}

/// Requests per second are counted over this much of the recent past.
pub(crate) const RATE_WINDOW: Duration = Duration::from_secs(2);
/// Latency percentiles are read over this much.
pub(crate) const LATENCY_WINDOW: Duration = Duration::from_secs(5);

/// What a window shows: successes per second and the latency percentiles of its successes.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Recent {
    pub(crate) ok_per_sec: Option<f64>,
    pub(crate) p50_us: Option<f64>,
    pub(crate) p99_us: Option<f64>,
    /// The mean latency of the window's successes, from the buckets' middles.
    pub(crate) mean_us: Option<f64>,
}

impl Window {
    /// Adds the reading taken `at`, forgets those older than the latency window needs, and
    /// returns the figures over the window.
    pub(crate) fn push(&mut self, at: Instant, now: Totals) -> Recent {
        // Keep one reading at or before the window's start, to diff against.
        while self.readings.len() > 1 && self.readings[1].0 + LATENCY_WINDOW <= at {
            self.readings.pop_front();
        }
        let rate_from = self.readings.iter().find(|(t, _)| *t + RATE_WINDOW >= at).or(self.readings.front());
        let ok_per_sec = rate_from.and_then(|(t, then)| {
            let seconds = at.saturating_duration_since(*t).as_secs_f64();
            let ok = |r: &Totals| r.done.saturating_sub(r.failed);
            (seconds >= 0.5).then(|| ok(&now).saturating_sub(ok(then)) as f64 / seconds)
        });
        let mut latency = *now.latency;
        if let Some((_, then)) = self.readings.front() {
            for (n, old) in latency.iter_mut().zip(then.latency.iter()) {
                *n = n.saturating_sub(*old);
            }
        }
        let recent = Recent {
            ok_per_sec,
            p50_us: quantile(&latency, 0.50),
            p99_us: quantile(&latency, 0.99),
            mean_us: mean(&latency),
        };
        self.readings.push_back((at, now));
        recent
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_cover_every_value_in_order() {
        let mut last = 0;
        for us in (0..100_000u64).chain([1 << 39, (1 << 40) - 1, 1 << 40, u64::MAX]) {
            let b = bucket_of(us);
            assert!(b >= last && b < BUCKETS, "{us} µs in bucket {b}");
            last = b;
            let middle = bucket_middle(b);
            if us < 1 << 40 {
                assert!((middle - us as f64).abs() <= us as f64 / 16.0 + 0.5, "{us} µs reads as {middle}");
            }
        }
        assert_eq!(bucket_of(u64::MAX), BUCKETS - 1);
        // Each bucket ends where the next begins.
        for us in 1..100_000u64 {
            assert_eq!(bucket_of(us) == bucket_of(us - 1), bucket_end(bucket_of(us - 1)) != us, "{us} µs");
        }
    }

    /// The window's percentiles agree with HdrHistogram's on the same samples, within the
    /// buckets' 1/16.
    #[test]
    fn percentiles_agree_with_hdrhistogram() {
        let mut hdr = hdrhistogram::Histogram::<u64>::new(3).unwrap();
        let buckets = LatencyBuckets::default();
        // A skewed mix: most fast, a slow tail, a few very slow.
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        for i in 0..20_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let us = match i % 100 {
                0 => 50_000 + x % 200_000,
                1..=9 => 5_000 + x % 20_000,
                _ => 200 + x % 1_800,
            };
            hdr.record(us).unwrap();
            buckets.record(Duration::from_micros(us));
        }
        let mut sums = [0; BUCKETS];
        buckets.add_to(&mut sums);
        for q in [0.5, 0.9, 0.99, 0.999] {
            let ours = quantile(&sums, q).unwrap();
            let theirs = hdr.value_at_quantile(q) as f64;
            assert!((ours - theirs).abs() <= theirs / 16.0 + 1.0, "p{}: {ours} against {theirs}", q * 100.0);
        }
        assert_eq!(quantile(&[0; BUCKETS], 0.5), None);
    }

    fn totals(done: u64, failed: u64, latencies_us: &[(u64, u64)]) -> Totals {
        let mut t = Totals { done, failed, latency: Box::new([0; BUCKETS]) };
        for &(us, n) in latencies_us {
            t.latency[bucket_of(us)] += n;
        }
        t
    }

    #[test]
    fn the_window_forgets_what_is_older_than_it() {
        let start = Instant::now();
        let at = |ms: u64| start + Duration::from_millis(ms);
        let mut window = Window::default();
        // A slow first second, then fast ones.
        let first = window.push(at(0), totals(0, 0, &[]));
        assert_eq!(first, Recent::default());
        window.push(at(1_000), totals(100, 0, &[(10_000, 100)]));
        let mut last = Recent::default();
        for s in 2..=8u64 {
            last = window.push(
                at(s * 1_000),
                totals(100 + (s - 1) * 1_000, 10 * (s - 1), &[(10_000, 100), (1_000, (s - 1) * 990)]),
            );
        }
        // The rate over the last two seconds: 990 successes a second.
        let rate = last.ok_per_sec.unwrap();
        assert!((rate - 990.0).abs() < 1.0, "{rate}");
        // The slow second is more than five seconds old: it is out of the percentiles.
        let p99 = last.p99_us.unwrap();
        assert!((p99 - 1_000.0).abs() <= 1_000.0 / 16.0, "{p99}");
        assert!(window.readings.len() <= 7, "{}", window.readings.len());
    }
}
