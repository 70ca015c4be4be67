//! What the virtual users of one worker thread share: where their next iteration comes from, the
//! worker's measurements, its clock and, in the open model, its idle users.
//!
//! Each worker thread runs a current-thread tokio runtime with its own share of the virtual users,
//! so this state is only ever touched by one thread: recording an iteration takes no lock and no
//! read-modify-write atomic. The only shared state on the hot path is the remaining-iterations
//! counter of a count-bounded run, claimed in batches, and the stop flag, which is only read.

use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::progress::WorkerProgress;
use super::ramp;
use super::refused::Refusals;
use super::stats::WorkerStats;
use super::warmup::WorkerWarmup;
use crate::config::{Load, Stage, ThinkTime};
use crate::error::{Error, ErrorKind};
use crate::feed::Feed;
use crate::http::{HttpCounters, Recorder};

/// Upper bound on iterations a worker claims at once: large enough that the shared counter is
/// touched rarely, small enough that workers finish together.
const MAX_BATCH: u64 = 256;

/// Where a worker gets permission for its next iteration.
#[derive(Debug)]
pub(crate) enum WorkSource {
    /// Exactly `remaining` iterations in total, shared by all workers; `local` is this worker's
    /// already-claimed share.
    Count { remaining: Arc<AtomicU64>, local: u64, users: u64 },
    /// Start iterations until the deadline: `length` after the start of the measured part.
    Until { deadline: Instant, length: Duration },
}

impl WorkSource {
    /// The work of a run bounded by `load`, for `users` virtual users in all; `remaining` is the
    /// count all workers share.
    pub(crate) fn new(load: Load, remaining: &Arc<AtomicU64>, users: u32) -> WorkSource {
        match load {
            Load::Count(_) => {
                WorkSource::Count { remaining: Arc::clone(remaining), local: 0, users: u64::from(users.max(1)) }
            }
            // The deadline is set once the run's start is known (`Worker::rebase`).
            Load::Duration(length) => WorkSource::Until { deadline: Instant::now(), length },
        }
    }
}

/// State shared by the virtual users of one worker thread (never across threads).
#[derive(Debug)]
pub(crate) struct Worker {
    work: WorkSource,
    /// Set: start no more iterations. The run's graceful stop flag, until the worker gives up on
    /// a target where nothing listens (`refusals`): then a flag of its own, set, so that the one
    /// load per iteration covers both.
    pub(crate) stop: Arc<AtomicBool>,
    pub(crate) stats: WorkerStats,
    progress: Arc<WorkerProgress>,
    done: u64,
    failed: u64,
    pub(crate) last_end: Option<Instant>,
    /// The start of the measured part of the run: timeline seconds count from here.
    origin: Instant,
    /// `origin` after the start of the run, which is only known once every user is set up.
    origin_offset: Duration,
    /// The timeline second iterations ending now fall in, and when it ends.
    second: usize,
    second_ends: Instant,
    pub(crate) warmup: WorkerWarmup,
    /// When this worker's first measured iteration started.
    pub(crate) first_measured: Option<Instant>,
    /// Closed model: each user's pause between iterations.
    pub(crate) think_time: Option<ThinkTime>,
    /// Closed model: a ramp of active users (empty when none).
    stages: Vec<Stage>,
    /// The plan's first user number: a ramp's targets count this shard's users from it.
    first_user: u32,
    /// Open model: users waiting for an arrival, as indices into the scheduler's slots. A user
    /// puts itself back after each iteration. (Indices, not the slots: this struct is built
    /// before it moves to its thread, so it must be `Send`.)
    pub(crate) idle: Vec<usize>,
    /// Users whose iteration was cancelled, which are not torn down.
    pub(crate) cancelled_users: Vec<u32>,
    /// A feed with `feed_end = "stop"`: no iteration starts once it has run out. `None` for
    /// every other scenario, so the check is one branch.
    feed: Option<Arc<Feed>>,
    /// Whether every attempt so far was refused, and whether the worker gave up because of it.
    refusals: Refusals,
}

/// What a worker starts with; the rest of its state starts empty.
#[derive(Debug)]
pub(crate) struct WorkerSetup {
    pub(crate) work: WorkSource,
    pub(crate) stop: Arc<AtomicBool>,
    pub(crate) progress: Arc<WorkerProgress>,
    pub(crate) origin_offset: Duration,
    pub(crate) warmup: WorkerWarmup,
    pub(crate) think_time: Option<ThinkTime>,
    pub(crate) stages: Vec<Stage>,
    /// The number of the plan's first user (`LoadPlan::first_user`).
    pub(crate) first_user: u32,
    pub(crate) feed: Option<Arc<Feed>>,
    /// The watch over refused attempts, with this worker's share of the run's bound.
    pub(crate) refusals: Refusals,
}

impl Worker {
    pub(crate) fn new(setup: WorkerSetup) -> Worker {
        let WorkerSetup { work, stop, progress, origin_offset, warmup, think_time, stages, first_user, feed, refusals } =
            setup;
        // Placeholders until `rebase` knows the start.
        let now = Instant::now();
        Worker {
            work,
            stop,
            stats: WorkerStats::new(),
            progress,
            done: 0,
            failed: 0,
            last_end: None,
            origin: now,
            origin_offset,
            second: 0,
            second_ends: now,
            warmup,
            first_measured: None,
            think_time,
            stages,
            first_user,
            idle: Vec::new(),
            cancelled_users: Vec::new(),
            feed,
            refusals,
        }
    }

    /// Whether the calling virtual user may start another iteration at `now` (`None` when the
    /// work is done), and whether that iteration is measured (`Some(false)`: a warmup iteration).
    /// The caller reads the clock, since it needs the reading as the iteration's start anyway.
    pub(crate) fn next_iteration(&mut self, now: Instant) -> Option<bool> {
        if self.stop.load(Ordering::Relaxed) || self.feed_ran_out() {
            return None;
        }
        if self.warmup.claim(now) {
            return Some(false);
        }
        self.next_measured(now).then_some(true)
    }

    /// Whether the scenario's stopping feed has run out: it starts no more iterations.
    pub(crate) fn feed_ran_out(&self) -> bool {
        self.feed.as_ref().is_some_and(|feed| feed.ran_out())
    }

    /// Fixes the run's instants once its start is known (after every user's setup).
    pub(crate) fn rebase(&mut self, start: Instant) {
        self.origin = start + self.origin_offset;
        self.second = 0;
        self.second_ends = self.origin + Duration::from_secs(1);
        if let WorkSource::Until { deadline, length } = &mut self.work {
            *deadline = self.origin + *length;
        }
        self.warmup.rebase(start);
    }

    /// Whether users follow a ramp (`stages`).
    pub(crate) fn has_ramp(&self) -> bool {
        !self.stages.is_empty()
    }

    /// With a ramp of users: `None` while `user` (its `ctx.user()`) is active (or the run is
    /// over), else when to look again (when it becomes active, or the end of the run). The ramp's
    /// targets are this plan's (a shard's own part), so users count from its first.
    pub(crate) fn inactive_until(&self, user: u32) -> Option<Instant> {
        if self.stages.is_empty() {
            return None;
        }
        let now = Instant::now();
        let deadline = self.deadline().unwrap_or(now);
        if now >= deadline {
            return None;
        }
        let t = now.saturating_duration_since(self.origin);
        match ramp::ramp_next_active(&self.stages, user.saturating_sub(self.first_user), t) {
            Some(at) if at <= t => None,
            Some(at) => Some((self.origin + at).min(deadline)),
            None => Some(deadline),
        }
    }

    /// When a duration-bound run stops starting iterations; a pause must not outlast it.
    pub(crate) fn deadline(&self) -> Option<Instant> {
        match self.work {
            WorkSource::Until { deadline, .. } => Some(deadline),
            WorkSource::Count { .. } => None,
        }
    }

    fn next_measured(&mut self, now: Instant) -> bool {
        match &mut self.work {
            WorkSource::Until { deadline, .. } => now < *deadline,
            WorkSource::Count { remaining, local, users } => {
                if *local > 0 {
                    *local -= 1;
                    return true;
                }
                // Claim a batch proportional to what is left, so that near the end every user
                // still finds work (concurrency stays at C while at least C iterations remain).
                let batch = |left: u64| (left / (4 * *users)).clamp(1, MAX_BATCH);
                match remaining.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
                    (left > 0).then(|| left - batch(left).min(left))
                }) {
                    Ok(before) => {
                        *local = batch(before).min(before) - 1;
                        true
                    }
                    Err(_) => false,
                }
            }
        }
    }

    /// Records an iteration that started at `start` and ended at `end`; a warmup iteration
    /// (`measured` false) is only counted as such. Returns `true` when this failure made the
    /// worker give up on a target where nothing listens: it starts no more iterations, and the
    /// caller ends the waits between them.
    pub(crate) fn record(&mut self, outcome: Result<(), Error>, start: Instant, end: Instant, measured: bool) -> bool {
        if !measured {
            self.warmup.done += 1;
            return match &outcome {
                Ok(()) => {
                    self.refusals.succeeded();
                    false
                }
                Err(err) => self.refused(err, end, true),
            };
        }
        if self.first_measured.is_none_or(|first| start < first) {
            self.first_measured = Some(start);
        }
        let elapsed = end.saturating_duration_since(start);
        let mut gave_up = false;
        match &outcome {
            Ok(()) => self.progress.succeeded(elapsed),
            Err(err) => {
                // Before this failure is counted: `failed == done` when none succeeded.
                gave_up = self.refused(err, end, self.failed == self.done);
                self.failed += 1;
                self.progress.failed.store(self.failed, Ordering::Relaxed);
                self.progress.failed_with(err.kind());
            }
        }
        // The timeline's second, recomputed only when an iteration ends past the current one.
        if end >= self.second_ends {
            let since = end.saturating_duration_since(self.origin).as_secs();
            self.second = usize::try_from(since).unwrap_or(usize::MAX);
            self.second_ends = self.origin + Duration::from_secs(since.saturating_add(1));
        }
        self.stats.record(outcome, elapsed, Some(self.second));
        self.done += 1;
        // Single writer: a plain store, read by the progress thread on its timer.
        self.progress.done.store(self.done, Ordering::Relaxed);
        self.last_end = Some(end);
        gave_up
    }

    /// Tells the watch over refused attempts of a failure; gives up when it says so.
    #[cold]
    fn refused(&mut self, err: &Error, end: Instant, only_failures: bool) -> bool {
        let gave_up = self.refusals.failed(err, end, only_failures);
        if gave_up {
            self.stop = Arc::new(AtomicBool::new(true));
        }
        gave_up
    }

    /// The refused attempts this worker made, when it gave up because of them.
    pub(crate) fn gave_up(&self) -> Option<u64> {
        self.refusals.gave_up()
    }

    /// Records that `user`'s iteration was cancelled (at the end of the grace period, or by a
    /// second signal); `measured` is false for a warmup iteration, which is in no figure.
    pub(crate) fn record_cancelled(&mut self, user: u32, measured: bool) {
        self.cancelled_users.push(user);
        if measured {
            self.stats.cancelled += 1;
            // The run lasted until then: the generator held the connection.
            let now = Instant::now();
            self.last_end = Some(self.last_end.map_or(now, |end| end.max(now)));
        }
    }

    /// Records an iteration that never ended: its virtual user died in it (a panic).
    pub(crate) fn record_lost(&mut self, message: &'static str) {
        let now = Instant::now();
        // A scenario error: never a refusal, so never a reason to give up.
        let _ = self.record(Err(Error::new(ErrorKind::Scenario, message)), now, now, true);
    }

    /// Publishes what a user's measured iteration received, for the live metrics.
    #[cfg(feature = "remote-write")]
    pub(crate) fn received(&self, responses: u64, bytes: u64) {
        self.progress.received(responses, bytes);
    }

    /// Adds a finished user's HTTP figures.
    pub(crate) fn absorb(&mut self, counters: &HttpCounters) {
        self.stats.absorb(counters);
    }
}

/// The worker records its users' steps, named requests, checks and connections: they run on its thread, one at a time.
impl Recorder for RefCell<Worker> {
    fn record_step(&self, name: &str, error: Option<&Error>, elapsed: Duration) {
        self.borrow_mut().stats.record_step(name, error, elapsed);
    }

    fn record_request(&self, name: &str, error: Option<&Error>, elapsed: Duration) {
        self.borrow_mut().stats.record_request(name, error, elapsed);
    }

    fn record_check(&self, name: &str, passed: bool) {
        self.borrow_mut().stats.record_check(name, passed);
    }

    fn record_connection(&self, connect: Option<Duration>, handshake: Option<Duration>) {
        self.borrow_mut().stats.connections.record(connect, handshake);
    }

    fn record_quic(&self, timing: crate::http::QuicTiming) {
        self.borrow_mut().stats.connections.record_quic(timing);
    }
}

/// The number of worker threads for `sockets` connections (or users) to a server that is on
/// this machine (`same_machine`: a loopback address) or not. `LOADBENCH_THREADS` overrides it
/// (for pinning the generator to fewer cores than it has).
pub(crate) fn worker_threads(sockets: u32, same_machine: bool) -> usize {
    let overridden = std::env::var("LOADBENCH_THREADS").ok().and_then(|v| v.parse::<usize>().ok()).filter(|&n| n > 0);
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    threads_for(cpus, overridden, sockets, same_machine)
}

/// One thread per CPU; half the CPUs (at least one) when the server shares them; never more
/// threads than sockets.
///
/// A server on the same machine needs cores of its own. With as many worker threads as CPUs,
/// the workers take the cores the server's event loop runs on; its passes get longer, and a
/// server that comes to new connections last (nginx did) keeps the late ones waiting while the
/// early ones take the whole count: a tail far above what it gives a single-threaded generator
/// (bench/RESULTS.md § "Tail latency on a shared machine").
fn threads_for(cpus: usize, overridden: Option<usize>, sockets: u32, same_machine: bool) -> usize {
    let threads = match overridden {
        Some(n) => n,
        None if same_machine => (cpus / 2).max(1),
        None => cpus,
    };
    threads.min(sockets.max(1) as usize)
}

#[cfg(test)]
mod tests {
    use std::io;

    use super::super::plan::{LoadPlan, Sizing};
    use super::super::refused::REFUSED_ATTEMPTS;
    use super::super::warmup::Warmup;
    use super::*;
    use crate::config::ScenarioConfig;

    /// The only worker of a closed-model run of `count` iterations, with `warmup`.
    fn worker(count: u64, warmup: Option<Load>) -> Worker {
        let config =
            ScenarioConfig { warmup, concurrency: Some(4), load: Load::Count(count), ..ScenarioConfig::DEFAULT };
        let plan = LoadPlan::new(&config, Sizing::Declared);
        let warmup = Warmup::of(&plan);
        let mut worker = Worker::new(WorkerSetup {
            work: WorkSource::new(plan.load, &Arc::new(AtomicU64::new(count)), plan.concurrency),
            stop: Arc::default(),
            progress: Arc::default(),
            origin_offset: warmup.origin_offset,
            warmup: warmup.for_worker(0, 1),
            think_time: None,
            stages: Vec::new(),
            first_user: 0,
            feed: None,
            refusals: Refusals::new(1),
        });
        worker.rebase(Instant::now());
        worker
    }

    fn refused() -> Result<(), Error> {
        let cause = io::Error::from(io::ErrorKind::ConnectionRefused);
        Err(Error::with_source(ErrorKind::Connect, "cannot connect to 127.0.0.1:1", cause))
    }

    /// Runs iterations with `outcome` until the worker starts no more; how many ran, and whether
    /// it gave up.
    fn run(worker: &mut Worker, outcome: fn() -> Result<(), Error>) -> (u64, bool) {
        let mut ran = 0;
        let mut gave_up = false;
        while let Some(measured) = worker.next_iteration(Instant::now()) {
            ran += 1;
            gave_up |= worker.record(outcome(), Instant::now(), Instant::now(), measured);
        }
        (ran, gave_up)
    }

    #[test]
    fn a_worker_whose_attempts_are_all_refused_starts_no_more_iterations() {
        let mut refusing = worker(100_000, None);
        assert_eq!(run(&mut refusing, refused), (REFUSED_ATTEMPTS, true));
        assert_eq!(refusing.gave_up(), Some(REFUSED_ATTEMPTS));
        assert_eq!(refusing.stats.errors.connect, REFUSED_ATTEMPTS, "the refused attempts stay counted");
        // Refused warmup iterations count towards the bound: a warmup does not hammer either.
        let mut warming = worker(100_000, Some(Load::Count(100)));
        assert_eq!(run(&mut warming, refused), (REFUSED_ATTEMPTS, true));
        assert_eq!((warming.warmup.done, warming.stats.errors.connect), (100, REFUSED_ATTEMPTS - 100));
    }

    #[test]
    fn one_success_and_the_worker_runs_its_whole_count() {
        let mut answered = worker(1_000, None);
        assert!(answered.next_iteration(Instant::now()).is_some());
        assert!(!answered.record(Ok(()), Instant::now(), Instant::now(), true));
        assert_eq!(run(&mut answered, refused), (999, false));
        assert_eq!(answered.gave_up(), None);
        // A warmup iteration's success counts as well.
        let mut warmed = worker(1_000, Some(Load::Count(1)));
        assert_eq!(warmed.next_iteration(Instant::now()), Some(false));
        assert!(!warmed.record(Ok(()), Instant::now(), Instant::now(), false));
        assert_eq!(run(&mut warmed, refused), (1_000, false));
        // A worker that gave up leaves the run's own stop flag alone: the run was not interrupted.
        let mut refusing = worker(1_000, None);
        let flag = Arc::clone(&refusing.stop);
        assert!(run(&mut refusing, refused).1);
        assert!(!flag.load(Ordering::Relaxed));
    }

    #[test]
    fn a_server_on_this_machine_keeps_half_the_cores() {
        assert_eq!(threads_for(2, None, 200, true), 1);
        assert_eq!(threads_for(8, None, 200, true), 4);
        assert_eq!(threads_for(1, None, 200, true), 1);
        assert_eq!(threads_for(3, None, 200, true), 1);
        // A remote server gets them all.
        assert_eq!(threads_for(2, None, 200, false), 2);
        assert_eq!(threads_for(8, None, 200, false), 8);
    }

    #[test]
    fn an_override_wins_and_sockets_bound_the_count() {
        assert_eq!(threads_for(2, Some(2), 200, true), 2);
        assert_eq!(threads_for(8, Some(3), 200, false), 3);
        assert_eq!(threads_for(8, None, 3, false), 3);
        assert_eq!(threads_for(8, Some(6), 2, true), 2);
        assert_eq!(threads_for(8, None, 0, true), 1);
    }
}
