//! The per-request timeout, on one timer per virtual user that is reused rather than re-armed.
//!
//! `tokio::time::timeout` around every request inserts a timer entry into the wheel and removes
//! it again a few microseconds later, once per request. Requests of one user follow each other
//! and share the same timeout, so each request's deadline is later than the one before: a timer
//! left armed for an earlier deadline can only fire early, never late. When it fires, the
//! current request's deadline is checked and the timer is moved to it, so the wheel is touched
//! about once per timeout period (30 s by default) rather than twice per request.

use std::cell::Cell;
use std::future::Future;
use std::pin::{Pin, pin};
use std::task::{Context, Poll};

use pin_project_lite::pin_project;

use tokio::time::{Instant, Sleep};

thread_local! {
    /// A clock reading a request's deadline may take instead of reading the clock again: the
    /// iteration's start, while the first poll of its body runs (see [`primed`]).
    static PRIMED: Cell<Option<std::time::Instant>> = const { Cell::new(None) };
}

/// Lets the next request's deadline on this thread start from `now` instead of a clock read of
/// its own; `None` withdraws it.
///
/// A closed-model user starts its next iteration at the last one's end reading, and its first
/// request comes in the same poll, microseconds later at most: a second reading tells the
/// deadline nothing (bench/RESULTS.md § Request path instruction costs). The engine primes it for
/// the first poll of an iteration's body only and withdraws it after, so that a body that waited
/// first (a sleep, another request) reads the clock.
pub(crate) fn primed(now: Option<std::time::Instant>) {
    PRIMED.with(|primed| primed.set(now));
}

/// One virtual user's request timer; armed on first use, since `Ctx`s are built outside the
/// runtime, where a `Sleep` cannot be.
#[derive(Debug, Default)]
pub(crate) struct RequestTimer {
    armed: Option<Armed>,
    /// The clock as a request read it for its deadline ([`RequestTimer::deadline`]), for the
    /// first pending poll after it: that poll follows within microseconds, in the same poll of
    /// the task, and a second read of the clock would tell it nothing. Later polls read the clock.
    fresh: Option<Instant>,
}

#[derive(Debug)]
struct Armed {
    sleep: Pin<Box<Sleep>>,
    /// When `sleep` is due. Kept here, in the user's own state, so that a request whose timer
    /// need not move touches nothing else: with a thousand users, reaching into each boxed
    /// `Sleep` on every request is a cache miss each time.
    due: Instant,
    /// Whether `sleep` has been polled since it was (re)armed, which registers the task to wake.
    polled: bool,
}

impl Armed {
    fn reset(&mut self, deadline: Instant) {
        self.sleep.as_mut().reset(deadline);
        self.due = deadline;
        self.polled = false;
    }
}

impl RequestTimer {
    /// The deadline of a request that starts now and may take `timeout`.
    pub(crate) fn deadline(&mut self, timeout: std::time::Duration) -> Instant {
        let now = PRIMED.with(Cell::take).map_or_else(Instant::now, Instant::from_std);
        self.fresh = Some(now);
        now + timeout
    }

    /// Runs `work` to completion, or gives up at `deadline` (then `None`).
    // A future of its own rather than an `async fn` around a `poll_fn`: each of those is a level
    // of every request's future, with a state and a cold line or two of a user's memory to
    // touch per request (bench/RESULTS.md § Levels of a request's future).
    pub(crate) fn within<F: Future>(&mut self, deadline: Instant, work: F) -> Within<'_, F> {
        let RequestTimer { armed, fresh } = self;
        let armed = armed.get_or_insert_with(|| Armed {
            sleep: Box::pin(tokio::time::sleep_until(deadline)),
            due: deadline,
            polled: false,
        });
        // Due no later than this deadline, it can only fire early, and is then moved on; due
        // later (a shorter timeout than the last one's), it must move now.
        if armed.due > deadline {
            armed.reset(deadline);
        }
        Within { armed, fresh, deadline, work }
    }
}

pin_project! {
    /// [`RequestTimer::within`]'s future: `work`'s output, or `None` at `deadline`.
    pub(crate) struct Within<'a, F> {
        armed: &'a mut Armed,
        fresh: &'a mut Option<Instant>,
        deadline: Instant,
        #[pin]
        work: F,
    }
}

impl<F: Future> Future for Within<'_, F> {
    type Output = Option<F::Output>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<F::Output>> {
        let this = self.project();
        // Only the first poll after the deadline's reading may use it, whatever it returns.
        let fresh = this.fresh.take();
        if let Poll::Ready(out) = this.work.poll(cx) {
            return Poll::Ready(Some(out));
        }
        // The clock, not the timer, decides: a server that keeps sending (a trickle, endless 1xx
        // heads, an endless body) wakes this task again and again, and tokio's task budget, spent
        // by those reads, would keep a due `Sleep` from ever reporting ready. One clock read per
        // pending poll (a vDSO call) is what the check below made anyway.
        let now = fresh.unwrap_or_else(Instant::now);
        let deadline = *this.deadline;
        if now >= deadline {
            return Poll::Ready(None);
        }
        let armed = &mut **this.armed;
        // The timer wakes this task when due; until then there is no need to look at it.
        if armed.polled && now < armed.due {
            return Poll::Pending;
        }
        if now >= armed.due {
            // Armed for an earlier request: move on to this one's deadline.
            armed.reset(deadline);
        }
        // Unconstrained: with the task's budget spent, a `Sleep` returns pending without
        // registering its waker, and a server that then goes silent would never be timed out.
        if pin!(tokio::task::coop::unconstrained(armed.sleep.as_mut())).poll(cx).is_ready() {
            return Poll::Ready(None);
        }
        armed.polled = true;
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test(start_paused = true)]
    async fn fires_at_each_requests_own_deadline() {
        let mut timer = RequestTimer::default();
        let start = Instant::now();
        // A quick request leaves the timer armed for its deadline, 100 ms out.
        assert_eq!(timer.within(start + Duration::from_millis(100), async { 1 }).await, Some(1));
        // 80 ms later a slow request starts: its deadline is 180 ms, not the stale 100 ms.
        tokio::time::sleep(Duration::from_millis(80)).await;
        let began = Instant::now();
        let out = timer.within(began + Duration::from_millis(100), std::future::pending::<()>()).await;
        assert_eq!(out, None);
        assert_eq!(Instant::now() - began, Duration::from_millis(100));
    }

    /// Work that is always ready to go on (a server that keeps sending) spends the task's whole
    /// budget on every poll; the deadline must hold all the same.
    #[tokio::test]
    async fn busy_work_still_times_out() {
        let mut timer = RequestTimer::default();
        let busy = async {
            loop {
                tokio::task::coop::consume_budget().await;
            }
        };
        let began = Instant::now();
        let deadline = began + Duration::from_millis(100);
        // `timeout` polls its own timer outside the budget: a guard, so that a failure is a
        // failure and not a test that never ends.
        let out = tokio::time::timeout(Duration::from_secs(10), timer.within(deadline, busy)).await;
        assert_eq!(out, Ok(None), "the request outlived its deadline");
        let took = Instant::now() - began;
        assert!(took < Duration::from_millis(100 + 2_000), "timed out after {took:?} for a 100 ms deadline");
    }

    #[tokio::test(start_paused = true)]
    async fn a_shorter_deadline_moves_the_timer_forward() {
        let mut timer = RequestTimer::default();
        let start = Instant::now();
        assert_eq!(timer.within(start + Duration::from_secs(30), async {}).await, Some(()));
        let out = timer.within(start + Duration::from_millis(10), std::future::pending::<()>()).await;
        assert_eq!(out, None);
        assert_eq!(Instant::now() - start, Duration::from_millis(10));
    }
}
