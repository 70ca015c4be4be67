//! A virtual user: the loop that runs a scenario body over and over on one connection.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::{Pin, pin};
use std::rc::Rc;
use std::task::{Poll, Waker};
use std::time::{Duration, Instant};

use super::halt::{Halt, Phase};
use super::panics;
use super::worker::Worker;
use crate::config::ThinkTime;
use crate::error::Result;
use crate::http::{Arrival, Ctx};

/// One virtual user, handed by the executor to the code `#[scenario]` generates.
#[derive(Debug)]
pub struct VirtualUser {
    pub(crate) ctx: Ctx,
    pub(crate) worker: Rc<RefCell<Worker>>,
    /// Open model: where the worker's scheduler hands this user its next start time. `None` in
    /// the closed model, where the user starts its next iteration as soon as one ends.
    /// The index is the user's place among its worker's slots.
    pub(crate) slot: Option<(usize, Rc<UserSlot>)>,
    /// How the run stops, shared by the worker's tasks; `index` is this user's slot in it.
    pub(crate) halt: Rc<Halt>,
    pub(crate) index: usize,
}

/// An idle user's mailbox in the open model: the scheduler puts a start time in it and wakes
/// the user. Only its worker thread touches it, so a `RefCell` and a stored `Waker` are enough
/// (no channel, no atomic per iteration).
#[derive(Debug, Default)]
pub(crate) struct UserSlot(RefCell<SlotState>);

#[derive(Debug, Default)]
struct SlotState {
    /// The start time, and whether the iteration is measured (not warmup).
    next: Option<(Instant, bool)>,
    closed: bool,
    waker: Option<Waker>,
}

impl UserSlot {
    /// Gives the user an iteration that counts as started at `start`; `measured` is false for
    /// a warmup iteration.
    pub(crate) fn start(&self, start: Instant, measured: bool) {
        let mut state = self.0.borrow_mut();
        state.next = Some((start, measured));
        if let Some(waker) = state.waker.take() {
            waker.wake();
        }
    }

    /// No more iterations: the user ends once it is idle.
    pub(crate) fn close(&self) {
        let mut state = self.0.borrow_mut();
        state.closed = true;
        if let Some(waker) = state.waker.take() {
            waker.wake();
        }
    }

    /// The start time of the user's next iteration and whether it is measured, or `None` when
    /// the scenario is over.
    async fn next(&self) -> Option<(Instant, bool)> {
        std::future::poll_fn(|cx| {
            let mut state = self.0.borrow_mut();
            if let Some(start) = state.next.take() {
                Poll::Ready(Some(start))
            } else if state.closed {
                Poll::Ready(None)
            } else {
                state.waker = Some(cx.waker().clone());
                Poll::Pending
            }
        })
        .await
    }
}

/// A virtual user's whole run, boxed once per user (never per iteration). It hands its `Ctx`
/// back for the user's teardown, boxed: a task's output is moved out of every poll of it, once
/// per response, even while it is pending (bench/RESULTS.md § Request path instruction costs).
pub type VuFuture = Pin<Box<dyn Future<Output = Box<Ctx>>>>;

/// A per-user setup or teardown (`setup = login`), as registered: an `async fn(&mut Ctx) ->
/// Result<()>` behind a function pointer.
pub type Hook = for<'a> fn(&'a mut Ctx) -> HookFuture<'a>;

/// What a [`Hook`] returns: boxed, as it runs twice per user at most.
pub type HookFuture<'a> = Pin<Box<dyn Future<Output = Result<()>> + 'a>>;

/// Runs `hook` on `ctx`; the code `#[scenario]` generates for `setup = …` and `teardown = …`.
pub fn hook_future<'a, F>(ctx: &'a mut Ctx, hook: F) -> HookFuture<'a>
where
    F: AsyncFnOnce(&mut Ctx) -> Result<()> + 'a,
{
    Box::pin(async move {
        // A setup's or teardown's steps, named requests and checks are in no figure, as its
        // time and exchanges are not.
        ctx.measuring = false;
        hook(ctx).await
    })
}

/// Runs `body` in `user`'s loop until the scenario's work is done.
///
/// Generic over the body so the per-iteration call is static; only the user's loop as a whole
/// is boxed. The future is `!Send`: each worker thread runs its users on its own
/// current-thread runtime, so nothing here needs to cross threads or take a lock.
pub fn vu_future<F>(user: VirtualUser, body: F) -> VuFuture
where
    F: AsyncFn(&mut Ctx) -> Result<()> + 'static,
{
    Box::pin(run(user, body))
}

// An `async` block over the user's parts rather than an `async fn` taking the user: an `async fn`
// keeps its arguments in its state beside the body's own bindings, a second `Ctx` (a kilobyte)
// per user that nothing reads.
fn run<F>(user: VirtualUser, body: F) -> impl Future<Output = Box<Ctx>>
where
    F: AsyncFn(&mut Ctx) -> Result<()>,
{
    let VirtualUser { mut ctx, worker, slot, halt, index } = user;
    async move {
        let (think_time, ramp) = {
            let worker = worker.borrow();
            (worker.think_time, worker.has_ramp())
        };
        let mut think = think_time.map(|t| Think::new(t, ctx.user()));
        // The setup is over: under `cookies = "iteration"`, its jar is what each iteration starts from.
        ctx.setup_done();
        let mut first = true;
        // In the closed model without think time or ramp, a user starts its next iteration the
        // moment the last one ends: that end's clock reading is the next start. Between them is
        // only this loop's bookkeeping, and a clock read is a visible share of a pipelined
        // request's cost (bench/RESULTS.md § Request path instruction costs).
        let reuse_end = think.is_none() && !ramp && slot.is_none();
        let mut last_end: Option<Instant> = None;
        // Whether this task's waker is in the user's slot of `halt`: this loop is polled by one task
        // from start to end, so it registers once, not at every pending poll.
        let registered = Cell::new(false);
        // The responses and bytes of this user's measured iterations already published for the
        // live metrics: each iteration publishes what it added.
        #[cfg(feature = "remote-write")]
        let mut published = (0u64, 0u64);
        'iterations: loop {
            if let Some(think) = &mut think
                && !std::mem::take(&mut first)
            {
                // Cut short at a duration-bound run's end, so that the run ends on time.
                let until = Instant::now() + think.next();
                let until = worker.borrow().deadline().map_or(until, |deadline| until.min(deadline));
                let sleep = pin!(tokio::time::sleep_until(until.into()));
                if halt.until_registered(index, Phase::Stopping, sleep, &registered).await.is_none() {
                    break;
                }
            }
            let (start, measured) = match &slot {
                None => {
                    // A ramp of users: wait, outside any figure, while this user is not wanted.
                    if ramp {
                        loop {
                            let wait = worker.borrow().inactive_until(ctx.user());
                            let Some(until) = wait else { break };
                            let sleep = pin!(tokio::time::sleep_until(until.into()));
                            if halt.until_registered(index, Phase::Stopping, sleep, &registered).await.is_none() {
                                break 'iterations;
                            }
                        }
                    }
                    let now = last_end.take().unwrap_or_else(Instant::now);
                    match worker.borrow_mut().next_iteration(now) {
                        Some(measured) => (now, measured),
                        None => break,
                    }
                }
                // The scheduler's start time is the intended one (or the actual one, if the user
                // was woken early), so time the iteration spent waiting to start counts.
                Some((_, slot)) => {
                    match halt.until_registered(index, Phase::Stopping, pin!(slot.next()), &registered).await.flatten()
                    {
                        Some(start) => start,
                        None => break,
                    }
                }
            };
            // Steps of a warmup iteration are not counted, nor are its exchanges: the first
            // measured iteration after a warmup (or a setup) starts the user's HTTP figures.
            if measured && !ctx.measuring {
                ctx.counters.forget_exchanges();
                #[cfg(feature = "remote-write")]
                {
                    published = (0, 0);
                }
            }
            ctx.measuring = measured;
            // Under an arrival rate, where the iteration began, for a measured operation it begins
            // with (`Ctx::measure`); one branch per iteration, none per request.
            ctx.arrival = slot.is_some().then_some(Arrival { at: start, responses: ctx.counters.responses });
            // Dropped mid-flight when the run's grace period is over: neither a failure nor a latency.
            // A panic in the body fails this iteration only: the user goes on with the next.
            let outcome = {
                let iteration = pin!(body(&mut ctx));
                // A start just read from the clock (not an arrival's schedule) may be the first
                // request's too.
                let started = reuse_end.then_some(start);
                halt.until_registered(index, Phase::Cancelled, pin!(panics::caught(iteration, started)), &registered)
                    .await
            };
            // Cookies the iteration got go or stay as the scenario's `cookies` says.
            ctx.iteration_done();
            #[cfg(feature = "remote-write")]
            if measured {
                let now = (ctx.counters.responses, ctx.counters.bytes_received);
                worker.borrow().received(now.0.saturating_sub(published.0), now.1.saturating_sub(published.1));
                published = now;
            }
            let Some(outcome) = outcome else {
                worker.borrow_mut().record_cancelled(ctx.user(), measured);
                break;
            };
            let end = Instant::now();
            if reuse_end {
                last_end = Some(end);
            }
            let mut worker = worker.borrow_mut();
            if worker.record(outcome, start, end, measured) {
                // Nothing listens at the target: the worker's other users, its scheduler and any
                // wait between iterations stop now; what is in flight ends by itself.
                halt.stop_starting();
            }
            if let Some((index, _)) = &slot {
                worker.idle.push(*index);
            }
        }
        worker.borrow_mut().absorb(&ctx.counters);
        Box::new(ctx)
    }
}

/// A user's think times: uniform over the range, from a SplitMix64 generator seeded by the
/// user's number, so runs repeat and users do not pause in lockstep.
#[derive(Debug)]
struct Think {
    range: ThinkTime,
    state: u64,
}

impl Think {
    fn new(range: ThinkTime, user: u32) -> Think {
        Think { range, state: u64::from(user).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x5851_F42D_4C95_7F2D }
    }

    fn next(&mut self) -> Duration {
        let span = self.range.max.saturating_sub(self.range.min);
        if span.is_zero() {
            return self.range.min;
        }
        // SplitMix64 (Steele, Lea, Flood 2014): one add and three multiply-xorshifts per draw.
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        let span_ns = u64::try_from(span.as_nanos()).unwrap_or(u64::MAX);
        self.range.min + Duration::from_nanos(z % span_ns.saturating_add(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn body(ctx: &mut Ctx) -> Result<()> {
        let _ = ctx.user();
        Ok(())
    }

    #[test]
    fn think_times_stay_in_their_range_and_spread_over_it() {
        let range = ThinkTime { min: Duration::from_millis(100), max: Duration::from_millis(500) };
        let draws: Vec<Duration> = {
            let mut think = Think::new(range, 3);
            (0..1_000).map(|_| think.next()).collect()
        };
        assert!(draws.iter().all(|d| (range.min..=range.max).contains(d)));
        let low = draws.iter().filter(|d| **d < Duration::from_millis(300)).count();
        assert!((400..=600).contains(&low), "{low} of 1000 below the middle");
        let fixed = ThinkTime { min: Duration::from_millis(50), max: Duration::from_millis(50) };
        assert_eq!(Think::new(fixed, 0).next(), Duration::from_millis(50));
    }

    #[test]
    fn an_async_fn_taking_ctx_is_a_scenario_body() {
        // What `#[scenario]` generates must coerce to the registry's function pointer type.
        let run: fn(VirtualUser) -> VuFuture = |user| vu_future(user, body);
        let _ = run;
    }
}
