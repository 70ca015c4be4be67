//! Progress while scenarios run: on a terminal, one live line per running scenario (a group's
//! members together, in an indicatif `MultiProgress`) with its place in the run, elapsed and
//! remaining time, req/s and p50/p99 over the last seconds, errors by kind and active users;
//! elsewhere (CI), a plain line at each 10 % step (`steps`).
//!
//! Workers never call into the display: each one counts into its own [`WorkerProgress`] (relaxed
//! loads and stores, it is the only writer) and a separate thread per scenario reads them on a
//! timer, keeping the readings of the last seconds (`window`) to show figures over a window
//! rather than since the start. (indicatif takes a mutex on every update, which would put a lock
//! on the request path.) The line's text is a pure function of what was read (`line`). The live
//! metrics (`remote_write`) read the same counts (`read_live`), on a thread of their own.

mod line;
mod steps;
pub(crate) mod window;

use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressStyle};

pub(crate) use line::Position;
use line::{Snapshot, Users};
use steps::{Reading, Steps};
use window::{LatencyBuckets, Recent, Totals, Window};

use super::ramp;
use crate::config::{Load, Stage};
use crate::console::err;
use crate::error::ErrorKind;
use crate::report::units::{micros, thousands};

/// The error kinds as the report names them, in its order: the order of the `errors:` list.
pub(crate) const KINDS: [(ErrorKind, &str); 14] = [
    (ErrorKind::Connect, "connect"),
    (ErrorKind::Timeout, "timeout"),
    (ErrorKind::Status, "status"),
    (ErrorKind::Io, "io"),
    (ErrorKind::Scenario, "scenario"),
    (ErrorKind::BodyTooLarge, "body_too_large"),
    (ErrorKind::Tls, "tls"),
    (ErrorKind::Panic, "panic"),
    (ErrorKind::StreamReset, "stream_reset"),
    (ErrorKind::Protocol, "protocol"),
    (ErrorKind::QuicHandshakeTimeout, "quic_handshake_timeout"),
    (ErrorKind::QuicIdleTimeout, "quic_idle_timeout"),
    (ErrorKind::QuicApplicationClose, "quic_application_close"),
    (ErrorKind::Custom, "custom"),
];

fn kind_index(kind: ErrorKind) -> usize {
    KINDS.iter().position(|(k, _)| *k == kind).unwrap_or(KINDS.len() - 1)
}

/// Counts published by one worker thread for the progress display; that worker is the only
/// writer of each, so an update is a relaxed load and store, never a locked read-modify-write.
///
/// Aligned to its own cache lines so that one worker's stores never slow another's.
#[derive(Debug, Default)]
#[repr(align(128))]
pub(crate) struct WorkerProgress {
    pub(crate) done: AtomicU64,
    pub(crate) failed: AtomicU64,
    errors: [AtomicU64; KINDS.len()],
    latency: LatencyBuckets,
    /// Responses and bytes received in this worker's users' measured iterations, published after
    /// each one for the live metrics (`remote_write`); the report's own come from the users'
    /// counters when they finish.
    #[cfg(feature = "remote-write")]
    responses: AtomicU64,
    #[cfg(feature = "remote-write")]
    bytes_received: AtomicU64,
}

impl WorkerProgress {
    /// Counts a successful iteration's latency (the success path's only cost here, beside
    /// `done`: finding the bucket from the microseconds' leading zeros, a load and a store).
    #[inline]
    pub(crate) fn succeeded(&self, elapsed: Duration) {
        self.latency.record(elapsed);
    }

    /// Counts a failure of `kind`.
    pub(crate) fn failed_with(&self, kind: ErrorKind) {
        let count = &self.errors[kind_index(kind)];
        count.store(count.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
    }

    /// Adds what a measured iteration received: `responses` responses, `bytes` bytes. Single
    /// writer, as every count here.
    #[cfg(feature = "remote-write")]
    pub(crate) fn received(&self, responses: u64, bytes: u64) {
        self.responses.store(self.responses.load(Ordering::Relaxed) + responses, Ordering::Relaxed);
        self.bytes_received.store(self.bytes_received.load(Ordering::Relaxed) + bytes, Ordering::Relaxed);
    }
}

/// Every worker's counts added up at one instant: what the live metrics push.
#[cfg(feature = "remote-write")]
#[derive(Debug)]
pub(crate) struct LiveReading {
    /// Measured iterations ended, and of those the failed ones.
    pub(crate) totals: Totals,
    /// Failures by kind, named as the report names them.
    pub(crate) errors: Vec<(&'static str, u64)>,
    pub(crate) responses: u64,
    pub(crate) bytes_received: u64,
}

/// Reads `workers` now.
#[cfg(feature = "remote-write")]
pub(crate) fn read_live(workers: &[Arc<WorkerProgress>]) -> LiveReading {
    let (totals, errors) = sum(workers);
    let responses = workers.iter().map(|w| w.responses.load(Ordering::Relaxed)).sum();
    let bytes_received = workers.iter().map(|w| w.bytes_received.load(Ordering::Relaxed)).sum();
    LiveReading { totals, errors, responses, bytes_received }
}

/// Sums the workers' counts now: the totals, and the failures by kind in the report's order.
fn sum(workers: &[Arc<WorkerProgress>]) -> (Totals, Vec<(&'static str, u64)>) {
    let mut totals = Totals::empty();
    let mut errors = [0u64; KINDS.len()];
    for w in workers {
        totals.done += w.done.load(Ordering::Relaxed);
        totals.failed += w.failed.load(Ordering::Relaxed);
        for (sum, count) in errors.iter_mut().zip(&w.errors) {
            *sum += count.load(Ordering::Relaxed);
        }
        w.latency.add_to(&mut totals.latency);
    }
    (totals, KINDS.iter().zip(errors).map(|((_, name), n)| (*name, n)).collect())
}

/// Where the lines of a run go: a terminal's `MultiProgress`, shared by the scenarios running at
/// once, or plain lines on stderr.
#[derive(Debug, Clone)]
pub(crate) struct Board {
    multi: Option<MultiProgress>,
}

impl Board {
    /// Live lines when stderr is a terminal and `CI` is unset; plain lines otherwise.
    pub(crate) fn for_stderr() -> Board {
        let interactive = std::io::stderr().is_terminal() && std::env::var_os("CI").is_none();
        Board { multi: interactive.then(MultiProgress::new) }
    }
}

/// A scenario's place on the board: where its line goes and its `[i/n]`.
#[derive(Debug, Clone)]
pub(crate) struct BoardPlace {
    pub(crate) board: Board,
    pub(crate) position: Position,
}

/// What the display knows of the scenario it follows.
#[derive(Debug, Clone)]
pub(crate) struct Watched {
    pub(crate) name: Arc<str>,
    pub(crate) load: Load,
    pub(crate) concurrency: u32,
    /// A ramp of users (empty when none).
    pub(crate) stages: Vec<Stage>,
    /// Open model: the users in flight are estimated from the rate and the latency.
    pub(crate) open: bool,
}

/// The running display; [`Progress::finish`] stops it.
#[derive(Debug)]
pub(crate) struct Progress {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

const TICK: Duration = Duration::from_millis(100);

impl Progress {
    /// Starts following `watched`, whose workers count into `workers` and whose measured part
    /// starts at `origin`, on `slot`'s board.
    pub(crate) fn start(
        slot: BoardPlace,
        watched: Watched,
        workers: Vec<Arc<WorkerProgress>>,
        origin: Instant,
    ) -> Progress {
        let stop = Arc::new(AtomicBool::new(false));
        let stop_flag = Arc::clone(&stop);
        let follow = Follow { watched, workers, origin, position: slot.position, window: Window::default() };
        let thread = std::thread::Builder::new()
            .name("loadbench-progress".into())
            .spawn(move || match slot.board.multi {
                Some(multi) => follow.draw(&multi, &stop_flag),
                None => follow.print_lines(&stop_flag),
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

/// What one tick read.
struct Tick {
    /// Since the measured part's start; `None` during the warmup.
    elapsed: Option<Duration>,
    totals: Totals,
    recent: Recent,
    errors: Vec<(&'static str, u64)>,
    users: Users,
}

/// The progress thread's state for one scenario.
struct Follow {
    watched: Watched,
    workers: Vec<Arc<WorkerProgress>>,
    origin: Instant,
    position: Position,
    window: Window,
}

impl Follow {
    /// Sums the workers' counts now.
    fn read(&self) -> (Totals, Vec<(&'static str, u64)>) {
        sum(&self.workers)
    }

    /// The users now: the ramp's target (or all) in the closed model, where every active user is
    /// in or between its iterations; in the open model, those in flight by Little's law (the
    /// rate times the mean latency), at most the concurrency.
    fn users(&self, elapsed: Option<Duration>, recent: &Recent) -> Users {
        let w = &self.watched;
        if w.open {
            let in_flight = recent.ok_per_sec.zip(recent.mean_us).map_or(0.0, |(rate, us)| rate * us / 1e6);
            return Users { active: (in_flight.round() as u32).min(w.concurrency), of: w.concurrency, estimated: true };
        }
        let active = match elapsed {
            Some(t) if !w.stages.is_empty() => (ramp::ramp_target(&w.stages, t).ceil() as u32).min(w.concurrency),
            _ => w.concurrency,
        };
        Users { active, of: w.concurrency, estimated: false }
    }

    /// Reads the workers: the counts and the line's figures.
    fn tick(&mut self) -> Tick {
        let now = Instant::now();
        let (totals, errors) = self.read();
        let recent = self.window.push(now, totals.clone());
        let elapsed = now.checked_duration_since(self.origin);
        let users = self.users(elapsed, &recent);
        Tick { elapsed, totals, recent, errors, users }
    }

    /// Terminal: one line on the board until stopped, then cleared (the table follows).
    fn draw(mut self, multi: &MultiProgress, stop: &AtomicBool) {
        let bar = multi.add(ProgressBar::new(1_000));
        let style = ProgressStyle::with_template("{prefix} [{bar:20}] {wide_msg}")
            .map(|s| s.progress_chars("=> "))
            .unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style);
        while !stop.load(Ordering::Relaxed) {
            let Tick { elapsed, totals, recent, errors, users } = self.tick();
            let snapshot = Snapshot {
                position: self.position,
                name: &self.watched.name,
                load: self.watched.load,
                elapsed,
                done: totals.done,
                recent,
                errors,
                users,
            };
            bar.set_prefix(snapshot.head());
            bar.set_position((snapshot.fraction() * 1_000.0) as u64);
            bar.set_message(snapshot.figures());
            std::thread::sleep(TICK);
        }
        bar.finish_and_clear();
        multi.remove(&bar);
    }

    /// Not a terminal: a line at each 10 %, with the req/s and p99 of the last seconds, and a
    /// total at the end.
    fn print_lines(mut self, stop: &AtomicBool) {
        err!("{}", start_line(self.position, &self.watched));
        let name = Arc::clone(&self.watched.name);
        let mut steps = Steps::new(self.watched.load);
        loop {
            let finished = stop.load(Ordering::Relaxed);
            let Tick { elapsed, totals, recent, .. } = self.tick();
            let elapsed = elapsed.unwrap_or_default();
            let (done, failed) = (totals.done, totals.failed);
            let lines = steps.reached(Reading { done, failed, elapsed });
            let tail = recent_tail(&recent);
            for line in lines {
                err!("{name}: {line}{tail}");
            }
            if finished {
                let noun = if done == 1 { "iteration" } else { "iterations" };
                err!("{name}: done ({done} {noun}, {failed} failed, {:.1}s)", elapsed.as_secs_f64());
                return;
            }
            std::thread::sleep(TICK);
        }
    }
}

/// The plain display's first line for a scenario: `[2/5] checkout: running (10,000 iterations,
/// 50 users)`, so a CI log says which scenario of how many.
fn start_line(position: Position, watched: &Watched) -> String {
    let load = match watched.load {
        Load::Count(n) => format!("{} {}", thousands(n), if n == 1 { "iteration" } else { "iterations" }),
        Load::Duration(d) => humantime::format_duration(d).to_string(),
    };
    let users = if watched.concurrency == 1 { "user" } else { "users" };
    let most = if watched.open { "at most " } else { "" };
    format!(
        "[{}/{}] {}: running ({load}, {most}{} {users})",
        position.index, position.of, watched.name, watched.concurrency
    )
}

/// ` 1,234 req/s, p99 8.00ms` after a plain line, when the last seconds measured them.
fn recent_tail(recent: &Recent) -> String {
    match (recent.ok_per_sec, recent.p99_us) {
        (Some(rate), Some(p99)) => format!(" {} req/s, p99 {}", thousands(rate.round() as u64), micros(p99)),
        (Some(rate), None) => format!(" {} req/s", thousands(rate.round() as u64)),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn follow(open: bool, stages: Vec<Stage>) -> Follow {
        Follow {
            watched: Watched { name: "s".into(), load: Load::Count(100), concurrency: 50, stages, open },
            workers: vec![Arc::default(), Arc::default()],
            origin: Instant::now(),
            position: Position { index: 1, of: 1 },
            window: Window::default(),
        }
    }

    /// A failure of each kind is counted under the JSON field of the kind's own name, once in the
    /// total and once more when counts are added: a kind missing from `KINDS`, `total`, `slot` or
    /// `add` would lose failures from the progress line, the live metrics or the report.
    #[test]
    fn each_kind_counts_under_its_own_name() {
        for (kind, name) in KINDS {
            assert_eq!(kind.name(), name);
            let mut counts = crate::report::ErrorCounts::default();
            *counts.slot(kind) += 1;
            let json = serde_json::to_value(counts).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(json[name], 1, "{json}");
            assert_eq!(json.as_object().map(|o| o.len()), Some(KINDS.len()), "{json}");
            let mut sum = counts;
            sum.add(&counts);
            assert_eq!((counts.total(), sum.total()), (1, 2), "{name}");
        }
    }

    #[test]
    fn the_workers_counts_add_up() {
        let f = follow(false, Vec::new());
        f.workers[0].failed_with(ErrorKind::Io);
        f.workers[1].failed_with(ErrorKind::Io);
        f.workers[1].failed_with(ErrorKind::Status);
        f.workers[0].succeeded(Duration::from_millis(3));
        f.workers[1].done.store(4, Ordering::Relaxed);
        let (totals, errors) = f.read();
        assert_eq!(totals.done, 4);
        assert_eq!(totals.latency.iter().sum::<u64>(), 1);
        assert_eq!(errors.iter().find(|(k, _)| *k == "io"), Some(&("io", 2)));
        assert_eq!(errors.iter().find(|(k, _)| *k == "status"), Some(&("status", 1)));
        assert_eq!(errors.iter().map(|(k, _)| *k).collect::<Vec<_>>()[..4], ["connect", "timeout", "status", "io"]);
    }

    #[test]
    fn users_follow_the_ramp_or_littles_law() {
        let ramp = vec![Stage { duration: Duration::from_secs(10), target: 40 }];
        let closed = follow(false, ramp);
        let at = |s| closed.users(Some(Duration::from_secs(s)), &Recent::default());
        assert_eq!(at(5), Users { active: 20, of: 50, estimated: false });
        assert_eq!(at(20), Users { active: 40, of: 50, estimated: false });
        let open = follow(true, Vec::new());
        let recent = Recent { ok_per_sec: Some(2_000.0), mean_us: Some(10_000.0), ..Recent::default() };
        assert_eq!(open.users(Some(Duration::from_secs(1)), &recent), Users { active: 20, of: 50, estimated: true });
        let swamped = Recent { mean_us: Some(1e6), ..recent };
        assert_eq!(open.users(None, &swamped).active, 50, "at most the concurrency");
    }

    #[test]
    fn the_plain_display_starts_with_the_scenarios_place() {
        let mut f = follow(false, Vec::new());
        f.watched.load = Load::Count(10_000);
        assert_eq!(
            start_line(Position { index: 2, of: 5 }, &f.watched),
            "[2/5] s: running (10,000 iterations, 50 users)"
        );
        f.watched.load = Load::Duration(Duration::from_secs(90));
        f.watched.open = true;
        assert_eq!(start_line(Position { index: 1, of: 1 }, &f.watched), "[1/1] s: running (1m 30s, at most 50 users)");
    }

    #[test]
    fn plain_lines_end_with_the_recent_figures() {
        let recent = Recent { ok_per_sec: Some(1_234.4), p50_us: Some(900.0), p99_us: Some(8_000.0), mean_us: None };
        assert_eq!(recent_tail(&recent), " 1,234 req/s, p99 8.00ms");
        assert_eq!(recent_tail(&Recent::default()), "");
    }
}
