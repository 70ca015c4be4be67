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

use crate::report::{GeneratorLimit, GeneratorReport};

/// How often the lag probe asks to wake.
pub(crate) const PROBE_INTERVAL: Duration = Duration::from_millis(10);

/// Worker CPU use (busy time over wall time, averaged over the worker threads) from which the
/// generator counts as saturated.
pub(crate) const SATURATED_CPU: f64 = 0.90;

/// 99th-percentile wake-up lag from which the generator counts as saturated: well above timer
/// granularity (about 1 ms) and the noise of a busy shared machine, well below the latencies a
/// stalled generator adds.
pub(crate) const SATURATED_LAG: Duration = Duration::from_millis(20);

/// Share of the run's time the worker threads waited for a CPU (ready to run, but another thread
/// or process had it) from which timer lag is put down to a busy machine rather than to the
/// generator's own event loop. An idle machine wakes a thread within microseconds: well below.
pub(crate) const MACHINE_BUSY_WAIT: f64 = 0.05;

/// Below this CPU use, late timers cannot be the generator's own work keeping its threads busy.
const STALLED_BELOW_CPU: f64 = 0.5;

/// What the calling thread has used so far: CPU time and, where the kernel keeps scheduler
/// statistics, the time it was ready to run but waited for a CPU.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ThreadTimes {
    pub(crate) cpu: Duration,
    pub(crate) waited: Option<Duration>,
}

impl ThreadTimes {
    /// What was used between `start` and `self`.
    pub(crate) fn since(self, start: ThreadTimes) -> ThreadTimes {
        ThreadTimes {
            cpu: self.cpu.saturating_sub(start.cpu),
            waited: self.waited.zip(start.waited).map(|(end, start)| end.saturating_sub(start)),
        }
    }
}

/// The calling thread's times so far, if the platform tells.
pub(crate) fn thread_times() -> Option<ThreadTimes> {
    // `schedstat` gives nanoseconds on the CPU, then waiting on a run queue; `stat` gives clock
    // ticks (USER_HZ, 100 on Linux) of CPU where scheduler statistics are compiled out.
    if let Ok(text) = std::fs::read_to_string("/proc/thread-self/schedstat") {
        let mut fields = text.split_whitespace().map(|f| f.parse::<u64>().ok());
        if let Some(Some(ns)) = fields.next()
            && ns > 0
        {
            let waited = fields.next().flatten().map(Duration::from_nanos);
            return Some(ThreadTimes { cpu: Duration::from_nanos(ns), waited });
        }
    }
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    // Fields after the command name (which may hold spaces, hence the last ')'): utime is the
    // 12th and stime the 13th of those.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some(ThreadTimes { cpu: Duration::from_millis((utime + stime) * 10), waited: None })
}

/// What one worker thread observed of itself.
#[derive(Debug)]
pub(crate) struct WorkerLoad {
    /// CPU time the worker thread used during the run.
    pub(crate) cpu: Option<Duration>,
    /// Time it was ready to run but waited for a CPU, where the kernel tells.
    pub(crate) waited: Option<Duration>,
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
    let waited: Option<Duration> = workers.iter().map(|w| w.waited).sum();
    let mut lag = lag_histogram();
    for w in workers {
        let _ = lag.add(&w.lag_us);
    }
    let share = |time: Option<Duration>| match time {
        Some(time) if !wall.is_zero() && threads > 0 => {
            Some(time.as_secs_f64() / (wall.as_secs_f64() * threads as f64))
        }
        _ => None,
    };
    let utilization = share(cpu);
    let waited_for_cpu = share(waited);
    let lag_p99 = (!lag.is_empty()).then(|| lag.value_at_quantile(0.99));
    let lag_max = (!lag.is_empty()).then(|| lag.max());
    let limit = classify(utilization, waited_for_cpu, lag_p99);
    let round = |u: f64| (u * 1_000.0).round() / 1_000.0;
    GeneratorReport {
        worker_threads: threads,
        cpu_seconds: cpu.map(|c| c.as_secs_f64()),
        cpu_utilization: utilization.map(round),
        lag_p99_us: lag_p99,
        lag_max_us: lag_max,
        saturated: limit.is_some(),
        waited_for_cpu: waited_for_cpu.map(round),
        limit,
    }
}

/// What limited the run, from the worker threads' CPU use, their wait for a CPU and their timer
/// lag (p99, µs); `None` when nothing did.
///
/// Busy threads are the generator's own limit. Late timers with idle threads are the machine's
/// when the threads waited for a CPU (or the platform does not say); when they did not wait, the
/// event loop was held up by the generator itself: a blocking call, or long work without a yield.
fn classify(cpu: Option<f64>, waited: Option<f64>, lag_p99_us: Option<u64>) -> Option<GeneratorLimit> {
    if cpu.is_some_and(|u| u >= SATURATED_CPU) {
        return Some(GeneratorLimit::GeneratorCpu);
    }
    if lag_p99_us.is_none_or(|us| us < SATURATED_LAG.as_micros() as u64) {
        return None;
    }
    Some(match waited {
        Some(w) if w >= MACHINE_BUSY_WAIT => GeneratorLimit::MachineBusy,
        // The threads hardly waited for a CPU: the lag is their own doing, through work (a busy
        // share of CPU) or a call that blocks (little CPU).
        Some(_) if cpu.is_some_and(|u| u >= STALLED_BELOW_CPU) => GeneratorLimit::GeneratorCpu,
        Some(_) => GeneratorLimit::GeneratorStalled,
        None if cpu.is_some_and(|u| u >= STALLED_BELOW_CPU) => GeneratorLimit::GeneratorCpu,
        None => GeneratorLimit::MachineBusy,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn worker(cpu_ms: u64, waited_ms: Option<u64>, lags_us: &[u64]) -> WorkerLoad {
        let mut w = WorkerLoad {
            cpu: Some(Duration::from_millis(cpu_ms)),
            waited: waited_ms.map(Duration::from_millis),
            lag_us: lag_histogram(),
        };
        for &l in lags_us {
            w.lag_us.record(l).unwrap();
        }
        w
    }

    /// 100 probes, five of them `late_us` late: a p99 of `late_us`.
    fn lags(late_us: u64) -> Vec<u64> {
        [100; 95].iter().copied().chain([late_us; 5]).collect()
    }

    #[test]
    fn an_idle_generator_is_not_saturated() {
        let r =
            assess(&[worker(100, Some(1), &[50, 80, 120]), worker(150, Some(1), &[60, 90])], Duration::from_secs(1));
        assert_eq!(r.worker_threads, 2);
        assert_eq!(r.cpu_utilization, Some(0.125));
        assert_eq!(r.waited_for_cpu, Some(0.001));
        assert!(!r.saturated, "{r:?}");
        assert_eq!(r.limit, None);
    }

    #[test]
    fn a_busy_cpu_is_the_generators_limit() {
        let busy = assess(&[worker(960, Some(10), &[100])], Duration::from_secs(1));
        assert!(busy.saturated, "{busy:?}");
        assert_eq!(busy.limit, Some(GeneratorLimit::GeneratorCpu));
        // Late timers with a busy (if not full) CPU and no wait: its own work held the loop up.
        let late = assess(&[worker(700, Some(5), &lags(40_000))], Duration::from_secs(1));
        assert_eq!(late.limit, Some(GeneratorLimit::GeneratorCpu), "{late:?}");
        assert!(late.lag_p99_us.is_some_and(|l| l >= 39_000), "{late:?}");
    }

    #[test]
    fn late_timers_with_idle_threads_that_waited_for_a_cpu_are_a_busy_machine() {
        let r = assess(&[worker(20, Some(400), &lags(31_000)), worker(20, Some(300), &[100])], Duration::from_secs(1));
        assert!(r.saturated, "{r:?}");
        assert_eq!(r.limit, Some(GeneratorLimit::MachineBusy), "{r:?}");
        assert_eq!(r.cpu_utilization, Some(0.02));
        assert_eq!(r.waited_for_cpu, Some(0.35));
        // Where the platform does not say whether they waited, the machine is the likely cause.
        let unknown = assess(&[worker(20, None, &lags(31_000))], Duration::from_secs(1));
        assert_eq!(unknown.limit, Some(GeneratorLimit::MachineBusy), "{unknown:?}");
        assert_eq!(unknown.waited_for_cpu, None);
    }

    #[test]
    fn late_timers_with_idle_threads_that_never_waited_are_a_stalled_generator() {
        let r = assess(&[worker(30, Some(2), &lags(52_000))], Duration::from_secs(1));
        assert_eq!(r.limit, Some(GeneratorLimit::GeneratorStalled), "{r:?}");
        assert!(r.saturated);
    }

    #[test]
    fn this_thread_has_a_cpu_time() {
        // Spins until this thread has used 30 ms of CPU by its own count, which a busy machine
        // only delays; a count that does not move (or moves for other threads) fails.
        let start = thread_times().expect("Linux reports thread CPU time");
        let spin = Instant::now();
        let mut used = Duration::ZERO;
        while used < Duration::from_millis(30) && spin.elapsed() < Duration::from_secs(10) {
            used = thread_times().expect("still").since(start).cpu;
        }
        let wall = spin.elapsed();
        assert!(used >= Duration::from_millis(30), "{used:?} of CPU in {wall:?}");
        // One thread cannot use more CPU than time passed (a clock tick of slack for `stat`).
        assert!(used <= wall + Duration::from_millis(10), "{used:?} of CPU in {wall:?}: not this thread's alone");
        // Nor wait for one longer than that.
        let waited = thread_times().expect("still").since(start).waited.unwrap_or_default();
        assert!(waited <= spin.elapsed(), "{waited:?} waited in {wall:?}");
    }
}
