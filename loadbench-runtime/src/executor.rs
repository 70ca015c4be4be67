//! Runs one scenario: spreads its virtual users over worker threads and hands out the work.
//!
//! Each worker thread runs a current-thread tokio runtime with its own share of the virtual
//! users, so a user's connection, the worker's histogram and its counters are only ever touched
//! by one thread: recording an iteration takes no lock and no read-modify-write atomic. The only
//! shared state on the hot path is the remaining-iterations counter of a count-bounded run,
//! claimed in batches, and the stop flag, which is only read.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::config::Load;
use crate::ctx::Ctx;
use crate::error::{Error, ErrorKind};
use crate::progress::{Progress, WorkerProgress};
use crate::registry::ScenarioEntry;
use crate::report::GeneratorReport;
use crate::selfcheck::{self, WorkerLoad};
use crate::stats::WorkerStats;
use crate::target::Target;
use crate::vu::VirtualUser;

/// A scenario's load after command-line overrides and target resolution.
#[derive(Debug, Clone)]
pub(crate) struct RunPlan {
    pub(crate) concurrency: u32,
    pub(crate) load: Load,
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
    /// Start iterations until the deadline.
    Until { deadline: Instant },
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
}

impl WorkerShared {
    /// Whether the calling virtual user may start another iteration.
    pub(crate) fn next_iteration(&mut self) -> bool {
        if self.stop.load(Ordering::Relaxed) {
            return false;
        }
        match &mut self.work {
            WorkSource::Until { deadline } => Instant::now() < *deadline,
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

    pub(crate) fn record(&mut self, outcome: Result<(), Error>, start: Instant, end: Instant) {
        if outcome.is_err() {
            self.failed += 1;
            self.progress.failed.store(self.failed, Ordering::Relaxed);
        }
        self.stats.record(outcome, end - start);
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
pub(crate) fn execute(
    entry: &'static ScenarioEntry,
    plan: &RunPlan,
    stop: &Arc<AtomicBool>,
) -> std::io::Result<Executed> {
    let threads = plan.threads.max(1);
    let runtimes = (0..threads)
        .map(|_| tokio::runtime::Builder::new_current_thread().enable_all().build())
        .collect::<std::io::Result<Vec<_>>>()?;
    let progress_slots: Vec<Arc<WorkerProgress>> = (0..threads).map(|_| Arc::default()).collect();
    let remaining = Arc::new(AtomicU64::new(match plan.load {
        Load::Count(n) => n,
        Load::Duration(_) => 0,
    }));

    let start = Instant::now();
    let progress = plan.show_progress.then(|| Progress::start(entry.name, plan.load, progress_slots.clone(), start));
    let handles: Vec<_> = runtimes
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
                Load::Duration(d) => WorkSource::Until { deadline: start + d },
            };
            let shared = WorkerShared {
                work,
                stop: Arc::clone(stop),
                stats: WorkerStats::new(),
                progress: Arc::clone(&progress_slots[index]),
                done: 0,
                failed: 0,
                last_end: None,
            };
            let target = plan.target.clone();
            let timeout = plan.timeout;
            std::thread::Builder::new()
                .name(format!("loadbench-worker-{index}"))
                .spawn(move || run_worker(entry, runtime, shared, users, target, timeout))
        })
        .collect::<std::io::Result<Vec<_>>>()?;

    let mut merged = WorkerStats::new();
    let mut last_end = start;
    let mut loads = Vec::with_capacity(threads);
    for handle in handles {
        match handle.join() {
            Ok((stats, end, load)) => {
                merged.merge(stats);
                last_end = last_end.max(end.unwrap_or(start));
                loads.push(load);
            }
            // run_worker catches virtual-user panics itself; reaching this means the runtime
            // itself failed, which we report as a scenario error rather than crash the run.
            Err(_) => merged.record(Err(Error::new(ErrorKind::Scenario, "a worker thread panicked")), Duration::ZERO),
        }
    }
    if let Some(progress) = progress {
        progress.finish();
    }
    let wall = last_end - start;
    Ok(Executed {
        stats: merged,
        generator: selfcheck::assess(&loads, wall),
        wall,
        interrupted: stop.load(Ordering::Relaxed),
    })
}

fn run_worker(
    entry: &'static ScenarioEntry,
    runtime: tokio::runtime::Runtime,
    shared: WorkerShared,
    users: Vec<u32>,
    target: Target,
    timeout: Duration,
) -> (WorkerStats, Option<Instant>, WorkerLoad) {
    let cpu_at_start = selfcheck::thread_cpu_time();
    let local = tokio::task::LocalSet::new();
    let lag = Rc::new(RefCell::new(selfcheck::lag_histogram()));
    let probe_lag = Rc::clone(&lag);
    let shared = Rc::new(RefCell::new(shared));
    let target = Rc::new(target);
    let worker = Rc::clone(&shared);
    local.block_on(&runtime, async move {
        let probe = tokio::task::spawn_local(selfcheck::probe_lag(probe_lag));
        let tasks: Vec<_> = users
            .into_iter()
            .map(|user| {
                let ctx = Ctx::new(Rc::clone(&target), timeout, user);
                tokio::task::spawn_local((entry.run)(VirtualUser { ctx, worker: Rc::clone(&worker) }))
            })
            .collect();
        for task in tasks {
            if let Err(err) = task.await {
                // A panicking body kills its virtual user mid-iteration; count that iteration
                // as failed so the totals still add up, and let the other users go on.
                let message = if err.is_panic() { "a virtual user panicked" } else { "a virtual user was cancelled" };
                let now = Instant::now();
                worker.borrow_mut().record(Err(Error::new(ErrorKind::Scenario, message)), now, now);
            }
        }
        probe.abort();
    });
    let cpu = match (cpu_at_start, selfcheck::thread_cpu_time()) {
        (Some(start), Some(end)) => Some(end.saturating_sub(start)),
        _ => None,
    };
    let load = WorkerLoad { cpu, lag_us: lag.replace(selfcheck::lag_histogram()) };
    // Connection tasks still parked in the LocalSet hold no measurements; drop them with it.
    drop(local);
    let mut shared = shared.borrow_mut();
    (std::mem::replace(&mut shared.stats, WorkerStats::new()), shared.last_end, load)
}
