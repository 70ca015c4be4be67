//! The generator watching itself: how busy its worker threads were and how late their event
//! loops ran, so that a run limited by loadbench is not mistaken for one limited by the server.
//!
//! Three signals, all per worker thread:
//! - CPU: the thread's own run time (from `/proc/thread-self/schedstat`, nanoseconds) over the
//!   wall time. A worker near 100 % had no spare capacity to send more.
//! - Scheduling lag: a probe task asks to wake every [`PROBE_INTERVAL`] and records how late it
//!   woke. If the virtual users keep the thread busy (an expensive body, too many users per
//!   thread) or the OS does not give the thread a CPU, timers fire late, and so would the
//!   generator's own sends and timestamps.
//! - Read delay: how long what the server had sent waited in the worker's sockets before it was
//!   read (`http::read_delay`, sampled reads). That part of a latency is the generator's. When it
//!   is a large share of the latencies reported ([`LATE_READ_SHARE`] of the p99), the figures
//!   are about the generator as much as the server, however the timers did: this is what catches
//!   a run shorter than a second, or a worker that falls behind its sockets without being late
//!   for a timer.

use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use crate::report::{GeneratorLimit, GeneratorReport, SATURATED_LAG};

/// How often the lag probe asks to wake.
pub(crate) const PROBE_INTERVAL: Duration = Duration::from_millis(10);

/// Worker CPU use (busy time over wall time, averaged over the worker threads) from which the
/// generator counts as saturated.
pub(crate) const SATURATED_CPU: f64 = 0.90;

/// Share of the run's time the worker threads waited for a CPU (ready to run, but another thread
/// or process had it) from which timer lag is put down to a busy machine rather than to the
/// generator's own event loop. An idle machine wakes a thread within microseconds: well below.
pub(crate) const MACHINE_BUSY_WAIT: f64 = 0.05;

/// Below this CPU use, late timers cannot be the generator's own work keeping its threads busy.
const STALLED_BELOW_CPU: f64 = 0.5;

/// Share of the latency p99 from which the p99 of read delay flags a run: the generator's own
/// wait is then a fifth or more of the tail it reports. A tenth flagged runs with megabyte
/// bodies that did nothing wrong (bench/RESULTS.md § "Tail latency on a shared machine").
const LATE_READ_SHARE: f64 = 0.2;

/// Read delay below this never flags a run, whatever the latencies: against a fast server, the
/// time a read takes to come round in a busy event loop is a large share of a small latency
/// without being a stall.
const LATE_READ_FLOOR: Duration = Duration::from_millis(1);

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
    /// How long sampled reads found data waiting, in microseconds (none where not measured).
    pub(crate) read_delay_us: Option<Histogram<u64>>,
}

/// A histogram of the self-check's microseconds (timer lag, read delay): 2 significant digits
/// are plenty for a warning, and auto-resizing takes any value.
pub(crate) fn micros_histogram() -> Histogram<u64> {
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

/// Sums the workers' observations over a run of `wall`, whose iterations' latency p99 was
/// `latency_p99_us`, into the report's verdict.
pub(crate) fn assess(workers: &[WorkerLoad], wall: Duration, latency_p99_us: Option<u64>) -> GeneratorReport {
    let threads = workers.len();
    let cpu: Option<Duration> = workers.iter().map(|w| w.cpu).sum();
    let waited: Option<Duration> = workers.iter().map(|w| w.waited).sum();
    let mut lag = micros_histogram();
    let mut reads = micros_histogram();
    for w in workers {
        let _ = lag.add(&w.lag_us);
        if let Some(delays) = &w.read_delay_us {
            let _ = reads.add(delays);
        }
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
    let read_delay_p99 = (!reads.is_empty()).then(|| reads.value_at_quantile(0.99));
    let late_reads = reads_late(read_delay_p99, latency_p99_us);
    // Late reads count as late timers do: the same causes, told apart the same way.
    let late_timers = lag_p99.is_some_and(|us| us >= SATURATED_LAG.as_micros() as u64);
    // A run shorter than a probe interval (a smoke run's one iteration) is outweighed by the
    // worker's own start and end: its CPU share says nothing of the load.
    let judged_cpu = utilization.filter(|_| wall >= PROBE_INTERVAL);
    let limit = classify(judged_cpu, waited_for_cpu, late_timers || late_reads);
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
        read_delay_p99_us: read_delay_p99,
        read_delay_max_us: (!reads.is_empty()).then(|| reads.max()),
        late_reads,
    }
}

/// Whether reads came late enough to flag the run: a read-delay p99 of at least
/// [`LATE_READ_FLOOR`] and [`LATE_READ_SHARE`] of the latency p99.
fn reads_late(read_delay_p99_us: Option<u64>, latency_p99_us: Option<u64>) -> bool {
    match (read_delay_p99_us, latency_p99_us) {
        (Some(delay), Some(latency)) => {
            delay >= LATE_READ_FLOOR.as_micros() as u64 && delay as f64 >= LATE_READ_SHARE * latency as f64
        }
        _ => false,
    }
}

/// What limited the run, from the worker threads' CPU use, their wait for a CPU and whether
/// their timers fired or their reads came `late`; `None` when nothing did.
///
/// Busy threads are the generator's own limit. Lateness with idle threads is the machine's when
/// the threads waited for a CPU (or the platform does not say); when they did not wait, the
/// event loop was held up by the generator itself: a blocking call, or long work without a yield.
fn classify(cpu: Option<f64>, waited: Option<f64>, late: bool) -> Option<GeneratorLimit> {
    if cpu.is_some_and(|u| u >= SATURATED_CPU) {
        return Some(GeneratorLimit::GeneratorCpu);
    }
    if !late {
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
            lag_us: micros_histogram(),
            read_delay_us: None,
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
        let r = assess(
            &[worker(100, Some(1), &[50, 80, 120]), worker(150, Some(1), &[60, 90])],
            Duration::from_secs(1),
            None,
        );
        assert_eq!(r.worker_threads, 2);
        assert_eq!(r.cpu_utilization, Some(0.125));
        assert_eq!(r.waited_for_cpu, Some(0.001));
        assert!(!r.saturated, "{r:?}");
        assert_eq!(r.limit, None);
    }

    #[test]
    fn a_busy_cpu_is_the_generators_limit() {
        let busy = assess(&[worker(960, Some(10), &[100])], Duration::from_secs(1), None);
        assert!(busy.saturated, "{busy:?}");
        assert_eq!(busy.limit, Some(GeneratorLimit::GeneratorCpu));
        // Late timers with a busy (if not full) CPU and no wait: its own work held the loop up.
        let late = assess(&[worker(700, Some(5), &lags(40_000))], Duration::from_secs(1), None);
        assert_eq!(late.limit, Some(GeneratorLimit::GeneratorCpu), "{late:?}");
        assert!(late.lag_p99_us.is_some_and(|l| l >= 39_000), "{late:?}");
    }

    #[test]
    fn a_run_shorter_than_a_probe_interval_is_not_judged_by_its_cpu() {
        // More CPU than wall time over a run of microseconds: its start and end, not a load.
        let blip = WorkerLoad { cpu: Some(Duration::from_micros(30)), ..worker(0, Some(0), &[]) };
        let blip = assess(&[blip], Duration::from_micros(20), None);
        assert!(!blip.saturated, "{blip:?}");
        assert_eq!(blip.cpu_utilization, Some(1.5), "the figure is kept");
        // The same share over a whole interval is a busy generator.
        let busy = WorkerLoad { cpu: Some(PROBE_INTERVAL * 3 / 2), ..worker(0, Some(0), &[]) };
        assert_eq!(assess(&[busy], PROBE_INTERVAL, None).limit, Some(GeneratorLimit::GeneratorCpu));
    }

    #[test]
    fn late_timers_with_idle_threads_that_waited_for_a_cpu_are_a_busy_machine() {
        let r = assess(
            &[worker(20, Some(400), &lags(31_000)), worker(20, Some(300), &[100])],
            Duration::from_secs(1),
            None,
        );
        assert!(r.saturated, "{r:?}");
        assert_eq!(r.limit, Some(GeneratorLimit::MachineBusy), "{r:?}");
        assert_eq!(r.cpu_utilization, Some(0.02));
        assert_eq!(r.waited_for_cpu, Some(0.35));
        // Where the platform does not say whether they waited, the machine is the likely cause.
        let unknown = assess(&[worker(20, None, &lags(31_000))], Duration::from_secs(1), None);
        assert_eq!(unknown.limit, Some(GeneratorLimit::MachineBusy), "{unknown:?}");
        assert_eq!(unknown.waited_for_cpu, None);
    }

    #[test]
    fn late_timers_with_idle_threads_that_never_waited_are_a_stalled_generator() {
        let r = assess(&[worker(30, Some(2), &lags(52_000))], Duration::from_secs(1), None);
        assert_eq!(r.limit, Some(GeneratorLimit::GeneratorStalled), "{r:?}");
        assert!(r.saturated);
    }

    /// A worker whose sampled reads found data waiting `delays_us`.
    fn reading(cpu_ms: u64, waited_ms: Option<u64>, delays_us: &[u64]) -> WorkerLoad {
        let mut w = worker(cpu_ms, waited_ms, &[100]);
        let mut reads = micros_histogram();
        for &d in delays_us {
            reads.record(d).unwrap();
        }
        w.read_delay_us = Some(reads);
        w
    }

    #[test]
    fn reads_late_against_the_latency_flag_the_run_with_on_time_timers() {
        // 1 % of reads waited 6 ms against a latency p99 of 10 ms: the generator's own wait is
        // most of the tail, though no timer was late.
        let r = assess(&[reading(30, Some(2), &lags(6_000))], Duration::from_secs(1), Some(10_000));
        assert!(r.saturated, "{r:?}");
        assert!(r.late_reads, "{r:?}");
        assert_eq!(r.limit, Some(GeneratorLimit::GeneratorStalled), "{r:?}");
        assert!(r.read_delay_p99_us.is_some_and(|d| (5_900..=6_100).contains(&d)), "{r:?}");
        // The same wait with threads that waited for a CPU: the machine's.
        let busy = assess(&[reading(300, Some(200), &lags(6_000))], Duration::from_secs(1), Some(10_000));
        assert_eq!(busy.limit, Some(GeneratorLimit::MachineBusy), "{busy:?}");
        assert!(busy.late_reads);
    }

    #[test]
    fn reads_late_by_a_small_share_of_the_latency_do_not() {
        // The same 6 ms against a slow server's 40 ms: 15 % of its latency.
        let slow_server = assess(&[reading(300, Some(2), &lags(6_000))], Duration::from_secs(1), Some(40_000));
        assert!(!slow_server.saturated, "{slow_server:?}");
        assert!(!slow_server.late_reads);
        assert!(slow_server.read_delay_p99_us.is_some_and(|d| (5_900..=6_100).contains(&d)), "{slow_server:?}");
        // Below the floor, whatever the share: a read that came round late against a fast
        // server's small latency is not a stall.
        let fast = assess(&[reading(300, Some(2), &lags(200))], Duration::from_secs(1), Some(300));
        assert!(!fast.saturated && !fast.late_reads, "{fast:?}");
        // No samples (not Linux, or no read): no verdict from reads.
        let unmeasured = assess(&[worker(300, Some(2), &[100])], Duration::from_secs(1), Some(300));
        assert_eq!((unmeasured.read_delay_p99_us, unmeasured.late_reads), (None, false));
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
