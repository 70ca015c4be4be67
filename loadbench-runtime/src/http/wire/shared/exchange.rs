//! A request's answer on a shared connection: the slot a connection's driver leaves it in
//! (`Answer`, in the tables of slots that `Slots` names: the pipeline's queue, HTTP/2's streams),
//! and the future its user waits on (`Exchange`), the same for both protocols.
//!
//! The values here are laid out for the request's path: an `Exchange` is two words, and a
//! response goes from its slot straight into its box (bench/RESULTS.md § Layouts on the request
//! path).

use std::cell::RefCell;
use std::future::Future;
use std::mem::MaybeUninit;
use std::num::NonZeroUsize;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use crate::error::{Error, ErrorKind};
use crate::http::wire::response::{Parts, Response};

/// A response as the exchange hands it to its user, with its body's length as received (kept or
/// not).
#[derive(Debug)]
pub(crate) struct Reply {
    pub(crate) response: Response,
    pub(crate) body_len: u64,
}

/// A response as a driver leaves it in its request's slot: unboxed, until its user takes it
/// ([`Parts`]).
#[derive(Debug)]
pub(crate) struct Received {
    pub(crate) parts: Parts,
    pub(crate) body_len: u64,
}

impl Received {
    fn into_reply_in(self, room: Box<MaybeUninit<Parts>>) -> Reply {
        Reply { response: Response::from_parts_in(room, self.parts), body_len: self.body_len }
    }
}

/// Why an exchange on a lane failed.
#[derive(Debug)]
pub(crate) struct Failure {
    /// The request's error, as the scenario sees it when it is not sent again.
    pub(crate) error: Error,
    /// Whether the server cannot have processed the request, so that it may be sent again on a
    /// new connection (which the lane then opens).
    pub(crate) retry: bool,
    /// Whether it failed without a byte of it written: sending it again costs the request none
    /// of its retries.
    pub(crate) unsent: bool,
}

impl Failure {
    /// A request written, in whole or in part, that failed; `retry` as above.
    pub(crate) fn new(error: Error, retry: bool) -> Failure {
        Failure { error, retry, unsent: false }
    }

    /// A request never written: it may be sent again.
    pub(crate) fn unsent(error: Error) -> Failure {
        Failure { error, retry: true, unsent: true }
    }
}

/// A slot's side of an exchange: the result once the driver has it, and the waker of the user
/// waiting for it.
///
/// The waker stays in the slot after its user is woken: a user takes its answer and queues its
/// next request in the same poll, and the free list hands it back the slot it just left, whose
/// waker is already its own. Keeping it saves cloning one (an atomic add on the task) per request.
///
/// The response and the failure are kept apart, not as one `(Result<Received, Failure>, bool)`:
/// taken as one, the response's parts went through the stack twice, shifted by a byte, and each
/// read waited for the writes before it (bench/RESULTS.md § Layouts on the request path).
#[derive(Debug, Default)]
pub(crate) struct Answer {
    received: Option<Received>,
    failed: Option<Failure>,
    waker: Option<Waker>,
}

impl Answer {
    /// Hands over `result` and wakes its user.
    pub(crate) fn give(&mut self, result: std::result::Result<Received, Failure>) {
        match result {
            Ok(received) => self.received = Some(received),
            Err(failure) => self.failed = Some(failure),
        }
        if let Some(waker) = &self.waker {
            waker.wake_by_ref();
        }
    }

    /// The result, if it is in; otherwise `waker` is kept, to be woken with it.
    // Inline: returned from a call, the result came back through memory, read back wider than
    // it was written.
    #[inline]
    pub(crate) fn take(&mut self, waker: &Waker) -> Option<std::result::Result<Reply, Failure>> {
        if self.received.is_some() {
            // The box is made before the parts leave the slot, so that they go straight into it:
            // taken first, they waited on the stack through the allocation, their last bytes
            // written apart and read back wider.
            let room = Box::new_uninit();
            return self.received.take().map(|received| Ok(received.into_reply_in(room)));
        }
        if let Some(failed) = self.failed.take() {
            return Some(Err(failed));
        }
        if !self.waker.as_ref().is_some_and(|w| w.will_wake(waker)) {
            self.waker = Some(waker.clone());
        }
        None
    }

    /// Forgets the result and the waker: the user is gone.
    pub(crate) fn clear(&mut self) {
        self.received = None;
        self.failed = None;
        self.waker = None;
    }
}

/// The requests a connection's driver answers, each in a slot: the pipeline's queue, HTTP/2's
/// streams. Users and driver share it behind a `RefCell` on the worker's thread.
pub(crate) trait Slots {
    /// Why a request was refused before it had a slot (the connection takes no new ones).
    const REFUSED: &'static str;

    /// The result of slot `index`, if it is in (the slot is then free); otherwise `waker` is
    /// kept, to be woken with it.
    fn take(&mut self, index: usize, waker: &Waker) -> Option<std::result::Result<Reply, Failure>>;

    /// Gives up slot `index`, whose user no longer waits (it timed out, or the run ended).
    fn abandon(&mut self, index: usize);

    /// Whether the connection takes new requests.
    fn is_open(&self) -> bool;

    /// Asks the driver to end the connection (the lane is gone): what is left is failed.
    fn close(&mut self);
}

/// The response to one request on a shared connection: its slot, until its result is taken.
///
/// Two words, so that the lane's `exchange` returns it in two registers: a larger one was
/// written to the stack a field at a time and read back at once, wider, into the request's
/// future, and the read waited for the writes (bench/RESULTS.md § Layouts on the request path).
#[derive(Debug)]
pub(crate) struct Exchange<'a, S: Slots> {
    slots: &'a RefCell<S>,
    /// The slot's index plus one; `None` once the result is taken, or when the request was
    /// refused.
    slot: Option<NonZeroUsize>,
}

impl<'a, S: Slots> Exchange<'a, S> {
    /// The exchange of a request queued in `slot` of `slots`, or refused (`None`: it is failed
    /// unsent at its first poll).
    pub(crate) fn new(slots: &'a RefCell<S>, slot: Option<usize>) -> Exchange<'a, S> {
        Exchange { slots, slot: slot.and_then(|index| NonZeroUsize::new(index + 1)) }
    }
}

impl<S: Slots> Future for Exchange<'_, S> {
    type Output = std::result::Result<Reply, Failure>;

    // Out of line: the lane's future is part of every user's request future, and the unshared
    // path should not pay for its size.
    #[inline(never)]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let Some(slot) = this.slot else {
            return Poll::Ready(Err(Failure::unsent(Error::new(ErrorKind::Io, S::REFUSED))));
        };
        match this.slots.borrow_mut().take(slot.get() - 1, cx.waker()) {
            Some(result) => {
                this.slot = None;
                Poll::Ready(result)
            }
            None => Poll::Pending,
        }
    }
}

impl<S: Slots> Drop for Exchange<'_, S> {
    fn drop(&mut self) {
        if let Some(slot) = self.slot {
            self.slots.borrow_mut().abandon(slot.get() - 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exchange_is_two_words_so_that_it_comes_back_in_registers() {
        use std::mem::size_of;
        assert_eq!(size_of::<Exchange<'_, super::super::pipeline::Queue>>(), 2 * size_of::<usize>());
    }
}
