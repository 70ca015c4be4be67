//! Over 500 lines because the streams, settings and windows are one state users and driver share.
//!
//! What an HTTP/2 connection's users and its driver share: the streams' table, the frames to
//! write, the server's settings and the send windows.
//!
//! Nothing is allocated per request once the table has grown to the lane's users: slots are
//! reused through a free list, each keeping its header block's buffer.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::task::Waker;

use bytes::{Buf, Bytes, BytesMut};
use http::StatusCode;

use super::frame::{self, DEFAULT_MAX_FRAME, DEFAULT_WINDOW};
use super::hpack::{self, RequestHead};
use super::{CONNECTION_WINDOW, MAX_PENDING_ACKS, OUTPUT_BOUND, STREAM_WINDOW, STREAMS_BEFORE_SETTINGS};
use crate::error::{Error, ErrorKind};
use crate::http::wire::connection::{BodyPolicy, ExchangeError};
use crate::http::wire::response::Parts;
use crate::http::wire::shared::{Answer, DriverWaker, Failure, Received, Reply, Slot, SlotTable, Slots};

/// The largest stream id.
const MAX_STREAM_ID: u32 = (1 << 31) - 1;

#[derive(Debug)]
pub(crate) struct Conn {
    /// Takes new streams: not closed, no `GOAWAY`, not failed.
    pub(super) open: bool,
    /// Asked to end (the lane is gone): the driver says GOAWAY and closes the connection.
    pub(super) closing: bool,
    /// The server's SETTINGS have come: it speaks HTTP/2. Until then, a connection with prior
    /// knowledge that fails is most likely a server that does not.
    pub(super) answered: bool,
    pub(super) https: bool,
    pub(super) addr: SocketAddr,
    authority: String,
    /// The server's `MAX_CONCURRENT_STREAMS`.
    pub(super) max_streams: usize,
    /// The most a response's header list may cost, advertised in our
    /// `SETTINGS_MAX_HEADER_LIST_SIZE`: a head or trailers past it fail their request, and no
    /// header block is buffered beyond it.
    pub(super) max_header_list: usize,
    /// The server's `MAX_FRAME_SIZE`: the most a frame this client writes carries.
    pub(super) max_frame: usize,
    /// The server's `INITIAL_WINDOW_SIZE`: a new stream's send window.
    pub(super) initial_window: i64,
    /// The connection's send window.
    pub(super) send_window: i64,
    next_id: u32,
    /// Frames not yet written.
    pub(super) out: BytesMut,
    /// Bytes written since the connection opened: where `out` begins in its output.
    written: u64,
    /// Bytes queued in answer to the server (acknowledgements, resets) and not known to be
    /// written, the acknowledgements of its PING and SETTINGS among them, and where the last of
    /// them ends in the output: all are written once `written` reaches it. Counted where such a
    /// frame is queued, so that requests cost nothing; window updates (13 bytes per 8 MiB
    /// received) are left out.
    replies: usize,
    acks: u32,
    replies_end: u64,
    /// Streams finished (answered, reset or failed), counted: a request given up while this is
    /// what it was when the request was queued saw no stream of the connection end in all that
    /// time. Counted per stream rather than per frame received, which would cost the driver a
    /// test on every frame.
    answers: u64,
    slots: SlotTable<StreamEntry>,
    /// The open streams' ids and slots, oldest first: responses mostly come in that order, so
    /// the one looked for is near the front, and taken off without moving the rest.
    active: VecDeque<(u32, usize)>,
    /// Requests waiting for room under `max_streams`, in order.
    pending: VecDeque<usize>,
    /// Open streams with request body left to send.
    bodies: Vec<usize>,
    pub(super) driver: DriverWaker,
}

/// One request's place in the table.
#[derive(Debug)]
pub(super) struct StreamEntry {
    pub(super) id: u32,
    pub(super) policy: BodyPolicy,
    /// The connection's [`Conn::answers`] when the request was queued.
    heard: u64,
    /// Its header block, while it waits for a stream.
    block: Vec<u8>,
    /// Request body not yet sent.
    body: Bytes,
    /// Its send window.
    window: i64,
    /// Its receive window, and what arrived since some was given back.
    pub(super) recv_window: i64,
    pub(super) recv_unacked: u32,
    /// The response's status and head, once its final HEADERS came.
    pub(super) head: Option<(StatusCode, Bytes, bool)>,
    /// The request is a `HEAD`: its response has no content, whatever its length says.
    pub(super) head_request: bool,
    /// The response's `content-length`, which its DATA must add up to; `None` without one, or
    /// for a response that has no content.
    pub(super) content_length: Option<u64>,
    pub(super) body_in: BodyIn,
    answer: Answer,
    pub(super) state: State,
}

/// A response body as it arrives, behind a copy of its head: the first DATA frame copied once,
/// more joined.
#[derive(Debug, Default)]
pub(super) struct BodyIn {
    pub(super) kept: BytesMut,
    pub(super) len: u64,
}

#[derive(Debug)]
pub(super) enum State {
    /// Not in use; in the free list.
    Free,
    /// Waiting for room under the server's limit.
    Pending,
    /// Its HEADERS are written (or queued to be): a stream of the connection's.
    Open,
    /// Answered or failed, its result in the slot's [`Answer`] for its user to take.
    Done,
}

impl Conn {
    /// A connection to `addr`, whose response header lists may cost at most `max_header_list`
    /// bytes.
    pub(super) fn new(https: bool, authority: &[u8], addr: SocketAddr, max_header_list: u32) -> Conn {
        let mut out = BytesMut::with_capacity(4096);
        out.extend_from_slice(frame::PREFACE);
        frame::settings(
            &mut out,
            &[
                (frame::SETTINGS_ENABLE_PUSH, 0),
                (frame::SETTINGS_INITIAL_WINDOW_SIZE, STREAM_WINDOW),
                (frame::SETTINGS_MAX_HEADER_LIST_SIZE, max_header_list),
            ],
        );
        frame::window_update(&mut out, 0, CONNECTION_WINDOW - DEFAULT_WINDOW as u32);
        Conn {
            open: true,
            closing: false,
            answered: false,
            https,
            addr,
            authority: String::from_utf8_lossy(authority).into_owned(),
            max_streams: STREAMS_BEFORE_SETTINGS,
            max_header_list: usize::try_from(max_header_list).unwrap_or(usize::MAX),
            max_frame: DEFAULT_MAX_FRAME,
            initial_window: DEFAULT_WINDOW,
            send_window: DEFAULT_WINDOW,
            next_id: 1,
            out,
            written: 0,
            replies: 0,
            acks: 0,
            replies_end: 0,
            answers: 0,
            slots: SlotTable::new(),
            active: VecDeque::new(),
            pending: VecDeque::new(),
            bodies: Vec::new(),
            driver: DriverWaker::default(),
        }
    }

    /// Queues a request: its stream opened at once if there is room; `None` when the
    /// connection takes no new streams.
    pub(super) fn push(&mut self, request: &crate::http::wire::shared::Outgoing<'_>) -> Option<usize> {
        if !self.open {
            return None;
        }
        let index = match self.slots.reuse() {
            Some(index) => index,
            None => self.slots.grow(StreamEntry::new()),
        };
        let slot = &mut self.slots[index];
        let head = RequestHead {
            method: request.method,
            https: self.https,
            authority: &self.authority,
            path: request.path,
            headers: request.headers,
        };
        hpack::encode_request(&mut slot.block, &head);
        slot.policy = request.policy;
        slot.heard = self.answers;
        slot.body = request.body.clone();
        slot.head = None;
        slot.head_request = *request.method == http::Method::HEAD;
        slot.content_length = None;
        slot.body_in = BodyIn::default();
        slot.state = State::Pending;
        if self.pending.is_empty() && self.active.len() < self.max_streams {
            self.open_stream(index);
        } else {
            self.pending.push_back(index);
        }
        self.wake_driver();
        Some(index)
    }

    /// Writes `index`'s HEADERS on a new stream, and as much of its body as the windows allow.
    fn open_stream(&mut self, index: usize) {
        if self.next_id > MAX_STREAM_ID {
            // Every id used: this connection takes no more streams.
            self.open = false;
            self.finish(index, Err(unsent_failure("the HTTP/2 connection ran out of stream ids")));
            return;
        }
        let id = self.next_id;
        self.next_id += 2;
        let slot = &mut self.slots[index];
        slot.id = id;
        slot.window = self.initial_window;
        slot.recv_window = i64::from(STREAM_WINDOW);
        slot.recv_unacked = 0;
        slot.state = State::Open;
        frame::headers(&mut self.out, id, &slot.block, slot.body.is_empty(), self.max_frame);
        self.active.push_back((id, index));
        if !slot.body.is_empty() {
            self.bodies.push(index);
            self.send_bodies();
        }
    }

    /// Opens the waiting streams there is room for now.
    pub(super) fn open_pending(&mut self) {
        while self.open && self.active.len() < self.max_streams {
            let Some(index) = self.pending.pop_front() else { break };
            self.open_stream(index);
        }
    }

    /// Sends request body as the connection's and the streams' windows allow.
    pub(super) fn send_bodies(&mut self) {
        let mut i = 0;
        while i < self.bodies.len() && self.send_window > 0 {
            let slot = &mut self.slots[self.bodies[i]];
            while !slot.body.is_empty() && slot.window > 0 && self.send_window > 0 {
                let room = slot.window.min(self.send_window).min(self.max_frame as i64);
                let n = slot.body.len().min(usize::try_from(room).unwrap_or(0));
                frame::data(&mut self.out, slot.id, &slot.body[..n], n == slot.body.len());
                slot.body.advance(n);
                slot.window -= n as i64;
                self.send_window -= n as i64;
            }
            if slot.body.is_empty() {
                self.bodies.swap_remove(i);
            } else {
                i += 1;
            }
        }
    }

    /// Takes `n` written bytes off the output.
    pub(super) fn wrote(&mut self, n: usize) {
        self.out.advance(n);
        self.written += n as u64;
        if self.written >= self.replies_end {
            self.replies = 0;
            self.acks = 0;
        }
    }

    /// Counts what was queued after `before` bytes of the output as an answer to the server.
    fn replied(&mut self, before: usize) {
        self.replies += self.out.len() - before;
        self.replies_end = self.written + self.out.len() as u64;
    }

    /// Queues the acknowledgement of a PING with `payload`, or of SETTINGS (`None`): `false`
    /// when more than [`MAX_PENDING_ACKS`] now wait unwritten, and the connection must end.
    pub(super) fn ack(&mut self, ping: Option<&[u8]>) -> bool {
        let before = self.out.len();
        match ping {
            Some(payload) => frame::ping_ack(&mut self.out, payload),
            None => frame::settings_ack(&mut self.out),
        }
        self.replied(before);
        self.acks += 1;
        self.acks <= MAX_PENDING_ACKS
    }

    /// Whether more than [`OUTPUT_BOUND`] bytes queued in answer to the server wait unwritten:
    /// the driver reads nothing more until the socket takes some.
    pub(super) fn output_full(&self) -> bool {
        self.replies > OUTPUT_BOUND
    }

    /// Adds `increment` to a stream's send window (`index`'s), or the connection's.
    pub(super) fn grow_window(&mut self, index: Option<usize>, increment: i64) -> bool {
        let window = match index {
            Some(index) => &mut self.slots[index].window,
            None => &mut self.send_window,
        };
        *window += increment;
        *window <= frame::MAX_WINDOW
    }

    /// Applies a new `INITIAL_WINDOW_SIZE` to the open streams' send windows.
    pub(super) fn set_initial_window(&mut self, value: i64) -> bool {
        let delta = value - self.initial_window;
        self.initial_window = value;
        let mut fits = true;
        for &(_, index) in &self.active {
            let window = &mut self.slots[index].window;
            *window += delta;
            fits &= *window <= frame::MAX_WINDOW;
        }
        fits
    }

    /// The slot of open stream `id`.
    pub(super) fn stream(&self, id: u32) -> Option<usize> {
        self.active.iter().find(|&&(open, _)| open == id).map(|&(_, index)| index)
    }

    pub(super) fn slot_mut(&mut self, index: usize) -> &mut StreamEntry {
        &mut self.slots[index]
    }

    /// Hands `index` its result and closes its stream, if it has one.
    pub(super) fn finish(&mut self, index: usize, result: Result<Received, Failure>) {
        self.answers += 1;
        self.unlist(index);
        let slot = &mut self.slots[index];
        slot.body = Bytes::new();
        slot.state = State::Done;
        slot.answer.give(result);
    }

    /// The complete response of `index`, whose stream ended.
    pub(super) fn answer(&mut self, index: usize) {
        let slot = &mut self.slots[index];
        let Some((status, head, sets_cookie)) = slot.head.take() else { return };
        let body_in = std::mem::take(&mut slot.body_in);
        // A kept body follows a copy of its head (`Driver::data`).
        let body_at = head.len();
        let message = if body_in.kept.is_empty() { head } else { body_in.kept.freeze() };
        let parts = Parts::new(status, message, body_at, sets_cookie);
        self.finish(index, Ok(Received { parts, body_len: body_in.len }));
    }

    /// Cancels the stream of `index` (`RST_STREAM` with `code`) and fails its request.
    pub(super) fn reset(&mut self, index: usize, code: u32, failure: Failure) {
        let before = self.out.len();
        frame::rst_stream(&mut self.out, self.slots[index].id, code);
        self.replied(before);
        self.finish(index, Err(failure));
    }

    /// Takes `index` off the open and waiting lists.
    fn unlist(&mut self, index: usize) {
        match self.slots[index].state {
            State::Open => {
                if let Some(at) = self.active.iter().position(|&(_, i)| i == index) {
                    self.active.remove(at);
                }
                if let Some(at) = self.bodies.iter().position(|&i| i == index) {
                    self.bodies.swap_remove(at);
                }
            }
            State::Pending => {
                if let Some(at) = self.pending.iter().position(|&i| i == index) {
                    self.pending.remove(at);
                }
            }
            State::Free | State::Done => {}
        }
    }

    /// The server's `GOAWAY`: no new streams; those above `last` were not processed and those
    /// not opened were never sent, so both may go on a new connection.
    pub(super) fn go_away(&mut self, last: u32, code: u32) {
        self.open = false;
        let refused: Vec<usize> = self.active.iter().filter(|&&(id, _)| id > last).map(|&(_, i)| i).collect();
        for index in refused {
            let text = format!("the server closed the connection (GOAWAY {}) before this request", frame::reason(code));
            self.finish(index, Err(Failure::new(Error::new(ErrorKind::Io, text), true)));
        }
        self.fail_pending();
    }

    /// Fails the requests that never got a stream: they may be sent again.
    fn fail_pending(&mut self) {
        while let Some(index) = self.pending.pop_front() {
            let failure = unsent_failure("the HTTP/2 connection closed before the request was sent");
            self.finish(index, Err(failure));
        }
    }

    /// Fails everything left on a connection that ended: the open streams with `failure`'s
    /// error, the waiting ones as never sent.
    pub(super) fn fail_all(&mut self, failure: &dyn Fn() -> Failure) {
        self.open = false;
        while let Some(&(_, index)) = self.active.front() {
            self.finish(index, Err(failure()));
        }
        self.fail_pending();
    }

    /// Whether the connection has nothing more to do: it takes no new streams and none is left.
    pub(super) fn idle_and_gone(&self) -> bool {
        !self.open && self.active.is_empty() && self.pending.is_empty()
    }

    pub(super) fn wake_driver(&mut self) {
        self.driver.wake();
    }

    /// Takes no new streams: the lane opens another connection, and the requests waiting for a
    /// stream here are sent there.
    fn retire(&mut self) {
        self.open = false;
        self.fail_pending();
    }

    /// Asks the driver to end the connection.
    pub(super) fn close(&mut self) {
        self.open = false;
        self.closing = true;
        self.wake_driver();
    }
}

impl Slots for Conn {
    const REFUSED: &'static str = "the HTTP/2 connection takes no new streams";

    fn take(&mut self, index: usize, waker: &Waker) -> Option<Result<Reply, Failure>> {
        self.slots.take(index, waker)
    }

    /// An open stream is cancelled (`RST_STREAM` with `CANCEL`).
    ///
    /// A request given up (its timeout, or the run's end) with no stream of the connection
    /// finished since it was queued means a connection that answered nothing for as long as its
    /// user waited: it takes no new streams, so that the lane opens another for the next
    /// requests, and the requests waiting for a stream go there. Those still open on it stay until
    /// they are answered or time out (their kind stays `timeout`). Judged by the streams, not by a
    /// PING: a server whose application is wedged still answers PINGs, which its HTTP/2 layer
    /// does, and what users wait for is their responses.
    fn abandon(&mut self, index: usize) {
        let stalled =
            matches!(self.slots[index].state, State::Open | State::Pending) && self.slots[index].heard == self.answers;
        if matches!(self.slots[index].state, State::Open) && !self.closing {
            let before = self.out.len();
            frame::rst_stream(&mut self.out, self.slots[index].id, frame::CANCEL);
            self.replied(before);
            self.wake_driver();
        }
        self.unlist(index);
        let slot = &mut self.slots[index];
        slot.state = State::Free;
        slot.answer.clear();
        slot.body = Bytes::new();
        slot.body_in = BodyIn::default();
        self.slots.release(index);
        if stalled {
            self.retire();
        }
        // Room for one waiting stream.
        self.open_pending();
    }

    fn is_open(&self) -> bool {
        self.open
    }

    fn close(&mut self) {
        Conn::close(self);
    }
}

impl Slot for StreamEntry {
    #[inline]
    fn answer(&mut self) -> &mut Answer {
        &mut self.answer
    }

    #[inline]
    fn set_free(&mut self) {
        self.state = State::Free;
    }
}

impl StreamEntry {
    fn new() -> StreamEntry {
        StreamEntry {
            id: 0,
            policy: BodyPolicy::Discard,
            heard: 0,
            block: Vec::new(),
            body: Bytes::new(),
            window: 0,
            recv_window: 0,
            recv_unacked: 0,
            head: None,
            head_request: false,
            content_length: None,
            body_in: BodyIn::default(),
            answer: Answer::default(),
            state: State::Free,
        }
    }
}

/// The failure of a request that was never written: it may be sent again.
fn unsent_failure(text: &str) -> Failure {
    Failure::unsent(Error::new(ErrorKind::Io, text))
}

/// A response body longer than the request keeps.
pub(super) fn too_large(limit: u64) -> Failure {
    Failure::new(
        Error::with_source(ErrorKind::BodyTooLarge, "request failed", ExchangeError::BodyTooLarge { limit }),
        false,
    )
}
