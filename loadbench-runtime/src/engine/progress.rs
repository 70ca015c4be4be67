//! Progress while a scenario runs: a bar on a terminal, a plain line at each 10 % elsewhere.
//!
//! Workers never call into the progress display: each one stores its own counts in a
//! [`WorkerProgress`] and a separate thread reads them on a timer. (indicatif takes a mutex on
//! every update, which would put a lock on the hot path.)

use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use crate::config::Load;

/// Counts published by one worker thread for the progress display.
///
/// Aligned to its own cache line so that one worker's stores never slow another's.
#[derive(Debug, Default)]
#[repr(align(128))]
pub(crate) struct WorkerProgress {
    pub(crate) done: AtomicU64,
    pub(crate) failed: AtomicU64,
}

/// The running display; [`Progress::finish`] stops it.
#[derive(Debug)]
pub(crate) struct Progress {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

const TICK: Duration = Duration::from_millis(100);

impl Progress {
    pub(crate) fn start(name: Arc<str>, load: Load, workers: Vec<Arc<WorkerProgress>>, start: Instant) -> Progress {
        let stop = Arc::new(AtomicBool::new(false));
        let stop_flag = Arc::clone(&stop);
        let interactive = std::io::stderr().is_terminal() && std::env::var_os("CI").is_none();
        let thread = std::thread::Builder::new()
            .name("loadbench-progress".into())
            .spawn(move || {
                if interactive {
                    draw_bar(&name, load, &workers, start, &stop_flag);
                } else {
                    print_lines(&name, load, &workers, start, &stop_flag);
                }
            })
            .ok();
        Progress { stop, thread }
    }

    pub(crate) fn finish(mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn totals(workers: &[Arc<WorkerProgress>]) -> (u64, u64) {
    workers.iter().fold((0, 0), |(d, f), w| (d + w.done.load(Ordering::Relaxed), f + w.failed.load(Ordering::Relaxed)))
}

/// Fraction of the work done, from 0 to 1.
fn fraction(load: Load, done: u64, elapsed: Duration) -> f64 {
    match load {
        Load::Count(0) => 1.0,
        Load::Count(n) => done as f64 / n as f64,
        Load::Duration(d) if d.is_zero() => 1.0,
        Load::Duration(d) => elapsed.as_secs_f64() / d.as_secs_f64(),
    }
    .min(1.0)
}

fn draw_bar(name: &str, load: Load, workers: &[Arc<WorkerProgress>], start: Instant, stop: &AtomicBool) {
    let bar = ProgressBar::new(1_000);
    let style = ProgressStyle::with_template("{prefix:>12} [{bar:30}] {percent:>3}% {msg}")
        .map(|s| s.progress_chars("=> "))
        .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    bar.set_prefix(name.to_owned());
    while !stop.load(Ordering::Relaxed) {
        let (done, failed) = totals(workers);
        let elapsed = start.elapsed();
        bar.set_position((fraction(load, done, elapsed) * 1_000.0) as u64);
        let rate = done as f64 / elapsed.as_secs_f64().max(1e-9);
        bar.set_message(format!("{done} done, {failed} failed, {rate:.0}/s"));
        std::thread::sleep(TICK);
    }
    bar.finish_and_clear();
}

fn print_lines(name: &str, load: Load, workers: &[Arc<WorkerProgress>], start: Instant, stop: &AtomicBool) {
    let mut steps = Steps::new(load);
    loop {
        let finished = stop.load(Ordering::Relaxed);
        let (done, failed) = totals(workers);
        let elapsed = start.elapsed();
        for line in steps.reached(Reading { done, failed, elapsed }) {
            eprintln!("{name}: {line}");
        }
        if finished {
            let noun = if done == 1 { "iteration" } else { "iterations" };
            eprintln!("{name}: done ({done} {noun}, {failed} failed, {:.1}s)", elapsed.as_secs_f64());
            return;
        }
        std::thread::sleep(TICK);
    }
}

/// The counts read at one tick.
#[derive(Debug, Clone, Copy, Default)]
struct Reading {
    done: u64,
    failed: u64,
    elapsed: Duration,
}

/// The 10 % steps of a non-terminal progress display: one line per step, as `ab` prints them,
/// even when a tick (or the whole run) spans several steps, so a CI log always shows the same
/// steps.
///
/// Each line gives the counts as of its step, not of the tick that noticed it: when one tick
/// spans several steps, the counts at each are interpolated between this reading and the last
/// (the only two known), so the 10 % line of a run that failed throughout says 200 failed, not
/// the 2000 that had failed by the time it was printed.
#[derive(Debug)]
struct Steps {
    load: Load,
    reported_tenths: u32,
    last: Reading,
}

impl Steps {
    fn new(load: Load) -> Steps {
        Steps { load, reported_tenths: 0, last: Reading::default() }
    }

    /// The lines of the steps reached by `now`, in order.
    fn reached(&mut self, now: Reading) -> Vec<String> {
        let load = self.load;
        // Steps of a handful of iterations (a smoke run of one) say nothing; the total does.
        let tenths = match load {
            Load::Count(n) if n < 10 => 0,
            _ => ((fraction(load, now.done, now.elapsed) * 10.0).floor() as u32).min(9),
        };
        let last = self.last;
        self.last = now;
        let mut lines = Vec::new();
        while self.reported_tenths < tenths {
            self.reported_tenths += 1;
            let step = self.reported_tenths;
            let line = match load {
                Load::Count(n) => {
                    let done = n * u64::from(step) / 10;
                    let at = share(done.saturating_sub(last.done), now.done.saturating_sub(last.done));
                    let failed = between(last.failed, now.failed, at).min(done);
                    let elapsed =
                        last.elapsed.as_secs_f64() + now.elapsed.saturating_sub(last.elapsed).as_secs_f64() * at;
                    format!("{}% ({done} of {n} iterations, {failed} failed, {elapsed:.1}s)", step * 10)
                }
                Load::Duration(d) => {
                    let time = d.mul_f64(f64::from(step) / 10.0);
                    let since = time.saturating_sub(last.elapsed).as_secs_f64();
                    let at = (since / (now.elapsed.saturating_sub(last.elapsed)).as_secs_f64().max(1e-9)).min(1.0);
                    let done = between(last.done, now.done, at);
                    let failed = between(last.failed, now.failed, at).min(done);
                    format!(
                        "{}% ({:.1}s of {}, {done} iterations, {failed} failed)",
                        step * 10,
                        time.as_secs_f64(),
                        humantime::format_duration(d)
                    )
                }
            };
            lines.push(line);
        }
        lines
    }
}

/// `part / whole`, from 0 to 1 (1 when `whole` is 0).
fn share(part: u64, whole: u64) -> f64 {
    if whole == 0 { 1.0 } else { (part as f64 / whole as f64).min(1.0) }
}

/// The count a fraction `at` of the way from `from` to `to`, to the nearest whole.
fn between(from: u64, to: u64, at: f64) -> u64 {
    from + (to.saturating_sub(from) as f64 * at).round() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(done: u64, failed: u64, ms: u64) -> Reading {
        Reading { done, failed, elapsed: Duration::from_millis(ms) }
    }

    #[test]
    fn each_line_gives_the_counts_as_of_its_step() {
        // A run that failed throughout and was over within one tick.
        let mut steps = Steps::new(Load::Count(2_000));
        let lines = steps.reached(reading(2_000, 2_000, 100));
        assert_eq!(lines.len(), 9, "{lines:?}");
        assert_eq!(lines[0], "10% (200 of 2000 iterations, 200 failed, 0.0s)");
        assert!(lines[4].starts_with("50% (1000 of 2000 iterations, 1000 failed, "), "{}", lines[4]);
        assert!(steps.reached(reading(2_000, 2_000, 200)).is_empty(), "every step once");

        // Failures that began late are not reported early.
        let mut steps = Steps::new(Load::Count(1_000));
        assert_eq!(steps.reached(reading(150, 0, 100)), ["10% (100 of 1000 iterations, 0 failed, 0.1s)"]);
        let lines = steps.reached(reading(350, 200, 200));
        assert_eq!(
            lines,
            ["20% (200 of 1000 iterations, 50 failed, 0.1s)", "30% (300 of 1000 iterations, 150 failed, 0.2s)"]
        );
    }

    #[test]
    fn duration_steps_interpolate_by_time() {
        let mut steps = Steps::new(Load::Duration(Duration::from_secs(1)));
        assert!(steps.reached(reading(50, 0, 50)).is_empty());
        let lines = steps.reached(reading(250, 200, 250));
        assert_eq!(
            lines,
            ["10% (0.1s of 1s, 100 iterations, 50 failed)", "20% (0.2s of 1s, 200 iterations, 150 failed)"]
        );
    }

    #[test]
    fn small_counts_print_no_steps() {
        assert!(Steps::new(Load::Count(5)).reached(reading(5, 5, 100)).is_empty());
    }
}
