//! The generator watching itself: how busy its worker threads were and how late their event
//! loops ran, so that a run limited by loadbench is not mistaken for one limited by the server.
//!
//! Two signals, both per worker thread:
//! - CPU: the thread's own run time (from `/proc/thread-self/schedstat`, nanoseconds) over the
//!   wall time. A worker near 100 % had no spare capacity to send more.
//! - Scheduling lag: a probe task asks to wake every [`PROBE_INTERVAL`] and records how late it
//!   woke. If the virtual users keep the thread busy (an expensive body, too many users per
//!   thread) or the OS does not give the thread a CPU, timers fire late, and so would the
//!   generator's own sends and timestamps.

use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use crate::report::GeneratorReport;

/// How often the lag probe asks to wake.
pub(crate) const PROBE_INTERVAL: Duration = Duration::from_millis(10);

/// Worker CPU use (busy time over wall time, averaged over the worker threads) from which the
/// generator counts as saturated.
pub(crate) const SATURATED_CPU: f64 = 0.90;

/// 99th-percentile wake-up lag from which the generator counts as saturated: well above timer
/// granularity (about 1 ms) and the noise of a busy shared machine, well below the latencies a
/// stalled generator adds.
pub(crate) const SATURATED_LAG: Duration = Duration::from_millis(20);

/// CPU time the calling thread has used so far, if the platform tells.
pub(crate) fn thread_cpu_time() -> Option<Duration> {
    // `schedstat` gives nanoseconds; `stat` gives clock ticks (USER_HZ, 100 on Linux) where
    // scheduler statistics are compiled out.
    if let Ok(text) = std::fs::read_to_string("/proc/thread-self/schedstat")
        && let Some(ns) = text.split_whitespace().next().and_then(|f| f.parse::<u64>().ok())
        && ns > 0
    {
        return Some(Duration::from_nanos(ns));
    }
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    // Fields after the command name (which may hold spaces, hence the last ')'): utime is the
    // 12th and stime the 13th of those.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some(Duration::from_millis((utime + stime) * 10))
}

/// What one worker thread observed of itself.
#[derive(Debug)]
pub(crate) struct WorkerLoad {
    /// CPU time the worker thread used during the run.
    pub(crate) cpu: Option<Duration>,
    /// How late the probe woke, in microseconds.
    pub(crate) lag_us: Histogram<u64>,
}

pub(crate) fn lag_histogram() -> Histogram<u64> {
    // 2 significant digits are plenty for a warning; auto-resize covers any lag.
    match Histogram::new(2) {
        Ok(h) => h,
        Err(_) => unreachable!("2 significant figures is valid"),
    }
}

/// Records wake-up lag into `lag_us` until dropped; spawned on each worker's event loop.
pub(crate) async fn probe_lag(lag_us: std::rc::Rc<std::cell::RefCell<Histogram<u64>>>) {
    loop {
        let asked = Instant::now() + PROBE_INTERVAL;
        tokio::time::sleep_until(asked.into()).await;
        let late = Instant::now().saturating_duration_since(asked);
        let us = u64::try_from(late.as_micros()).unwrap_or(u64::MAX);
        // An auto-resizing histogram takes any value; keep going if it ever refuses.
        let _ = lag_us.borrow_mut().record(us);
    }
}

/// Sums the workers' observations over a run of `wall` into the report's verdict.
pub(crate) fn assess(workers: &[WorkerLoad], wall: Duration) -> GeneratorReport {
    let threads = workers.len();
    let cpu: Option<Duration> = workers.iter().map(|w| w.cpu).sum();
    let mut lag = lag_histogram();
    for w in workers {
        let _ = lag.add(&w.lag_us);
    }
    let utilization = match cpu {
        Some(cpu) if !wall.is_zero() && threads > 0 => Some(cpu.as_secs_f64() / (wall.as_secs_f64() * threads as f64)),
        _ => None,
    };
    let lag_p99 = (!lag.is_empty()).then(|| lag.value_at_quantile(0.99));
    let lag_max = (!lag.is_empty()).then(|| lag.max());
    let cpu_saturated = utilization.is_some_and(|u| u >= SATURATED_CPU);
    let lag_saturated = lag_p99.is_some_and(|us| us >= SATURATED_LAG.as_micros() as u64);
    GeneratorReport {
        worker_threads: threads,
        cpu_seconds: cpu.map(|c| c.as_secs_f64()),
        cpu_utilization: utilization.map(|u| (u * 1_000.0).round() / 1_000.0),
        lag_p99_us: lag_p99,
        lag_max_us: lag_max,
        saturated: cpu_saturated || lag_saturated,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn worker(cpu_ms: u64, lags_us: &[u64]) -> WorkerLoad {
        let mut w = WorkerLoad { cpu: Some(Duration::from_millis(cpu_ms)), lag_us: lag_histogram() };
        for &l in lags_us {
            w.lag_us.record(l).unwrap();
        }
        w
    }

    #[test]
    fn an_idle_generator_is_not_saturated() {
        let r = assess(&[worker(100, &[50, 80, 120]), worker(150, &[60, 90])], Duration::from_secs(1));
        assert_eq!(r.worker_threads, 2);
        assert_eq!(r.cpu_utilization, Some(0.125));
        assert!(!r.saturated, "{r:?}");
    }

    #[test]
    fn a_busy_cpu_or_late_timers_mean_saturated() {
        let busy = assess(&[worker(960, &[100])], Duration::from_secs(1));
        assert!(busy.saturated, "{busy:?}");
        let late = assess(
            &[worker(300, &[100; 10].iter().copied().chain([40_000; 5]).collect::<Vec<_>>())],
            Duration::from_secs(1),
        );
        assert!(late.saturated, "{late:?}");
        assert!(late.lag_p99_us.is_some_and(|l| l >= 39_000), "{late:?}");
    }

    #[test]
    fn this_thread_has_a_cpu_time() {
        // Spins until this thread has used 30 ms of CPU by its own count, which a busy machine
        // only delays; a count that does not move (or moves for other threads) fails.
        let start = thread_cpu_time().expect("Linux reports thread CPU time");
        let spin = Instant::now();
        let mut used = Duration::ZERO;
        while used < Duration::from_millis(30) && spin.elapsed() < Duration::from_secs(10) {
            used = thread_cpu_time().expect("still") - start;
        }
        let wall = spin.elapsed();
        assert!(used >= Duration::from_millis(30), "{used:?} of CPU in {wall:?}");
        // One thread cannot use more CPU than time passed (a clock tick of slack for `stat`).
        assert!(used <= wall + Duration::from_millis(10), "{used:?} of CPU in {wall:?}: not this thread's alone");
    }
}
