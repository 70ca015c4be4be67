//! A panic in a scenario body is a failed iteration, not a lost virtual user: the iteration's
//! future is polled under `catch_unwind`, and the panic becomes an error of kind
//! [`ErrorKind::Panic`] with its message, so the user goes on and the count stays exact. Only the
//! first such panic of a process is printed (with its backtrace, if enabled): a body that panics
//! on every iteration would otherwise print as many.

use std::cell::Cell;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Instant;

use crate::error::{Error, ErrorKind, Result};
use crate::http::request_timer;

thread_local! {
    /// Whether this thread is polling a scenario body, where panics are caught and counted.
    static IN_BODY: Cell<bool> = const { Cell::new(false) };
}

/// Whether a body's panic was printed already.
static PRINTED: AtomicBool = AtomicBool::new(false);

/// Wraps the process's panic hook, once: a panic inside a scenario body is printed the first
/// time only; every other panic as before.
pub(crate) fn quiet_repeated_panics() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if IN_BODY.with(Cell::get) && PRINTED.swap(true, Ordering::Relaxed) {
                return;
            }
            previous(info);
        }));
    });
}

/// Runs `body` to its end; a panic in it becomes an [`ErrorKind::Panic`] error. The panicked
/// future is not polled again (it is dropped by its owner).
///
/// A future of its own over the pinned body rather than an `async fn` taking it: the body's
/// future is the largest of an iteration, and taking it by value would copy it once more per
/// iteration.
///
/// `started` is the iteration's start as a clock reading just taken, which its first request's
/// deadline may use during the body's first poll ([`request_timer::primed`]); `None` when the
/// start is not such a reading (an arrival's scheduled time, or after a think time).
pub(crate) fn caught<F: Future<Output = Result<()>>>(body: Pin<&mut F>, started: Option<Instant>) -> Caught<'_, F> {
    Caught { body, started }
}

/// The future of [`caught`].
#[derive(Debug)]
pub(crate) struct Caught<'a, F> {
    body: Pin<&'a mut F>,
    started: Option<Instant>,
}

impl<F: Future<Output = Result<()>>> Future for Caught<'_, F> {
    type Output = Result<()>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<()>> {
        IN_BODY.with(|flag| flag.set(true));
        let started = self.started.take();
        if started.is_some() {
            request_timer::primed(started);
        }
        // The body's state is dropped after a panic, never used again: unwind safety holds.
        let polled = catch_unwind(AssertUnwindSafe(|| self.body.as_mut().poll(cx)));
        if started.is_some() {
            request_timer::primed(None);
        }
        IN_BODY.with(|flag| flag.set(false));
        match polled {
            Ok(poll) => poll,
            Err(payload) => Poll::Ready(Err(Error::new(ErrorKind::Panic, panic_message(payload.as_ref())))),
        }
    }
}

/// The message a panic was raised with (`panic!("…")`, `unwrap()` on an error, …).
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    let text = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("a panic without a message");
    format!("the scenario body panicked: {text}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_panic_is_an_error_with_its_message() {
        quiet_repeated_panics();
        let failed = caught(std::pin::pin!(async { panic!("cart was empty") }), None).await;
        let err = failed.err().map(|e| (e.kind(), e.to_string()));
        assert_eq!(err, Some((ErrorKind::Panic, "the scenario body panicked: cart was empty".to_owned())));
        let n = 3;
        let failed = caught(std::pin::pin!(async move { panic!("item {n} missing") }), None).await;
        assert!(failed.is_err_and(|e| e.to_string().ends_with("item 3 missing")));
        assert!(caught(std::pin::pin!(async { Ok(()) }), None).await.is_ok());
    }
}
