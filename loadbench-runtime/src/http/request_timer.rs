//! The per-request timeout, on one timer per virtual user that is reused rather than re-armed.
//!
//! `tokio::time::timeout` around every request inserts a timer entry into the wheel and removes
//! it again a few microseconds later, once per request. Requests of one user follow each other
//! and share the same timeout, so each request's deadline is later than the one before: a timer
//! left armed for an earlier deadline can only fire early, never late. When it fires, the
//! current request's deadline is checked and the timer is moved to it, so the wheel is touched
//! about once per timeout period (30 s by default) rather than twice per request.

use std::future::{Future, poll_fn};
use std::pin::{Pin, pin};
use std::task::Poll;

use tokio::time::{Instant, Sleep};

/// One virtual user's request timer; armed on first use, since `Ctx`s are built outside the
/// runtime, where a `Sleep` cannot be.
#[derive(Debug, Default)]
pub(crate) struct RequestTimer {
    armed: Option<Armed>,
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
    /// Runs `work` to completion, or gives up at `deadline` (then `None`).
    pub(crate) async fn within<F: Future>(&mut self, deadline: Instant, work: F) -> Option<F::Output> {
        let armed = match &mut self.armed {
            // Due no later than this deadline: it can only fire early, and is then moved on.
            Some(armed) if armed.due <= deadline => armed,
            // A shorter timeout than the last one: the timer must move now.
            Some(armed) => {
                armed.reset(deadline);
                armed
            }
            None => self.armed.insert(Armed {
                sleep: Box::pin(tokio::time::sleep_until(deadline)),
                due: deadline,
                polled: false,
            }),
        };
        let mut work = pin!(work);
        poll_fn(|cx| {
            if let Poll::Ready(out) = work.as_mut().poll(cx) {
                return Poll::Ready(Some(out));
            }
            // The timer wakes this task when due; until then there is no need to look at it.
            if armed.polled && Instant::now() < armed.due {
                return Poll::Pending;
            }
            while armed.sleep.as_mut().poll(cx).is_ready() {
                if Instant::now() >= deadline {
                    return Poll::Ready(None);
                }
                // Armed for an earlier request: move on to this one's deadline.
                armed.reset(deadline);
            }
            armed.polled = true;
            Poll::Pending
        })
        .await
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
