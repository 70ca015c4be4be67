//! HTTP/1.1 on a shared connection: the requests of the users on one lane, pipelined up to the
//! scenario's depth and answered in order (depth 1: the users take turns on the connection).
//!
//! A driver task per connection (`driver.rs`, `tokio::task::spawn_local`) owns the socket; the
//! users' exchanges only touch the queue here. Why a task rather than "whoever polls drives":
//! with a driver, someone always watches the socket, whatever the users do (a user whose
//! request timed out drops its exchange mid-read; the user that had registered the socket's
//! waker may be answered and gone while others still wait), and the hot path stays simple. Its
//! cost is one wake of the driver per batch, not per request: the users that queue a request
//! while the driver runs or is already woken wake nothing, and the driver writes everything
//! queued in one `write` and completes every response one `read` brought in one poll. Re-measure
//! before changing this (bench/RESULTS.md § Pipelined driver).
//!
//! Accounting: a request is answered, or fails exactly once with a [`Failure`] that says
//! whether it may be sent again (never written, or idempotent: the server cannot have acted on
//! it, or acting twice is allowed). A request whose user timed out stays in the queue: its
//! response is read and dropped when it comes, so that one slow response does not cost the
//! others theirs. Once every request waiting on the connection has timed out, or more than
//! `depth` timed-out requests wait for answers, the connection is closed instead (a server that
//! stopped answering is replaced, as the unshared path replaces a connection whose request timed
//! out, and the queue stays bounded whatever the server does).
//!
//! Nothing is allocated per request once the queue has grown to the lane's users: slots are
//! reused through a free list, the write buffer and the read buffer keep their allocations.

mod driver;
#[cfg(test)]
mod tests;

use std::collections::VecDeque;
use std::task::Waker;

use bytes::BytesMut;
use http::Method;

use super::{Answer, Driven, DriverWaker, Exchange, Failure, Outgoing, Received, Reply, Slot, SlotTable, Slots};
use crate::error::{Error, ErrorKind};
use crate::http::wire::connection::{BodyPolicy, Http1Connection};
use crate::http::wire::stream::Stream;

/// One shared HTTP/1.1 connection. Dropped, the driver closes the connection and ends.
pub(crate) type Pipeline = Driven<Queue>;

impl Driven<Queue> {
    /// Starts pipelining on `stream`, at most `depth` requests in flight. Must run inside a
    /// `LocalSet` (every worker does): the connection's driver is a local task.
    pub(crate) fn start(stream: Stream, depth: u32) -> Pipeline {
        Driven::spawn(Queue::new(depth), |queue| driver::Driver::new(queue, Http1Connection::new(stream)))
    }

    /// Queues `request` behind those already on the connection (a request sent `again` goes
    /// ahead of the first tries not yet written); the future is its response. Its failure says
    /// whether the request failed without a byte of it written: sending it again costs the
    /// request none of its retries.
    // Out of line, as `Exchange::poll`: the lane's future is part of every user's request
    // future, and the unshared path should not pay for its size.
    #[inline(never)]
    pub(crate) fn exchange<'a>(&'a self, request: &Outgoing<'_>, again: bool) -> Exchange<'a, Queue> {
        let slot = self.table.borrow_mut().push(request, again);
        Exchange::new(&self.table, slot)
    }
}

impl Slots for Queue {
    const REFUSED: &'static str = "the shared connection closed before the request was sent";

    fn take(&mut self, index: usize, waker: &Waker) -> Option<Result<Reply, Failure>> {
        self.slots.take(index, waker)
    }

    fn abandon(&mut self, index: usize) {
        match self.slots[index].state {
            // Its user timed out: the response is read and dropped when it comes.
            State::Waiting => {
                let slot = &mut self.slots[index];
                slot.state = State::Abandoned;
                slot.answer.clear();
                self.waiting -= 1;
                self.abandoned += 1;
                if self.waiting == 0 || self.abandoned > self.depth {
                    self.close();
                }
            }
            State::Done => {
                self.slots[index].state = State::Free;
                self.slots[index].answer.clear();
                self.slots.release(index);
            }
            State::Free | State::Abandoned => {}
        }
    }

    fn is_open(&self) -> bool {
        self.open
    }

    fn close(&mut self) {
        Queue::close(self);
    }
}

/// What the users and the driver share: the requests queued on the connection, in order.
#[derive(Debug)]
pub(crate) struct Queue {
    depth: usize,
    /// Whether the connection takes new requests.
    open: bool,
    /// Asked to end: the driver fails what is left and closes the connection.
    closing: bool,
    /// Bytes of the queued requests not yet written, in order.
    out: BytesMut,
    /// Request bytes written since the connection opened: `out[0]`'s position.
    written: u64,
    /// The unanswered requests, oldest first.
    order: VecDeque<usize>,
    slots: SlotTable<QueuedRequest>,
    /// Requests in `order` whose user still waits.
    waiting: usize,
    /// Requests in `order` whose user timed out.
    abandoned: usize,
    driver: DriverWaker,
    /// Writes made, for the tests of coalescing.
    #[cfg(test)]
    writes: u32,
}

/// One request on the connection.
#[derive(Debug)]
struct QueuedRequest {
    method: Method,
    policy: BodyPolicy,
    /// Where its bytes start in the connection's stream of request bytes.
    start: u64,
    /// Sent before, on a connection that closed before answering it.
    again: bool,
    answer: Answer,
    state: State,
}

impl Slot for QueuedRequest {
    #[inline]
    fn answer(&mut self) -> &mut Answer {
        &mut self.answer
    }

    #[inline]
    fn set_free(&mut self) {
        self.state = State::Free;
    }
}

#[derive(Debug)]
enum State {
    /// Not in use; in the free list.
    Free,
    /// In the queue, its user waiting.
    Waiting,
    /// In the queue, its user gone (timed out): its response is read and dropped.
    Abandoned,
    /// Answered or failed, its result in the slot's [`Answer`] for its user to take.
    Done,
}

/// Why the requests left on a connection were not answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Why {
    /// The server closed it (the end of the stream, a reset, `Connection: close`).
    Closed,
    /// A response ahead could not be read (malformed, too large), so the connection ended there.
    Broken,
    /// The requests ahead timed out, or the run ended.
    Abandoned,
}

impl Queue {
    fn new(depth: u32) -> Queue {
        Queue {
            depth: usize::try_from(depth.max(1)).unwrap_or(usize::MAX),
            open: true,
            closing: false,
            out: BytesMut::new(),
            written: 0,
            order: VecDeque::new(),
            slots: SlotTable::new(),
            waiting: 0,
            abandoned: 0,
            driver: DriverWaker::default(),
            #[cfg(test)]
            writes: 0,
        }
    }

    /// Queues `request` (a request sent `again` ahead of the first tries not yet written);
    /// `None` when the connection takes no more.
    fn push(&mut self, request: &Outgoing<'_>, again: bool) -> Option<usize> {
        if !self.open {
            return None;
        }
        let end = self.written + self.out.len() as u64;
        // Where it goes in the order: last, or before the first unwritten first try.
        let at = if again {
            self.order
                .iter()
                .position(|&i| self.slots[i].start >= self.written && !self.slots[i].again)
                .unwrap_or(self.order.len())
        } else {
            self.order.len()
        };
        let start = match self.order.get(at) {
            Some(&behind) => self.slots[behind].start,
            None => end,
        };
        if start == end {
            self.out.extend_from_slice(request.wire);
        } else {
            // The failure path: the bytes of the requests behind move along.
            let offset = usize::try_from(start - self.written).unwrap_or(usize::MAX);
            let tail = self.out.split_off(offset);
            self.out.extend_from_slice(request.wire);
            self.out.unsplit(tail);
            let len = request.wire.len() as u64;
            for &i in self.order.range(at..) {
                self.slots[i].start += len;
            }
        }
        let index = match self.slots.reuse() {
            // Filled in place: its `Answer` keeps the waker of the user that left it, most often
            // this very user (see `Answer`).
            Some(index) => {
                let slot = &mut self.slots[index];
                slot.method.clone_from(request.method);
                slot.policy = request.policy;
                slot.start = start;
                slot.again = again;
                slot.state = State::Waiting;
                index
            }
            None => self.slots.grow(QueuedRequest {
                method: request.method.clone(),
                policy: request.policy,
                start,
                again,
                answer: Answer::default(),
                state: State::Waiting,
            }),
        };
        if at == self.order.len() {
            self.order.push_back(index);
        } else {
            self.order.insert(at, index);
        }
        self.waiting += 1;
        self.wake_driver();
        Some(index)
    }

    fn wake_driver(&mut self) {
        self.driver.wake();
    }

    /// Asks the driver to end the connection.
    fn close(&mut self) {
        self.open = false;
        self.closing = true;
        self.wake_driver();
    }

    /// Where the bytes the driver may write end: at most `depth` requests written and unanswered.
    fn write_limit(&self) -> u64 {
        match self.order.get(self.depth) {
            Some(&beyond) => self.slots[beyond].start,
            None => self.written + self.out.len() as u64,
        }
    }

    /// Whether any byte of `slot` has been written.
    fn sent(&self, slot: usize) -> bool {
        self.slots[slot].start < self.written
    }

    /// Hands the oldest request its result.
    fn answer(&mut self, result: Result<Received, Failure>) {
        let Some(index) = self.order.pop_front() else { return };
        let slot = &mut self.slots[index];
        match slot.state {
            State::Abandoned => {
                slot.state = State::Free;
                self.abandoned -= 1;
                self.slots.release(index);
            }
            _ => {
                slot.state = State::Done;
                slot.answer.give(result);
                self.waiting -= 1;
            }
        }
    }

    /// Fails every request left, `why` they were not answered, and closes the connection.
    fn fail_rest(&mut self, why: Why) {
        self.open = false;
        self.closing = true;
        while let Some(&index) = self.order.front() {
            let failure = unanswered(&self.slots[index].method, self.sent(index), why);
            self.answer(failure);
        }
        self.out.clear();
    }
}

/// The failure of a request the connection ended before answering.
fn unanswered(method: &Method, sent: bool, why: Why) -> Result<Received, Failure> {
    let what = match why {
        Why::Closed => "the server closed the pipelined connection before answering",
        Why::Broken => "a response ahead of this one on the pipelined connection could not be read",
        Why::Abandoned => "the pipelined connection was closed after the requests ahead of this one timed out",
    };
    if !sent {
        return Err(Failure::unsent(Error::new(ErrorKind::Io, format!("{what}; the request was not sent"))));
    }
    if method.is_idempotent() {
        return Err(Failure::new(Error::new(ErrorKind::Io, what), true));
    }
    Err(Failure::new(
        Error::new(ErrorKind::Io, format!("{what}; {method} is not idempotent, so it was not sent again")),
        false,
    ))
}
