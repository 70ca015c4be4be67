//! Runs one scenario: spreads its virtual users over worker threads and hands out the work.
//!
//! Each worker thread runs a current-thread tokio runtime with its own share of the virtual
//! users, so a user's connection, the worker's histogram and its counters are only ever touched
//! by one thread: recording an iteration takes no lock and no read-modify-write atomic. The only
//! shared state on the hot path is the remaining-iterations counter of a count-bounded run,
//! claimed in batches, and the stop flag, which is only read.
//!
//! In the open model (`rate = …`) each worker thread runs a scheduler task that owns its share of
//! the arrivals: with T threads, thread `i` takes arrivals `i, i + T, i + 2T, …` of one global
//! schedule, so the threads interleave (phase offsets) and together meet the rate exactly, each
//! from its own clock. An arrival goes to an idle user of that thread, or is counted as dropped.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::config::{self, Load, Rate, RateStage, Stage, ThinkTime};
use crate::ctx::Ctx;
use crate::error::{Error, ErrorKind};
use crate::progress::{Progress, WorkerProgress};
use crate::registry::Workload;
use crate::report::GeneratorReport;
use crate::selfcheck::{self, WorkerLoad};
use crate::stats::WorkerStats;
use crate::target::Target;
use crate::vu::{UserSlot, VirtualUser};

/// A scenario's load after command-line overrides and target resolution.
#[derive(Debug, Clone)]
pub(crate) struct RunPlan {
    pub(crate) concurrency: u32,
    pub(crate) load: Load,
    /// Open model: the arrival rate; `None` for the closed model.
    pub(crate) rate: Option<Rate>,
    /// Open model: a ramp of the arrival rate instead of `rate` (empty when none).
    pub(crate) rate_stages: &'static [RateStage],
    /// Closed model: a ramp of active users (empty when none); `concurrency` is its highest
    /// target.
    pub(crate) stages: &'static [Stage],
    /// Iterations, or time, run before the measured part and left out of the figures.
    pub(crate) warmup: Option<Load>,
    /// Closed model: each user's pause between iterations.
    pub(crate) think_time: Option<ThinkTime>,
    pub(crate) timeout: Duration,
    pub(crate) target: Target,
    pub(crate) threads: usize,
    pub(crate) show_progress: bool,
}

/// What the executor hands back: merged measurements plus the run's wall time.
#[derive(Debug)]
pub(crate) struct Executed {
    pub(crate) stats: WorkerStats,
    pub(crate) generator: GeneratorReport,
    pub(crate) wall: Duration,
    pub(crate) interrupted: bool,
    /// Iterations run during the warmup (not in `stats`).
    pub(crate) warmup_iterations: u64,
    /// Open model: how long the schedule took from the start to its last arrival's due time or
    /// later dispatch, at least the planned time; `None` in the closed model.
    pub(crate) schedule: Option<Duration>,
}

/// Upper bound on iterations a worker claims at once: large enough that the shared counter is
/// touched rarely, small enough that workers finish together.
const MAX_BATCH: u64 = 256;

/// Where a worker gets permission for its next iteration.
#[derive(Debug)]
enum WorkSource {
    /// Exactly `remaining` iterations in total, shared by all workers; `local` is this worker's
    /// already-claimed share.
    Count { remaining: Arc<AtomicU64>, local: u64, users: u64 },
    /// Start iterations until the deadline: `length` after the start of the measured part.
    Until { deadline: Instant, length: Duration },
}

/// State shared by the virtual users of one worker thread (never across threads).
#[derive(Debug)]
pub(crate) struct WorkerShared {
    work: WorkSource,
    stop: Arc<AtomicBool>,
    pub(crate) stats: WorkerStats,
    progress: Arc<WorkerProgress>,
    done: u64,
    failed: u64,
    last_end: Option<Instant>,
    /// The start of the measured part of the run: timeline seconds count from here.
    origin: Instant,
    /// `origin` after the start of the run, which is only known once every user is set up.
    origin_offset: Duration,
    /// The timeline second iterations ending now fall in, and when it ends.
    second: usize,
    second_ends: Instant,
    /// Closed model: a warmup given as a time.
    warmup_time: Option<Duration>,
    /// Closed model: this worker's share of a warmup given as a count, still to run.
    warmup_left: u64,
    /// Closed model: iterations starting before this instant are warmup.
    warmup_until: Option<Instant>,
    /// Iterations run as warmup, and so not recorded.
    warmup_done: u64,
    /// When this worker's first measured iteration started.
    first_measured: Option<Instant>,
    /// Closed model: each user's pause between iterations.
    pub(crate) think_time: Option<ThinkTime>,
    /// Closed model: a ramp of active users (empty when none).
    stages: &'static [Stage],
    /// Worker threads in the run: user `u` is this worker's user number `u / threads`.
    threads: usize,
    /// Whether each of this worker's users is in a measured (not a warmup) iteration, for its
    /// steps to know whether to count.
    measuring: Vec<bool>,
    /// Open model: users waiting for an arrival, as indices into the scheduler's slots. A user
    /// puts itself back after each iteration. (Indices, not the slots: this struct is built
    /// before it moves to its thread, so it must be `Send`.)
    pub(crate) idle: Vec<usize>,
}

impl WorkerShared {
    /// Whether the calling virtual user may start another iteration (`None` when the work is
    /// done), and whether that iteration is measured (`Some(false)`: a warmup iteration).
    pub(crate) fn next_iteration(&mut self) -> Option<bool> {
        if self.stop.load(Ordering::Relaxed) {
            return None;
        }
        // Warmup iterations claim nothing from the measured count, so `count = N` stays exact.
        if self.warmup_until.is_some_and(|until| Instant::now() < until) {
            return Some(false);
        }
        if self.warmup_left > 0 {
            self.warmup_left -= 1;
            return Some(false);
        }
        self.next_measured().then_some(true)
    }

    /// Fixes the run's instants once its start is known (after every user's setup).
    fn rebase(&mut self, start: Instant) {
        self.origin = start + self.origin_offset;
        self.second = 0;
        self.second_ends = self.origin + Duration::from_secs(1);
        if let WorkSource::Until { deadline, length } = &mut self.work {
            *deadline = self.origin + *length;
        }
        self.warmup_until = self.warmup_time.map(|d| start + d);
    }

    /// Whether users follow a ramp (`stages`).
    pub(crate) fn has_ramp(&self) -> bool {
        !self.stages.is_empty()
    }

    /// With a ramp of users: `None` while `user` is active (or the run is over), else when to
    /// look again (when it becomes active, or the end of the run).
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
        match config::ramp_next_active(self.stages, user, t) {
            Some(at) if at <= t => None,
            Some(at) => Some((self.origin + at).min(deadline)),
            None => Some(deadline),
        }
    }

    /// Marks `user`'s iteration about to start as measured or warmup.
    pub(crate) fn begin(&mut self, user: u32, measured: bool) {
        let local = user as usize / self.threads.max(1);
        if self.measuring.len() <= local {
            self.measuring.resize(local + 1, true);
        }
        self.measuring[local] = measured;
    }

    /// Records a run of step `name` by `user`, unless the user is in a warmup iteration.
    pub(crate) fn record_step(&mut self, user: u32, name: &str, error: Option<ErrorKind>, elapsed: Duration) {
        let local = user as usize / self.threads.max(1);
        if self.measuring.get(local).copied().unwrap_or(true) {
            self.stats.record_step(name, error, elapsed);
        }
    }

    /// When a duration-bound run stops starting iterations; a pause must not outlast it.
    pub(crate) fn deadline(&self) -> Option<Instant> {
        match self.work {
            WorkSource::Until { deadline, .. } => Some(deadline),
            WorkSource::Count { .. } => None,
        }
    }

    fn next_measured(&mut self) -> bool {
        match &mut self.work {
            WorkSource::Until { deadline, .. } => Instant::now() < *deadline,
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
    /// (`measured` false) is only counted as such.
    pub(crate) fn record(&mut self, outcome: Result<(), Error>, start: Instant, end: Instant, measured: bool) {
        if !measured {
            self.warmup_done += 1;
            return;
        }
        if self.first_measured.is_none_or(|first| start < first) {
            self.first_measured = Some(start);
        }
        if outcome.is_err() {
            self.failed += 1;
            self.progress.failed.store(self.failed, Ordering::Relaxed);
        }
        // The timeline's second, recomputed only when an iteration ends past the current one.
        if end >= self.second_ends {
            let since = end.saturating_duration_since(self.origin).as_secs();
            self.second = usize::try_from(since).unwrap_or(usize::MAX);
            self.second_ends = self.origin + Duration::from_secs(since.saturating_add(1));
        }
        self.stats.record(outcome, end.saturating_duration_since(start), Some(self.second));
        self.done += 1;
        // Single writer: a plain store, read by the progress thread on its timer.
        self.progress.done.store(self.done, Ordering::Relaxed);
        self.last_end = Some(end);
    }

    pub(crate) fn absorb(&mut self, counters: &crate::ctx::HttpCounters) {
        self.stats.absorb(counters);
    }
}

/// The number of worker threads for `concurrency` users: one per CPU, never more than users.
/// `LOADBENCH_THREADS` overrides it (for pinning the generator to fewer cores than it has).
pub(crate) fn worker_threads(concurrency: u32) -> usize {
    let cpus = std::env::var("LOADBENCH_THREADS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    cpus.min(concurrency.max(1) as usize)
}

/// Runs `entry` as planned. Fails only when the worker runtimes cannot be built.
pub(crate) fn execute(entry: &Workload, plan: &RunPlan, stop: &Arc<AtomicBool>) -> std::io::Result<Executed> {
    let threads = plan.threads.max(1);
    let runtimes = (0..threads)
        .map(|_| tokio::runtime::Builder::new_current_thread().enable_all().build())
        .collect::<std::io::Result<Vec<_>>>()?;
    let progress_slots: Vec<Arc<WorkerProgress>> = (0..threads).map(|_| Arc::default()).collect();
    let remaining = Arc::new(AtomicU64::new(match plan.load {
        Load::Count(n) => n,
        Load::Duration(_) => 0,
    }));

    // Every user's setup runs before the start; the workers and this thread then meet at the
    // gate and all take the start instant of the last to arrive.
    let gate = Arc::new(StartGate::new(threads + 1));
    let placeholder = Instant::now();
    // Open model: the warmup is the first `warmup_arrivals` of the schedule, and the measured
    // part starts when the next one is due.
    let warmup_arrivals = match (plan.rate, plan.warmup) {
        (Some(_), Some(Load::Count(n))) => n,
        (Some(rate), Some(Load::Duration(d))) => rate.arrivals_within(d),
        _ => 0,
    };
    // Where the measured part starts, when it is known in advance (a warmup count in the closed
    // model ends whenever its iterations do).
    let origin_offset = match (plan.rate, plan.warmup) {
        (Some(rate), Some(_)) => rate.offset(warmup_arrivals),
        (None, Some(Load::Duration(d))) => d,
        _ => Duration::ZERO,
    };
    let handles: std::io::Result<Vec<_>> = runtimes
        .into_iter()
        .enumerate()
        .map(|(index, runtime)| {
            let users: Vec<u32> = (0..plan.concurrency).filter(|u| *u as usize % threads == index).collect();
            let work = match plan.load {
                Load::Count(_) => WorkSource::Count {
                    remaining: Arc::clone(&remaining),
                    local: 0,
                    users: u64::from(plan.concurrency.max(1)),
                },
                Load::Duration(d) => WorkSource::Until { deadline: placeholder, length: d },
            };
            // A warmup count is split over the workers exactly, the first ones taking the rest.
            let warmup_left = match (plan.rate, plan.warmup) {
                (None, Some(Load::Count(n))) => n / threads as u64 + u64::from((index as u64) < n % threads as u64),
                _ => 0,
            };
            let shared = WorkerShared {
                work,
                stop: Arc::clone(stop),
                stats: WorkerStats::new(),
                progress: Arc::clone(&progress_slots[index]),
                done: 0,
                failed: 0,
                last_end: None,
                origin: placeholder,
                origin_offset,
                second: 0,
                second_ends: placeholder,
                warmup_time: match (plan.rate, plan.warmup) {
                    (None, Some(Load::Duration(d))) => Some(d),
                    _ => None,
                },
                warmup_left,
                warmup_until: None,
                warmup_done: 0,
                first_measured: None,
                think_time: plan.think_time,
                stages: plan.stages,
                threads,
                measuring: Vec::new(),
                idle: Vec::new(),
            };
            let open = match (plan.rate, plan.rate_stages) {
                (Some(rate), _) => Some(Schedule::Constant(rate)),
                (None, []) => None,
                (None, stages) => Some(Schedule::Ramp(stages)),
            };
            let arrivals = open.map(|schedule| Arrivals {
                schedule,
                start: placeholder,
                first: index as u64,
                step: threads as u64,
                warmup: warmup_arrivals,
                limit: match plan.load {
                    Load::Count(n) => ArrivalLimit::Count(warmup_arrivals.saturating_add(n)),
                    Load::Duration(d) => ArrivalLimit::Within(origin_offset + d),
                },
            });
            let target = plan.target.clone();
            let timeout = plan.timeout;
            let start = StartLine { gate: Arc::clone(&gate), passed: false };
            let entry = entry.clone();
            std::thread::Builder::new()
                .name(format!("loadbench-worker-{index}"))
                .spawn(move || run_worker(entry, runtime, shared, users, target, timeout, arrivals, start))
        })
        .collect::<std::io::Result<Vec<_>>>();
    // Workers that did start wait for this thread, even if a later one failed to spawn (whose
    // start line left the gate when it was dropped); so pass it before returning any error.
    let start = StartLine { gate, passed: false }.pass();
    let handles = handles?;
    let origin = start + origin_offset;
    let progress =
        plan.show_progress.then(|| Progress::start(Arc::clone(&entry.name), plan.load, progress_slots.clone(), origin));

    let mut merged = WorkerStats::new();
    let mut last_end = start;
    let mut loads = Vec::with_capacity(threads);
    let mut schedule_end = origin;
    let mut first_measured: Option<Instant> = None;
    let mut warmup_iterations = 0;
    for handle in handles {
        match handle.join() {
            Ok(done) => {
                merged.merge(done.stats);
                last_end = last_end.max(done.last_end.unwrap_or(start));
                schedule_end = schedule_end.max(done.schedule_end.unwrap_or(origin));
                first_measured = match (first_measured, done.first_measured) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
                warmup_iterations += done.warmup_done;
                loads.push(done.load);
            }
            // run_worker catches virtual-user panics itself; reaching this means the runtime
            // itself failed, which we report as a scenario error rather than crash the run.
            Err(_) => {
                merged.record(Err(Error::new(ErrorKind::Scenario, "a worker thread panicked")), Duration::ZERO, None)
            }
        }
    }
    let open = plan.rate.is_some() || !plan.rate_stages.is_empty();
    let schedule = open.then(|| {
        let planned = match (plan.load, plan.rate) {
            (Load::Count(n), Some(rate)) => {
                rate.offset(warmup_arrivals.saturating_add(n)) - rate.offset(warmup_arrivals)
            }
            (Load::Count(_), None) => Duration::ZERO,
            (Load::Duration(d), _) => d,
        };
        schedule_end.saturating_duration_since(origin).max(planned)
    });
    if let Some(progress) = progress {
        progress.finish();
    }
    // The measured part: from its start (for a closed-model warmup count, the first measured
    // iteration's) to the end of the last iteration.
    let measured_from = match (plan.rate, plan.warmup) {
        (None, Some(Load::Count(_))) => first_measured.unwrap_or(start),
        _ => origin,
    };
    let wall = last_end.saturating_duration_since(measured_from);
    Ok(Executed {
        stats: merged,
        // The workers' CPU time is counted from the start, warmup included: so is the time here.
        generator: selfcheck::assess(&loads, last_end.saturating_duration_since(start)),
        wall,
        interrupted: stop.load(Ordering::Relaxed),
        warmup_iterations,
        schedule,
    })
}

/// Where the workers and the executor's thread meet once every user is set up: the last to
/// arrive takes the run's start instant and lets everyone go. Used once per run, never per
/// iteration, so a mutex is fine.
#[derive(Debug)]
struct StartGate {
    /// Parties still to arrive, and the start once they all have.
    state: std::sync::Mutex<(usize, Option<Instant>)>,
    opened: std::sync::Condvar,
}

impl StartGate {
    fn new(parties: usize) -> StartGate {
        StartGate { state: std::sync::Mutex::new((parties, None)), opened: std::sync::Condvar::new() }
    }

    /// Arrives; with `wait`, blocks until everyone has and returns the start.
    fn arrive(&self, wait: bool) -> Instant {
        let mut state = self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        state.0 = state.0.saturating_sub(1);
        if state.0 == 0 && state.1.is_none() {
            state.1 = Some(Instant::now());
            self.opened.notify_all();
        }
        while wait && state.1.is_none() {
            state = self.opened.wait(state).unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        state.1.unwrap_or_else(Instant::now)
    }
}

/// One party's place at the [`StartGate`]. Dropped without passing (a worker that panicked, or
/// whose thread failed to spawn), it leaves the gate without waiting, so nobody waits forever.
#[derive(Debug)]
struct StartLine {
    gate: Arc<StartGate>,
    passed: bool,
}

impl StartLine {
    /// Waits for everyone, then returns the run's start.
    fn pass(mut self) -> Instant {
        self.passed = true;
        self.gate.arrive(true)
    }
}

impl Drop for StartLine {
    fn drop(&mut self) {
        if !self.passed {
            self.gate.arrive(false);
        }
    }
}

/// One worker thread's share of an open model's arrivals.
#[derive(Debug, Clone, Copy)]
struct Arrivals {
    schedule: Schedule,
    start: Instant,
    /// This worker's first arrival index in the global schedule.
    first: u64,
    /// Worker threads: the distance between this worker's arrival indices.
    step: u64,
    /// Arrivals with an index below this are warmup.
    warmup: u64,
    limit: ArrivalLimit,
}

/// When the arrivals of an open model are due.
#[derive(Debug, Clone, Copy)]
enum Schedule {
    /// At a constant rate (`rate = …`).
    Constant(Rate),
    /// Along a ramp of rates (`rate_stages = […]`).
    Ramp(&'static [RateStage]),
}

impl Schedule {
    /// When arrival `index` is due after the start; `None` after a ramp's end.
    fn offset(&self, index: u64) -> Option<Duration> {
        match self {
            Schedule::Constant(rate) => Some(rate.offset(index)),
            Schedule::Ramp(stages) => config::rate_stages_offset(stages, index),
        }
    }
}

/// Which arrivals of the global schedule exist.
#[derive(Debug, Clone, Copy)]
enum ArrivalLimit {
    /// Indices below this count.
    Count(u64),
    /// Those due before this much time has passed.
    Within(Duration),
}

/// How early the scheduler asks to be woken. tokio's timer rounds a deadline up to the next
/// millisecond; asking 1 ms early makes the wake-up land within a millisecond before the due
/// time instead of after it, and an iteration dispatched early is timed from its actual start.
const TIMER_SLACK: Duration = Duration::from_millis(1);

/// Hands this worker's arrivals to idle users at their due times; returns when the last one is
/// due (or the run is stopped), having closed every user's slot.
async fn schedule(arrivals: Arrivals, slots: Vec<Rc<UserSlot>>, worker: Rc<RefCell<WorkerShared>>) -> Instant {
    let Arrivals { schedule, start, first, step, warmup, limit } = arrivals;
    let origin = start + schedule.offset(warmup).unwrap_or_default();
    let mut index = first;
    while let Some(offset) = schedule.offset(index) {
        let exists = match limit {
            ArrivalLimit::Count(n) => index < n,
            ArrivalLimit::Within(d) => offset < d,
        };
        if !exists {
            break;
        }
        let due = start + offset;
        let now = Instant::now();
        if due > now + TIMER_SLACK {
            tokio::time::sleep_until((due - TIMER_SLACK).into()).await;
        }
        let mut shared = worker.borrow_mut();
        if shared.stop.load(Ordering::Relaxed) {
            break;
        }
        match shared.idle.pop().and_then(|user| slots.get(user)) {
            // Timed from the due time when late (so a stalled server or a late generator shows
            // in the latency, as in wrk2), from the actual start when woken early.
            Some(slot) => slot.start(due.min(Instant::now()), index >= warmup),
            // A warmup arrival that finds no user is neither run nor measured.
            None if index < warmup => {}
            None => {
                let second = usize::try_from(due.saturating_duration_since(origin).as_secs()).unwrap_or(usize::MAX);
                shared.stats.record_dropped(second);
            }
        }
        drop(shared);
        index += step;
    }
    let end = Instant::now();
    for slot in &slots {
        slot.close();
    }
    end
}

/// What a worker thread hands back when it is done.
struct WorkerDone {
    stats: WorkerStats,
    last_end: Option<Instant>,
    /// Open model: when its scheduler dispatched its last arrival.
    schedule_end: Option<Instant>,
    first_measured: Option<Instant>,
    warmup_done: u64,
    load: WorkerLoad,
}

/// Creates this worker's users and runs their setup, all at once; returns the users whose setup
/// succeeded (every user when there is none).
async fn set_up(
    entry: &Workload,
    users: Vec<u32>,
    target: &Rc<Target>,
    timeout: Duration,
    worker: &Rc<RefCell<WorkerShared>>,
) -> Vec<Ctx> {
    let ctxs = users.into_iter().map(|user| Ctx::new(Rc::clone(target), timeout, user));
    let Some(setup) = entry.setup else {
        return ctxs.collect();
    };
    let tasks: Vec<_> = ctxs
        .map(|mut ctx| {
            tokio::task::spawn_local(async move {
                let outcome = setup(&mut ctx).await;
                (ctx, outcome)
            })
        })
        .collect();
    let mut ready = Vec::with_capacity(tasks.len());
    for task in tasks {
        let (ctx, outcome) = match task.await {
            Ok((ctx, outcome)) => (Some(ctx), outcome),
            Err(_) => (None, Err(Error::new(ErrorKind::Scenario, "the setup panicked"))),
        };
        worker.borrow_mut().stats.setup.record(&outcome);
        if let (Some(mut ctx), Ok(())) = (ctx, outcome) {
            // The setup's exchanges are not the scenario's: only its connection, which the
            // user keeps, stays counted.
            ctx.counters.responses = 0;
            ctx.counters.bytes_received = 0;
            ctx.counters.status.clear();
            ready.push(ctx);
        }
    }
    ready
}

#[allow(clippy::too_many_arguments)] // each is one piece of the plan; a struct would only rename them
fn run_worker(
    entry: Workload,
    runtime: tokio::runtime::Runtime,
    shared: WorkerShared,
    users: Vec<u32>,
    target: Target,
    timeout: Duration,
    mut arrivals: Option<Arrivals>,
    start_line: StartLine,
) -> WorkerDone {
    let local = tokio::task::LocalSet::new();
    let lag = Rc::new(RefCell::new(selfcheck::lag_histogram()));
    let probe_lag = Rc::clone(&lag);
    let shared = Rc::new(RefCell::new(shared));
    let target = Rc::new(target);
    let worker = Rc::clone(&shared);
    let steps_guard = crate::steps::enter(Rc::clone(&shared));
    let (schedule_end, cpu_at_start) = local.block_on(&runtime, async move {
        let probe = tokio::task::spawn_local(selfcheck::probe_lag(probe_lag));
        let ready = set_up(&entry, users, &target, timeout, &worker).await;
        // Everyone is set up (or failed to be): the run starts now, on every worker at once.
        let start = tokio::task::spawn_blocking(move || start_line.pass()).await.unwrap_or_else(|_| Instant::now());
        worker.borrow_mut().rebase(start);
        // The self-check weighs CPU time against the run's time, which setups are not part of.
        let cpu_at_start = selfcheck::thread_cpu_time();
        if let Some(arrivals) = &mut arrivals {
            arrivals.start = start;
        }
        let mut slots = Vec::new();
        let tasks: Vec<_> = ready
            .into_iter()
            .map(|ctx| {
                let slot = arrivals.map(|_| {
                    let slot = Rc::new(UserSlot::default());
                    slots.push(Rc::clone(&slot));
                    (slots.len() - 1, slot)
                });
                tokio::task::spawn_local((entry.run)(VirtualUser { ctx, worker: Rc::clone(&worker), slot }))
            })
            .collect();
        // Every user starts idle, the first user on top so that a light rate keeps reusing the
        // same few connections.
        worker.borrow_mut().idle = (0..slots.len()).rev().collect();
        let scheduler =
            arrivals.map(|arrivals| tokio::task::spawn_local(schedule(arrivals, slots, Rc::clone(&worker))));
        let schedule_end = match scheduler {
            Some(scheduler) => scheduler.await.ok(),
            None => None,
        };
        let mut finished = Vec::with_capacity(tasks.len());
        for task in tasks {
            match task.await {
                Ok(ctx) => finished.push(ctx),
                Err(err) => {
                    // A panicking body kills its virtual user mid-iteration; count that
                    // iteration as failed so the totals still add up, and let the other users
                    // go on. (Its teardown cannot run: its `Ctx` went down with it.)
                    let message =
                        if err.is_panic() { "a virtual user panicked" } else { "a virtual user was cancelled" };
                    let now = Instant::now();
                    worker.borrow_mut().record(Err(Error::new(ErrorKind::Scenario, message)), now, now, true);
                }
            }
        }
        if let Some(teardown) = entry.teardown {
            let tasks: Vec<_> = finished
                .into_iter()
                .map(|mut ctx| tokio::task::spawn_local(async move { teardown(&mut ctx).await }))
                .collect();
            for task in tasks {
                let outcome =
                    task.await.unwrap_or_else(|_| Err(Error::new(ErrorKind::Scenario, "the teardown panicked")));
                worker.borrow_mut().stats.teardown.record(&outcome);
            }
        }
        probe.abort();
        (schedule_end, cpu_at_start)
    });
    let cpu = match (cpu_at_start, selfcheck::thread_cpu_time()) {
        (Some(start), Some(end)) => Some(end.saturating_sub(start)),
        _ => None,
    };
    let load = WorkerLoad { cpu, lag_us: lag.replace(selfcheck::lag_histogram()) };
    // Connection tasks still parked in the LocalSet hold no measurements; drop them with it.
    drop(local);
    drop(steps_guard);
    let mut shared = shared.borrow_mut();
    WorkerDone {
        stats: std::mem::replace(&mut shared.stats, WorkerStats::new()),
        last_end: shared.last_end,
        schedule_end,
        first_measured: shared.first_measured,
        warmup_done: shared.warmup_done,
        load,
    }
}
