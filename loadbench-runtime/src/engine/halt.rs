//! How a run stops: first gracefully (no new iteration starts), then, once its grace period is
//! over, by cancelling what is still in flight.
//!
//! Two flags come from outside ([`StopFlags`]): `graceful`, set by the first Ctrl-C or SIGTERM
//! (or by an embedding program), and `now`, set by a second signal. Each worker thread runs one
//! [`supervise`] task that turns them, and a duration-bound run's deadline, into the worker's
//! [`Halt`] phase: `Stopping` ends every wait between iterations (a think time, a ramp's pause,
//! an idle user in the open model, the scheduler's sleep), `Cancelled` drops the bodies still
//! running. The per-iteration cost is one `Cell` read and a waker comparison per poll: the flags
//! themselves are only read by the supervisor, on a timer.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

/// How often the supervisor looks at the stop flags: the most a stop waits to be noticed.
const POLL: Duration = Duration::from_millis(20);

/// What stops a run from outside: the first signal's flag and the second's.
#[derive(Debug, Clone, Default)]
pub(crate) struct StopFlags {
    /// Set: start no new iteration; cancel those in flight after the grace period.
    pub(crate) graceful: Arc<AtomicBool>,
    /// Set: cancel what is in flight at once.
    pub(crate) now: Arc<AtomicBool>,
}

impl StopFlags {
    /// Whether the run was asked to stop, gracefully or not.
    pub(crate) fn any(&self) -> bool {
        self.graceful.load(Ordering::Relaxed) || self.now.load(Ordering::Relaxed)
    }
}

/// Where one worker's run is in stopping.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Phase {
    Running,
    /// No new iteration starts: waits between iterations end.
    Stopping,
    /// In-flight iterations (and setups or teardowns) are dropped.
    Cancelled,
}

/// One worker thread's stopping state, shared by its tasks (never across threads).
#[derive(Debug)]
pub(crate) struct Halt {
    phase: Cell<Phase>,
    /// The waker of every task waiting under [`Halt::until`], by the task's slot: woken on each
    /// change of phase.
    wakers: RefCell<Vec<Option<Waker>>>,
    /// When the run will be cancelled unless it ends first: its deadline plus the grace period,
    /// once known, or a stop's time plus the grace period.
    cancel_at: Cell<Option<Instant>>,
    /// When in-flight iterations were cancelled.
    pub(crate) cancelled_at: Cell<Option<Instant>>,
}

impl Halt {
    /// The state for `tasks` tasks, numbered from 0, each of which may wait under it.
    pub(crate) fn new(tasks: usize) -> Rc<Halt> {
        Rc::new(Halt {
            phase: Cell::new(Phase::Running),
            wakers: RefCell::new(vec![None; tasks]),
            cancel_at: Cell::new(None),
            cancelled_at: Cell::new(None),
        })
    }

    #[cfg(test)]
    pub(crate) fn phase(&self) -> Phase {
        self.phase.get()
    }

    /// Cancels at `at` at the latest.
    pub(crate) fn cancel_by(&self, at: Instant) {
        self.cancel_at.set(Some(self.cancel_at.get().map_or(at, |t| t.min(at))));
    }

    /// Starts no new iteration: ends every wait between iterations, as a stop does, without
    /// cancelling what is in flight (a worker that gave up on a target where nothing listens).
    pub(crate) fn stop_starting(&self) {
        self.advance(Phase::Stopping);
    }

    /// Moves to `phase` (never back) and wakes every waiting task.
    fn advance(&self, phase: Phase) {
        if phase <= self.phase.get() {
            return;
        }
        self.phase.set(phase);
        if phase == Phase::Cancelled {
            self.cancelled_at.set(Some(Instant::now()));
        }
        // Copied out first: a woken task runs later, but must find the list free. Each stays
        // registered, for the next change of phase: a task's registration is then good until it
        // ends, which lets a virtual user register once ([`Halt::until_registered`]).
        let wakers: Vec<Waker> = self.wakers.borrow().iter().flatten().cloned().collect();
        for waker in wakers {
            waker.wake();
        }
    }

    /// Runs `future` as the task in `slot` until it ends (`Some`) or the phase reaches `phase`
    /// (`None`; the caller then drops the future). The future is pinned by the caller (`pin!`),
    /// so that nothing is moved per iteration.
    pub(crate) fn until<'a, F: Future>(&'a self, slot: usize, phase: Phase, future: Pin<&'a mut F>) -> Until<'a, F> {
        Until { halt: self, slot, phase, future, registered: None }
    }

    /// [`Halt::until`] for a task that waits under its slot again and again (a virtual user's
    /// loop, once per iteration): `registered`, in the task's own state, remembers that the
    /// task's waker is in the slot, so that a pending poll need not look at the slot again.
    ///
    /// With a thousand users, each user's slot is a cache line of its own that nothing else of
    /// the request touches: one miss per request for a comparison that always finds the same
    /// waker. `registered` must belong to one task, polled with one waker from its first wait
    /// to its last, as a user's loop is (its own task, or its worker's set of users).
    pub(crate) fn until_registered<'a, F: Future>(
        &'a self,
        slot: usize,
        phase: Phase,
        future: Pin<&'a mut F>,
        registered: &'a Cell<bool>,
    ) -> Until<'a, F> {
        Until { halt: self, slot, phase, future, registered: Some(registered) }
    }
}

/// A future that ends with the one it wraps, or when its worker's [`Halt`] reaches a phase.
#[derive(Debug)]
pub(crate) struct Until<'a, F> {
    halt: &'a Halt,
    slot: usize,
    phase: Phase,
    future: Pin<&'a mut F>,
    /// Set once the task's waker is in the slot ([`Halt::until_registered`]).
    registered: Option<&'a Cell<bool>>,
}

impl<F: Future> Future for Until<'_, F> {
    type Output = Option<F::Output>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if self.halt.phase.get() >= self.phase {
            return Poll::Ready(None);
        }
        match self.future.as_mut().poll(cx) {
            Poll::Ready(output) => Poll::Ready(Some(output)),
            Poll::Pending => {
                if self.registered.is_some_and(Cell::get) {
                    return Poll::Pending;
                }
                // A task's waker rarely changes: compare, and clone only when it did.
                if let Some(stored) = self.halt.wakers.borrow_mut().get_mut(self.slot)
                    && !stored.as_ref().is_some_and(|w| w.will_wake(cx.waker()))
                {
                    *stored = Some(cx.waker().clone());
                }
                if let Some(registered) = self.registered {
                    registered.set(true);
                }
                Poll::Pending
            }
        }
    }
}

/// Watches `flags` and the cancel time for one worker, moving `halt` along; returns once it is
/// cancelled (the executor aborts it when the run ends first). `grace` is how long in-flight
/// iterations may go on after a stop.
pub(crate) async fn supervise(halt: Rc<Halt>, flags: StopFlags, grace: Duration) {
    // A stop may come after the worker stopped starting iterations by itself: it still starts
    // the grace period of what is in flight.
    let mut stopped = false;
    loop {
        let now = Instant::now();
        if flags.now.load(Ordering::Relaxed) {
            break;
        }
        if !stopped && flags.graceful.load(Ordering::Relaxed) {
            stopped = true;
            halt.advance(Phase::Stopping);
            halt.cancel_by(now + grace);
        }
        let cancel_at = halt.cancel_at.get();
        if cancel_at.is_some_and(|at| now >= at) {
            break;
        }
        let wake = cancel_at.map_or(now + POLL, |at| at.min(now + POLL));
        tokio::time::sleep_until(wake.into()).await;
    }
    halt.advance(Phase::Cancelled);
}

#[cfg(test)]
mod tests {
    use std::pin::pin;

    use super::*;

    /// Runs `test` on a current-thread runtime in real time (the supervisor reads the real
    /// clock, as the runs do).
    fn run_local<F: Future<Output = ()>>(test: impl FnOnce() -> F) {
        let rt = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
            Ok(rt) => rt,
            Err(err) => panic!("runtime: {err}"),
        };
        tokio::task::LocalSet::new().block_on(&rt, test());
    }

    #[test]
    fn a_stop_cancels_what_is_in_flight_after_the_grace_period() {
        run_local(|| async {
            let halt = Halt::new(2);
            let flags = StopFlags::default();
            let grace = Duration::from_millis(300);
            let supervisor = tokio::task::spawn_local(supervise(Rc::clone(&halt), flags.clone(), grace));
            let (body, wait) = (Rc::clone(&halt), Rc::clone(&halt));
            let user = tokio::task::spawn_local(async move {
                body.until(0, Phase::Cancelled, pin!(tokio::time::sleep(Duration::from_secs(60)))).await
            });
            let idle = tokio::task::spawn_local(async move {
                wait.until(1, Phase::Stopping, pin!(tokio::time::sleep(Duration::from_secs(60)))).await
            });
            tokio::time::sleep(Duration::from_millis(100)).await;
            assert_eq!(halt.phase(), Phase::Running);
            let stopped = Instant::now();
            flags.graceful.store(true, Ordering::Relaxed);
            assert_eq!(idle.await.ok(), Some(None), "a wait between iterations ends at the stop");
            assert!(stopped.elapsed() < grace, "{:?}", stopped.elapsed());
            assert_eq!(user.await.ok(), Some(None), "the body was cancelled");
            let took = stopped.elapsed();
            // Never before the grace period; after it, as soon as a busy machine allows.
            assert!(took >= grace && took < Duration::from_secs(10), "{took:?}");
            assert!(supervisor.await.is_ok());
            assert!(halt.cancelled_at.get().is_some());
        });
    }

    #[test]
    fn a_second_signal_cancels_at_once_and_a_finished_body_is_kept() {
        run_local(|| async {
            let halt = Halt::new(2);
            let flags = StopFlags::default();
            let grace = Duration::from_secs(60);
            let _supervisor = tokio::task::spawn_local(supervise(Rc::clone(&halt), flags.clone(), grace));
            assert_eq!(halt.until(1, Phase::Cancelled, pin!(async { 7 })).await, Some(7));
            let body = Rc::clone(&halt);
            let user = tokio::task::spawn_local(async move {
                body.until(0, Phase::Cancelled, pin!(tokio::time::sleep(Duration::from_secs(60)))).await
            });
            let start = Instant::now();
            flags.graceful.store(true, Ordering::Relaxed);
            tokio::time::sleep(Duration::from_millis(50)).await;
            flags.now.store(true, Ordering::Relaxed);
            assert_eq!(user.await.ok(), Some(None));
            assert!(start.elapsed() < Duration::from_secs(10), "{:?}", start.elapsed());
        });
    }

    /// A user's loop registers its waker once, in its first pending wait, and not in the waits
    /// after: a change of phase must leave it registered for the next one.
    #[test]
    fn a_task_registered_once_is_woken_at_every_change_of_phase() {
        run_local(|| async {
            let halt = Halt::new(1);
            let waiting = Rc::clone(&halt);
            let user = tokio::task::spawn_local(async move {
                let registered = Cell::new(false);
                let short = pin!(tokio::time::sleep(Duration::from_millis(10)));
                let between = waiting.until_registered(0, Phase::Stopping, short, &registered).await;
                let body = pin!(tokio::time::sleep(Duration::from_secs(60)));
                let cancelled = waiting.until_registered(0, Phase::Cancelled, body, &registered).await;
                (between, cancelled)
            });
            tokio::time::sleep(Duration::from_millis(100)).await;
            // Wakes the body's wait, which goes on (it ends at `Cancelled`) without registering.
            halt.advance(Phase::Stopping);
            tokio::time::sleep(Duration::from_millis(50)).await;
            halt.advance(Phase::Cancelled);
            let ended = tokio::time::timeout(Duration::from_secs(10), user).await;
            assert_eq!(ended.ok().and_then(Result::ok), Some((Some(()), None)), "the body's wait was not woken");
        });
    }

    /// A worker that gave up on a target where nothing listens ends its waits, not its bodies;
    /// a signal after it still cancels them once the grace period is over.
    #[test]
    fn a_stop_after_the_worker_stopped_starting_still_cancels_after_the_grace_period() {
        run_local(|| async {
            let halt = Halt::new(2);
            let flags = StopFlags::default();
            let grace = Duration::from_millis(200);
            let _supervisor = tokio::task::spawn_local(supervise(Rc::clone(&halt), flags.clone(), grace));
            let (body, wait) = (Rc::clone(&halt), Rc::clone(&halt));
            let user = tokio::task::spawn_local(async move {
                body.until(0, Phase::Cancelled, pin!(tokio::time::sleep(Duration::from_secs(60)))).await
            });
            let idle = tokio::task::spawn_local(async move {
                wait.until(1, Phase::Stopping, pin!(tokio::time::sleep(Duration::from_secs(60)))).await
            });
            tokio::time::sleep(Duration::from_millis(50)).await;
            halt.stop_starting();
            assert_eq!(idle.await.ok(), Some(None), "the wait between iterations ended");
            tokio::time::sleep(Duration::from_millis(100)).await;
            assert_eq!(halt.phase(), Phase::Stopping, "the body goes on");
            let stopped = Instant::now();
            flags.graceful.store(true, Ordering::Relaxed);
            assert_eq!(user.await.ok(), Some(None), "the body was cancelled");
            let took = stopped.elapsed();
            assert!(took >= grace && took < Duration::from_secs(10), "{took:?}");
        });
    }

    #[test]
    fn a_deadline_cancels_without_any_signal() {
        run_local(|| async {
            let halt = Halt::new(1);
            let _supervisor =
                tokio::task::spawn_local(supervise(Rc::clone(&halt), StopFlags::default(), Duration::from_secs(60)));
            let start = Instant::now();
            halt.cancel_by(start + Duration::from_millis(200));
            let outcome = halt.until(0, Phase::Cancelled, pin!(tokio::time::sleep(Duration::from_secs(60)))).await;
            assert_eq!(outcome, None);
            let took = start.elapsed();
            assert!(took >= Duration::from_millis(200) && took < Duration::from_secs(10), "{took:?}");
        });
    }
}
