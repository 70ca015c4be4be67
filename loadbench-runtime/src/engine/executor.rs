//! Runs one load plan: spreads its virtual users over worker threads, starts them together and
//! merges what they measured.
//!
//! Each worker thread runs a current-thread tokio runtime with its own share of the users (user
//! `u` on thread `u % threads`, counted from the plan's first user, which a shard of a distributed
//! run numbers after the shards before it) and its own [`Worker`] state, so nothing on the per-iteration path
//! crosses threads but the shared count and the stop flag (see `worker`). Every user's setup runs
//! before the start; the workers and this thread then meet at the [`StartGate`], and the run's
//! time counts from there. A duration-bound run, or one stopped by a signal, ends at most its
//! grace period later: what is still in flight then is cancelled (see `halt`).

use std::cell::RefCell;
use std::pin::pin;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant, SystemTime};

use super::arrivals::{self, Arrivals};
use super::halt::{self, Halt, Phase, StopFlags};
use super::plan::LoadPlan;
use super::progress::{BoardPlace, Progress, Watched, WorkerProgress};
use super::refused::Refusals;
use super::registry::Workload;
use super::selfcheck::{self, WorkerLoad};
use super::start_gate::{StartGate, StartLine};
use super::stats::WorkerStats;
use super::userset::Running;
use super::vu::{UserSlot, VirtualUser};
use super::warmup::Warmup;
use super::worker::{WorkSource, Worker, WorkerSetup};
use crate::config::{Load, Transport};
use crate::error::{Error, ErrorKind};
use crate::feed::FeedCursor;
use crate::http::{Ctx, Lane, QuicEndpoints, Recorder, SessionOptions, Target, read_delay};
use crate::report::{GeneratorReport, RemoteWriteReport};

/// Where and how a plan runs: against which server, on how many threads, with or without a
/// progress display (and where its line goes).
#[derive(Debug, Clone)]
pub(crate) struct Placement {
    pub(crate) target: Target,
    pub(crate) threads: usize,
    pub(crate) progress: Option<BoardPlace>,
    /// Where the live metrics go (`--remote-write`), when they are pushed.
    #[cfg(feature = "remote-write")]
    pub(crate) remote_write: Option<super::LivePush>,
}

/// What the executor hands back: merged measurements plus the run's times.
#[derive(Debug)]
pub(crate) struct Executed {
    pub(crate) stats: WorkerStats,
    pub(crate) generator: GeneratorReport,
    /// The measured part's wall time: from its start to the end of the last iteration.
    pub(crate) wall: Duration,
    /// The wall clock when the workers passed the start gate: what lines up the timelines of a
    /// distributed run's shards, each measured on its own machine.
    pub(crate) started: SystemTime,
    pub(crate) interrupted: bool,
    /// Iterations run during the warmup (not in `stats`).
    pub(crate) warmup_iterations: u64,
    /// Open model: how long the schedule took from the start to its last arrival's due time or
    /// later dispatch, at least the planned time; `None` in the closed model.
    pub(crate) schedule: Option<Duration>,
    /// When a worker gave up because every attempt it made was refused (nothing listens at the
    /// target): the refused attempts of the workers that did. They started no more iterations.
    pub(crate) refused: Option<u64>,
    /// What the live metrics pushed and dropped, when they were pushed.
    pub(crate) remote_write: Option<RemoteWriteReport>,
}

/// Runs `workload` as `plan` says, where `placement` says, until the plan's load is done or `stop`
/// says (then within the plan's grace period). Fails only when the worker runtimes cannot be
/// built.
pub(crate) fn execute(
    workload: &Workload,
    plan: &LoadPlan,
    placement: &Placement,
    stop: &StopFlags,
) -> std::io::Result<Executed> {
    super::panics::quiet_repeated_panics();
    let threads = placement.threads.max(1);
    let runtimes = (0..threads)
        .map(|_| tokio::runtime::Builder::new_current_thread().enable_all().build())
        .collect::<std::io::Result<Vec<_>>>()?;
    let progress_slots: Vec<Arc<WorkerProgress>> = (0..threads).map(|_| Arc::default()).collect();
    let remaining = Arc::new(AtomicU64::new(match plan.load {
        Load::Count(n) => n,
        Load::Duration(_) => 0,
    }));
    let warmup = Warmup::of(plan);
    // Each worker's steps and named requests, copied for the live metrics every interval.
    #[cfg(feature = "remote-write")]
    let boards: Option<(Vec<super::remote_write::rows::RowBoard>, Duration)> = placement
        .remote_write
        .as_ref()
        .map(|push| ((0..threads).map(|_| Arc::default()).collect(), push.config.interval));
    let gate = StartGate::new(threads + 1);
    let handles: std::io::Result<Vec<_>> = runtimes
        .into_iter()
        .enumerate()
        .map(|(index, runtime)| {
            let users: Vec<u32> = (0..plan.concurrency).filter(|u| *u as usize % threads == index).collect();
            // Shared connections spread as the users are, the remainder on the first threads;
            // HTTP/2 without `connections` gives each user a connection of its own.
            let lanes = plan.transport.shares_connections().then(|| {
                let count = match plan.transport.connections {
                    Some(n) => n / threads as u32 + u32::from((index as u32) < n % threads as u32),
                    None => users.len() as u32,
                };
                (plan.transport, count)
            });
            let worker = Worker::new(WorkerSetup {
                work: WorkSource::new(plan.load, &remaining, plan.concurrency),
                stop: Arc::clone(&stop.graceful),
                progress: Arc::clone(&progress_slots[index]),
                origin_offset: warmup.origin_offset,
                warmup: warmup.for_worker(index, threads),
                think_time: plan.think_time,
                stages: plan.stages.clone(),
                first_user: plan.first_user,
                feed: workload.feed.as_ref().filter(|feed| feed.stops()).map(Arc::clone),
                refusals: Refusals::new(threads),
            });
            let thread = WorkerThread {
                workload: workload.clone(),
                users,
                first_user: plan.first_user,
                lanes,
                target: placement.target.clone(),
                timeout: plan.timeout,
                max_body: plan.max_body,
                session: plan.session,
                stop: stop.clone(),
                grace: plan.grace,
                arrivals: Arrivals::for_worker(plan, &warmup, index, threads),
                start_line: gate.line(),
                #[cfg(feature = "remote-write")]
                rows: boards.as_ref().map(|(boards, interval)| (Arc::clone(&boards[index]), *interval)),
            };
            std::thread::Builder::new()
                .name(format!("loadbench-worker-{index}"))
                .spawn(move || thread.run(runtime, worker))
        })
        .collect::<std::io::Result<Vec<_>>>();
    // Workers that did start wait for this thread, even if a later one failed to spawn (whose
    // start line left the gate when it was dropped); so pass it before returning any error.
    let start = gate.line().pass();
    // Read right after the gate, and set back by the time since: the wall clock of the start.
    let started = SystemTime::now().checked_sub(start.elapsed()).unwrap_or_else(SystemTime::now);
    let handles = handles?;
    let origin = start + warmup.origin_offset;
    let progress = placement.progress.clone().map(|slot| {
        let watched = Watched {
            name: Arc::clone(&workload.name),
            load: plan.load,
            concurrency: plan.concurrency,
            stages: plan.stages.clone(),
            open: plan.is_open(),
        };
        Progress::start(slot, watched, progress_slots.clone(), origin)
    });
    #[cfg(feature = "remote-write")]
    let pusher = placement.remote_write.as_ref().map(|push| {
        let boards = boards.map(|(boards, _)| boards).unwrap_or_default();
        super::remote_write::Pusher::start(push, &workload.name, progress_slots.clone(), boards)
    });

    let mut merged = WorkerStats::new();
    let mut last_end = start;
    let mut loads = Vec::with_capacity(threads);
    let mut schedule_end = origin;
    let mut first_measured: Option<Instant> = None;
    let mut warmup_iterations = 0;
    let mut refused: Option<u64> = None;
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
                if let Some(n) = done.refused {
                    refused = Some(refused.unwrap_or(0) + n);
                }
                loads.push(done.load);
            }
            // The worker catches virtual-user panics itself; reaching this means the runtime
            // itself failed, which we report as a scenario error rather than crash the run.
            Err(_) => {
                merged.record(Err(Error::new(ErrorKind::Scenario, "a worker thread panicked")), Duration::ZERO, None)
            }
        }
    }
    if let Some(progress) = progress {
        progress.finish();
    }
    // Every worker is done: the last push holds the final counts.
    #[cfg(feature = "remote-write")]
    let remote_write = pusher.map(|pusher| pusher.finish(super::remote_write::rows::snapshot(&merged)));
    #[cfg(not(feature = "remote-write"))]
    let remote_write = None;
    // The measured part: from its start (for a closed-model warmup count, the first measured
    // iteration's) to the end of the last iteration.
    let measured_from = if warmup.ends_with_its_iterations() { first_measured.unwrap_or(start) } else { origin };
    let latency_p99_us = (!merged.latency_ns.is_empty()).then(|| merged.latency_ns.value_at_quantile(0.99) / 1_000);
    Ok(Executed {
        stats: merged,
        // The workers' CPU time is counted from the start, warmup included: so is the time here.
        generator: selfcheck::assess(&loads, last_end.saturating_duration_since(start), latency_p99_us),
        wall: last_end.saturating_duration_since(measured_from),
        started,
        interrupted: stop.any(),
        warmup_iterations,
        schedule: plan.is_open().then(|| arrivals::schedule_length(plan, &warmup, origin, schedule_end)),
        refused,
        remote_write,
    })
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
    /// The refused attempts of a worker that gave up because of them.
    refused: Option<u64>,
}

/// What one worker thread runs: its users of the workload, against the target.
struct WorkerThread {
    workload: Workload,
    /// This thread's users, numbered from 0 within the plan.
    users: Vec<u32>,
    /// What `ctx.user()` adds to those numbers: the plan's first user.
    first_user: u32,
    /// The shared connections of this thread's users, when they do not own one each.
    lanes: Option<(Transport, u32)>,
    target: Target,
    timeout: Duration,
    /// Most bytes of a response body a request keeps.
    max_body: u64,
    /// Each user's cookie jar and the redirects its requests follow.
    session: SessionOptions,
    stop: StopFlags,
    grace: Duration,
    arrivals: Option<Arrivals>,
    start_line: StartLine,
    /// Where this worker copies its steps and named requests for the live metrics, and how often.
    #[cfg(feature = "remote-write")]
    rows: Option<(super::remote_write::rows::RowBoard, Duration)>,
}

impl WorkerThread {
    /// Sets up this thread's users, waits at the start line, runs them (and, in the open model,
    /// its scheduler) to the end, tears them down and hands back what it measured.
    fn run(self, runtime: tokio::runtime::Runtime, worker: Worker) -> WorkerDone {
        let WorkerThread {
            workload,
            users,
            first_user,
            lanes,
            target,
            timeout,
            max_body,
            session,
            stop,
            grace,
            mut arrivals,
            start_line,
            #[cfg(feature = "remote-write")]
            rows,
        } = self;
        let local = tokio::task::LocalSet::new();
        let lag = Rc::new(RefCell::new(selfcheck::micros_histogram()));
        let probe_lag = Rc::clone(&lag);
        let shared = Rc::new(RefCell::new(worker));
        let target = Rc::new(target);
        let worker = Rc::clone(&shared);
        let (schedule_end, times_at_start) = local.block_on(&runtime, async move {
            let probe = tokio::task::spawn_local(selfcheck::probe_lag(probe_lag));
            // One slot per user, and the scheduler's after them.
            let halt = Halt::new(users.len() + 1);
            let supervisor = tokio::task::spawn_local(halt::supervise(Rc::clone(&halt), stop, grace));
            #[cfg(feature = "remote-write")]
            let rows = rows.map(|(board, interval)| {
                tokio::task::spawn_local(super::remote_write::rows::publish(Rc::clone(&worker), board, interval))
            });
            let endpoints = Rc::<QuicEndpoints>::default();
            let lanes = lanes
                .map(|(transport, count)| Lane::for_worker(&target, transport, count, &endpoints))
                .unwrap_or_default();
            let users = users.into_iter().map(|user| first_user.saturating_add(user)).collect();
            let ready = set_up(&workload, users, &target, (timeout, max_body, session), &lanes, &worker, &halt).await;
            // Everyone is set up (or failed to be): the run starts now, on every worker at once.
            let start = tokio::task::spawn_blocking(move || start_line.pass()).await.unwrap_or_else(|_| Instant::now());
            worker.borrow_mut().rebase(start);
            // What a duration-bound run still has in flight at its end gets the grace period.
            if let Some(deadline) = worker.borrow().deadline() {
                halt.cancel_by(deadline + grace);
            }
            // The self-check weighs CPU time against the run's time, which setups are not part of;
            // nor are the reads they made. Sampling starts first, so that making its histogram is
            // not counted as the run's CPU (a one-iteration run lasts microseconds).
            read_delay::begin(selfcheck::micros_histogram());
            let times_at_start = selfcheck::thread_times();
            if let Some(arrivals) = &mut arrivals {
                arrivals.start = start;
            }
            let mut slots = Vec::new();
            let scheduler_slot = ready.len();
            let users: Vec<_> = ready
                .into_iter()
                .enumerate()
                .map(|(index, ctx)| {
                    let slot = arrivals.as_ref().map(|_| {
                        let slot = Rc::new(UserSlot::default());
                        slots.push(Rc::clone(&slot));
                        (slots.len() - 1, slot)
                    });
                    let halt = Rc::clone(&halt);
                    let user = VirtualUser { ctx, worker: Rc::clone(&worker), slot, halt, index };
                    (workload.run)(user)
                })
                .collect();
            // Users on shared connections run as one task (`userset`).
            let running = Running::spawn(users, !lanes.is_empty());
            // Every user starts idle, the first user on top so that a light rate keeps reusing the
            // same few connections.
            worker.borrow_mut().idle = (0..slots.len()).rev().collect();
            let scheduler = arrivals.map(|arrivals| {
                let closing = slots.clone();
                let schedule = arrivals::schedule(arrivals, slots, Rc::clone(&worker));
                let halt = Rc::clone(&halt);
                tokio::task::spawn_local(async move {
                    // A stop ends the scheduler's sleep until the next arrival at once.
                    let end = halt.until(scheduler_slot, Phase::Stopping, pin!(schedule)).await;
                    end.unwrap_or_else(|| {
                        for slot in &closing {
                            slot.close();
                        }
                        Instant::now()
                    })
                })
            });
            let schedule_end = match scheduler {
                Some(scheduler) => scheduler.await.ok(),
                None => None,
            };
            let ends = running.join().await;
            let mut finished = Vec::with_capacity(ends.len());
            for end in ends {
                match end {
                    Ok(ctx) => finished.push(ctx),
                    // A body's panic is caught per iteration (`panics`); a panic anywhere else in a
                    // user's loop kills it mid-iteration: count that iteration as failed so the
                    // totals still add up, and let the other users go on. (Its teardown cannot
                    // run: its `Ctx` went down with it.)
                    Err(why) => worker.borrow_mut().record_lost(why),
                }
            }
            if let Some(teardown) = workload.teardown {
                // A user whose iteration was cancelled left its connection mid-exchange: it is
                // not torn down. The others are, within what is left of the grace period.
                let mut cancelled = std::mem::take(&mut worker.borrow_mut().cancelled_users);
                cancelled.sort_unstable();
                let tasks: Vec<_> = finished
                    .into_iter()
                    .enumerate()
                    .filter(|(_, ctx)| cancelled.binary_search(&ctx.user()).is_err())
                    .map(|(index, mut ctx)| {
                        let halt = Rc::clone(&halt);
                        tokio::task::spawn_local(async move {
                            halt.until(index, Phase::Cancelled, pin!(teardown(&mut ctx))).await
                        })
                    })
                    .collect();
                for task in tasks {
                    let outcome = match task.await {
                        Ok(Some(outcome)) => outcome,
                        // Cut short by the end of the grace period: it did not finish.
                        Ok(None) => continue,
                        Err(_) => Err(Error::new(ErrorKind::Scenario, "the teardown panicked")),
                    };
                    worker.borrow_mut().stats.teardown.record(&outcome);
                }
            }
            supervisor.abort();
            probe.abort();
            #[cfg(feature = "remote-write")]
            if let Some(rows) = rows {
                rows.abort();
            }
            (schedule_end, times_at_start)
        });
        let used = times_at_start.zip(selfcheck::thread_times()).map(|(start, end)| end.since(start));
        let load = WorkerLoad {
            cpu: used.map(|u| u.cpu),
            waited: used.and_then(|u| u.waited),
            lag_us: lag.replace(selfcheck::micros_histogram()),
            read_delay_us: read_delay::end(),
        };
        // Connection tasks still parked in the LocalSet hold no measurements; drop them with it.
        drop(local);
        let mut worker = shared.borrow_mut();
        WorkerDone {
            stats: std::mem::replace(&mut worker.stats, WorkerStats::new()),
            last_end: worker.last_end,
            schedule_end,
            first_measured: worker.first_measured,
            warmup_done: worker.warmup.done,
            load,
            refused: worker.gave_up(),
        }
    }
}

/// Creates this worker's users and runs their setup, all at once; returns the users whose setup
/// succeeded (every user when there is none).
async fn set_up(
    workload: &Workload,
    users: Vec<u32>,
    target: &Rc<Target>,
    (timeout, max_body, session): (Duration, u64, SessionOptions),
    lanes: &[Rc<Lane>],
    worker: &Rc<RefCell<Worker>>,
    halt: &Rc<Halt>,
) -> Vec<Ctx> {
    let sink: Rc<dyn Recorder> = Rc::clone(worker) as Rc<dyn Recorder>;
    let ctxs = users.into_iter().enumerate().map(|(index, user)| {
        let feed = workload.feed.as_ref().map(|feed| FeedCursor::new(Arc::clone(feed), user));
        // Users take the lanes in turn, so that each lane has as many users as the others, give
        // or take one.
        let lane = (!lanes.is_empty()).then(|| Rc::clone(&lanes[index % lanes.len()]));
        Ctx::new(Rc::clone(target), timeout, user, Some(Rc::clone(&sink)))
            .with_max_body(max_body)
            .with_session(session)
            .with_feed(feed)
            .with_lane(lane)
    });
    let Some(setup) = workload.setup else {
        return ctxs.collect();
    };
    let tasks: Vec<_> = ctxs
        .enumerate()
        .map(|(index, mut ctx)| {
            let halt = Rc::clone(halt);
            tokio::task::spawn_local(async move {
                // A stop during the setups cancels them with the run, after the grace period.
                let outcome = halt.until(index, Phase::Cancelled, pin!(setup(&mut ctx))).await;
                (ctx, outcome)
            })
        })
        .collect();
    let mut ready = Vec::with_capacity(tasks.len());
    for task in tasks {
        let (ctx, outcome) = match task.await {
            Ok((_, None)) => continue,
            Ok((ctx, Some(outcome))) => (Some(ctx), outcome),
            Err(_) => (None, Err(Error::new(ErrorKind::Scenario, "the setup panicked"))),
        };
        worker.borrow_mut().stats.setup.record(&outcome);
        if let (Some(mut ctx), Ok(())) = (ctx, outcome) {
            // The setup's exchanges are not the scenario's: only its connection, which the
            // user keeps, stays counted.
            ctx.counters.forget_exchanges();
            ready.push(ctx);
        }
    }
    ready
}
