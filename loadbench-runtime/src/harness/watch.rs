//! Samples a server process (and its children) while a scenario runs, the way LoadRunner's
//! monitors recorded the server's CPU and memory next to the response times: behind
//! `cargo loadbench --watch NAME=PID`, [`Harness::watch`](crate::Harness::watch) and
//! [`Harness::default_target_process`](crate::Harness::default_target_process).
//!
//! Read straight from `/proc`: per process `stat` (user + system CPU time, in clock ticks of
//! 1/100 s) and `status` (`VmRSS`), summed over the process and all its descendants (found
//! through `/proc/PID/task/TID/children`). A dedicated thread samples every [`INTERVAL`], so the
//! load generator's own threads never do this work.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::report::{WatchReport, WatchSample};

/// How often the process is sampled; also the window of the peak CPU figure.
pub const INTERVAL: Duration = Duration::from_millis(250);

/// Clock ticks per second in `/proc/PID/stat` (`USER_HZ`, 100 on every Linux platform).
const TICKS_PER_SECOND: f64 = 100.0;

/// A process to watch: a label for the results and a process id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Watch {
    /// The label in the results (`server` for `--watch-pid`).
    pub name: String,
    /// The process id.
    pub pid: u32,
}

/// Why a `NAME=PID` argument is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParseWatchError {
    /// Nothing before the `=`.
    #[error("`{0}` has no name before `=`; write NAME=PID")]
    NoName(String),
    /// What follows the `=` is not a number.
    #[error("`{0}` is not a process id; write NAME=PID")]
    NotAPid(String),
}

impl std::str::FromStr for Watch {
    type Err = ParseWatchError;

    /// `NAME=PID`, or a bare `PID` (named `server`).
    fn from_str(arg: &str) -> Result<Watch, ParseWatchError> {
        let (name, pid) = match arg.split_once('=') {
            Some((name, pid)) => (name.trim(), pid.trim()),
            None => ("server", arg.trim()),
        };
        if name.is_empty() {
            return Err(ParseWatchError::NoName(arg.to_owned()));
        }
        let pid = pid.parse::<u32>().map_err(|_| ParseWatchError::NotAPid(pid.to_owned()))?;
        Ok(Watch { name: name.to_owned(), pid })
    }
}

/// One reading of a process tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Sample {
    cpu_ticks: u64,
    rss_bytes: u64,
}

/// A running sampler; [`Sampler::finish`] stops it and returns what it saw.
#[derive(Debug)]
pub struct Sampler {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<WatchReport>>,
    fallback: WatchReport,
}

impl Sampler {
    /// Starts sampling `watch`. A process that does not exist yields a report that says so;
    /// the run goes on either way.
    pub fn start(watch: &Watch) -> Sampler {
        let stop = Arc::new(AtomicBool::new(false));
        let fallback = empty_report(watch, Some("the sampler thread could not start".to_owned()));
        let (flag, watch_for_thread) = (Arc::clone(&stop), watch.clone());
        let thread = std::thread::Builder::new()
            .name(format!("loadbench-watch-{}", watch.pid))
            .spawn(move || sample_until(&watch_for_thread, &flag))
            .ok();
        Sampler { stop, thread, fallback }
    }

    /// Stops sampling and returns the figures.
    pub fn finish(mut self) -> WatchReport {
        self.stop.store(true, Ordering::Relaxed);
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(report)) => report,
            _ => self.fallback.clone(),
        }
    }
}

fn empty_report(watch: &Watch, note: Option<String>) -> WatchReport {
    WatchReport {
        name: watch.name.clone(),
        pid: watch.pid,
        cpu_avg_percent: None,
        cpu_peak_percent: None,
        rss_start_bytes: None,
        rss_peak_bytes: None,
        rss_end_bytes: None,
        note,
        series: Vec::new(),
    }
}

fn sample_until(watch: &Watch, stop: &AtomicBool) -> WatchReport {
    let proc = Path::new("/proc");
    let Some(first) = sample_tree(proc, watch.pid) else {
        let note = if cfg!(target_os = "linux") {
            format!("no process with pid {} (it was not sampled)", watch.pid)
        } else {
            "process sampling needs Linux's /proc (it was not sampled)".to_owned()
        };
        return empty_report(watch, Some(note));
    };
    let started = Instant::now();
    let (mut last, mut last_at) = (first, started);
    let mut peak_rss = first.rss_bytes;
    let mut peak_cpu: Option<f64> = None;
    let mut exited = false;
    // The per-second series: the sample that opened the current second, and the seconds closed.
    let mut second_open = (first, started);
    let mut series = Vec::new();
    loop {
        let done = stop.load(Ordering::Relaxed);
        if !done {
            std::thread::sleep(INTERVAL);
        }
        match sample_tree(proc, watch.pid) {
            Some(now) => {
                let at = Instant::now();
                let window = at - last_at;
                if window >= INTERVAL / 2 {
                    let percent = cpu_percent(now.cpu_ticks.saturating_sub(last.cpu_ticks), window);
                    peak_cpu = Some(peak_cpu.map_or(percent, |p| p.max(percent)));
                }
                peak_rss = peak_rss.max(now.rss_bytes);
                (last, last_at) = (now, at);
                if at - started >= Duration::from_secs(series.len() as u64 + 1) {
                    series.push(watch_sample(series.len() as u64, second_open, (now, at)));
                    second_open = (now, at);
                }
            }
            None => {
                exited = true;
                break;
            }
        }
        if done {
            break;
        }
    }
    // The run's last, partial second, when it was sampled long enough to say anything.
    if last_at - second_open.1 >= INTERVAL / 2 {
        series.push(watch_sample(series.len() as u64, second_open, (last, last_at)));
    }
    let elapsed = last_at - started;
    WatchReport {
        name: watch.name.clone(),
        pid: watch.pid,
        cpu_avg_percent: (!elapsed.is_zero())
            .then(|| round1(cpu_percent(last.cpu_ticks.saturating_sub(first.cpu_ticks), elapsed))),
        cpu_peak_percent: peak_cpu.map(round1),
        rss_start_bytes: Some(first.rss_bytes),
        rss_peak_bytes: Some(peak_rss),
        rss_end_bytes: Some(last.rss_bytes),
        note: exited.then(|| "the process exited during the run; figures cover it until then".to_owned()),
        series,
    }
}

/// Second `second` of the series, from the samples that opened and closed it.
fn watch_sample(second: u64, (open, opened): (Sample, Instant), (close, closed): (Sample, Instant)) -> WatchSample {
    let window = closed - opened;
    WatchSample {
        second,
        cpu_percent: (!window.is_zero())
            .then(|| round1(cpu_percent(close.cpu_ticks.saturating_sub(open.cpu_ticks), window))),
        rss_bytes: Some(close.rss_bytes),
    }
}

/// CPU use over `window` as a percentage of one core (a process using two cores fully is 200 %).
fn cpu_percent(ticks: u64, window: Duration) -> f64 {
    ticks as f64 / TICKS_PER_SECOND / window.as_secs_f64() * 100.0
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// The process `pid` and its descendants, summed; `None` when `pid` does not exist.
fn sample_tree(proc: &Path, pid: u32) -> Option<Sample> {
    let root = sample_process(proc, pid)?;
    let mut total = root;
    let mut pending = children(proc, pid);
    // A process tree is small; the bound only guards against a /proc that loops.
    let mut budget = 10_000;
    while let Some(child) = pending.pop() {
        budget -= 1;
        if budget == 0 {
            break;
        }
        // A child may exit between listing and reading; it then simply adds nothing.
        if let Some(s) = sample_process(proc, child) {
            total.cpu_ticks += s.cpu_ticks;
            total.rss_bytes += s.rss_bytes;
            pending.extend(children(proc, child));
        }
    }
    Some(total)
}

fn sample_process(proc: &Path, pid: u32) -> Option<Sample> {
    let dir = proc.join(pid.to_string());
    let stat = std::fs::read_to_string(dir.join("stat")).ok()?;
    let status = std::fs::read_to_string(dir.join("status")).ok()?;
    Some(Sample { cpu_ticks: cpu_ticks(&stat)?, rss_bytes: rss_bytes(&status).unwrap_or(0) })
}

/// utime + stime + cutime + cstime of a `/proc/PID/stat` line. The reaped children's share
/// (cutime, cstime) keeps the total from dropping when a worker process exits.
fn cpu_ticks(stat: &str) -> Option<u64> {
    // The command name may hold spaces and parentheses; the fields start after the last ')'.
    let fields: Vec<&str> = stat[stat.rfind(')')? + 1..].split_whitespace().collect();
    // After the name: state is field 3 of the line, utime 14, stime 15, cutime 16, cstime 17.
    let field = |n: usize| fields.get(n - 3).and_then(|f| f.parse::<i64>().ok());
    let sum = field(14)? + field(15)? + field(16)?.max(0) + field(17)?.max(0);
    u64::try_from(sum).ok()
}

/// `VmRSS` of a `/proc/PID/status`, in bytes (absent for zombies and kernel threads).
fn rss_bytes(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

fn children(proc: &Path, pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(proc.join(pid.to_string()).join("task")) else { return Vec::new() };
    tasks
        .filter_map(Result::ok)
        .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
        .flat_map(|list| list.split_whitespace().filter_map(|p| p.parse().ok()).collect::<Vec<u32>>())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn watch_arguments_parse_or_say_what_is_wrong() {
        assert_eq!("db=42".parse::<Watch>(), Ok(Watch { name: "db".into(), pid: 42 }));
        assert_eq!("42".parse::<Watch>(), Ok(Watch { name: "server".into(), pid: 42 }));
        assert!("db=x".parse::<Watch>().unwrap_err().to_string().contains("`x` is not a process id"));
        assert!("=42".parse::<Watch>().unwrap_err().to_string().contains("no name"));
    }

    #[test]
    fn stat_lines_with_awkward_names_parse() {
        let stat = "1234 (my (odd) server) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 50 7 3 20 0 4 0 99 1 2";
        assert_eq!(cpu_ticks(stat), Some(250 + 50 + 7 + 3));
        assert_eq!(rss_bytes("Name:\tx\nVmRSS:\t   2048 kB\n"), Some(2048 * 1024));
        assert_eq!(rss_bytes("Name:\tx\n"), None);
    }

    #[test]
    fn this_process_can_be_watched() {
        let watch = Watch { name: "me".into(), pid: std::process::id() };
        let sampler = Sampler::start(&watch);
        let spin = Instant::now();
        while spin.elapsed() < Duration::from_millis(600) {
            std::hint::spin_loop();
        }
        let report = sampler.finish();
        assert!(report.note.is_none(), "{report:?}");
        assert!(report.cpu_avg_percent.is_some_and(|c| c > 30.0), "{report:?}");
        assert!(report.rss_peak_bytes.is_some_and(|r| r > 1_000_000), "{report:?}");
    }

    #[test]
    fn a_missing_process_is_reported_not_fatal() {
        // Above the kernel's largest pid_max (2^22), so no process has it.
        let report = Sampler::start(&Watch { name: "gone".into(), pid: 4_194_305 }).finish();
        assert!(report.note.as_deref().is_some_and(|n| n.contains("no process with pid 4194305")), "{report:?}");
        assert_eq!(report.cpu_avg_percent, None);
    }
}
