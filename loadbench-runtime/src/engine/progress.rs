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
    let mut reported_tenths = 0;
    loop {
        let finished = stop.load(Ordering::Relaxed);
        let (done, failed) = totals(workers);
        let elapsed = start.elapsed();
        // Steps of a handful of iterations (a smoke run of one) say nothing; the total does.
        let tenths = match load {
            Load::Count(n) if n < 10 => 0,
            _ => ((fraction(load, done, elapsed) * 10.0).floor() as u32).min(9),
        };
        // One line per 10 % step, as `ab` prints them, even when a tick (or the whole run)
        // spans several steps, so a CI log always shows the same steps.
        while reported_tenths < tenths {
            reported_tenths += 1;
            match load {
                Load::Count(n) => eprintln!(
                    "{name}: {}% ({} of {n} iterations, {failed} failed, {:.1}s)",
                    reported_tenths * 10,
                    n * u64::from(reported_tenths) / 10,
                    elapsed.as_secs_f64()
                ),
                Load::Duration(d) => eprintln!(
                    "{name}: {}% ({:.1}s of {}, {done} iterations, {failed} failed)",
                    reported_tenths * 10,
                    d.as_secs_f64() * f64::from(reported_tenths) / 10.0,
                    humantime::format_duration(d)
                ),
            }
        }
        if finished {
            let noun = if done == 1 { "iteration" } else { "iterations" };
            eprintln!("{name}: done ({done} {noun}, {failed} failed, {:.1}s)", elapsed.as_secs_f64());
            return;
        }
        std::thread::sleep(TICK);
    }
}
