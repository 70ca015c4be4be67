//! Connections that are not one virtual user's own (`connections = N`, `http2 = true`): a
//! [`Lane`] is one connection slot that several users send on, reopened when it closes.
//!
//! What a lane speaks is settled when it connects: HTTP/2 with prior knowledge on `http://`
//! when `http2` is asked, what ALPN agrees on over TLS (`h2` offered first when `http2` is
//! asked), HTTP/1.1 otherwise, pipelined up to the scenario's depth (`pipeline/`). HTTP/2's
//! streams are in `h2/`. HTTP/3 is asked for, never settled: a lane asking for it opens QUIC
//! connections only (`h3/`, with the `http3` feature).
//!
//! Every request is accounted for once: a protocol that knows its request was not processed
//! (never written, not answered on a pipelined connection the server closed, refused by
//! `GOAWAY` or `REFUSED_STREAM`) says it may be sent again, and the lane sends it on a new
//! connection within the same deadline, a bounded number of times; anything else is the
//! request's error.
//!
//! One user's lane is touched by its worker's thread only: `Rc` and `RefCell`, no lock.

mod exchange;
mod h2;
#[cfg(feature = "http3")]
mod h3;
mod pipeline;
mod table;

use std::cell::RefCell;
use std::future::Future;
use std::rc::Rc;
use std::time::Duration;

use http::Method;
use tokio::sync::Notify;
use tokio::time::Instant;

use super::connection::BodyPolicy;
use super::counters::HttpCounters;
use super::failures;
use super::request_timer::RequestTimer;
use super::response::Response;
use super::stream::Stream;
use super::target::Target;
use crate::config::{Protocol, Transport};
use crate::error::Result;
use crate::http::Recorder;

pub(crate) use self::exchange::{Answer, Exchange, Failure, Received, Reply, Slots};
pub(crate) use self::h2::Http2;
pub(crate) use self::table::{Driven, DriverWaker, Slot, SlotTable};
pub(crate) use pipeline::Pipeline;

/// The QUIC endpoints of one worker, shared by its lanes.
#[cfg(feature = "http3")]
pub(crate) type QuicEndpoints = h3::Endpoints;
/// Without the `http3` feature there are none: a run that asks for HTTP/3 is refused before any
/// load.
#[cfg(not(feature = "http3"))]
#[derive(Debug, Default)]
pub(crate) struct QuicEndpoints;

/// What a request carries to a lane: its encoded HTTP/1.1 form and its parts, for HTTP/2.
#[derive(Debug)]
pub(crate) struct Outgoing<'a> {
    /// The whole request as HTTP/1.1 puts it on the wire; not encoded for a lane that never
    /// speaks HTTP/1.1 ([`Lane::may_speak_http1`]).
    pub(crate) wire: &'a [u8],
    pub(crate) method: &'a Method,
    /// The path and query, joined to the target's base path.
    pub(crate) path: &'a str,
    /// The request's headers and body apart, for HTTP/2 and HTTP/3; empty for a lane that
    /// speaks neither ([`Lane::sends_parts`]).
    pub(crate) headers: &'a http::HeaderMap,
    pub(crate) body: &'a bytes::Bytes,
    /// What becomes of the response's body.
    pub(crate) policy: BodyPolicy,
}

/// The user that sends a request on a lane, asked by [`Lane::exchange`] for what it needs when it
/// needs it: the request, for each try, and the user's timer and counters.
///
/// Asked for, rather than built up front and lent to the exchange: an [`Outgoing`] and a
/// [`UserSide`] made before the exchange would sit in every request's future beside the
/// exchange's own state, written and read back per request (bench/RESULTS.md § Levels of a
/// request's future).
pub(crate) trait Sender {
    /// The request, as it goes on the wire.
    fn request(&self) -> Outgoing<'_>;
    /// All the user's side at once: opening a connection needs its counters while its timer
    /// runs.
    fn user(&mut self) -> UserSide<'_>;
    /// The user's request timer, which bounds each try by the request's deadline.
    fn timer(&mut self) -> &mut RequestTimer;
    /// Where the user counts its responses and retries.
    fn counters(&mut self) -> &mut HttpCounters;
}

/// What a lane's exchange uses of the user that sends on it.
pub(crate) struct UserSide<'a> {
    pub(crate) timer: &'a mut RequestTimer,
    pub(crate) counters: &'a mut HttpCounters,
    pub(crate) recorder: Option<&'a dyn Recorder>,
    pub(crate) timeout: Duration,
}

/// The most times one request is sent again on a new connection, beyond the pipeline's depth: a
/// pipelined request may wait behind `depth - 1` others on connections a server closes after
/// each response, and each new connection answers at least the first.
const RETRIES: u32 = 3;

/// The most times one request that was never written is sent again: it costs no retry of its
/// own (it waited behind others on a connection the server closed), but a server that closes
/// every connection as soon as it is opened must not have it reconnect until its deadline.
const UNSENT_TRIES: u32 = 64;

/// One connection slot shared by the users assigned to it.
#[derive(Debug)]
pub(crate) struct Lane {
    target: Rc<Target>,
    /// For `https://`: the lane's TLS configuration (ALPN offers `h2` first when asked), with a
    /// session cache of its own, so that a reconnect resumes the lane's session.
    tls: Option<super::tls::Config>,
    transport: Transport,
    /// For HTTP/3: the worker's endpoints and the lane's QUIC client configuration.
    #[cfg(feature = "http3")]
    quic: Option<h3::Quic>,
    state: RefCell<State>,
    /// Wakes the users that wait while another one opens the connection.
    opened: Notify,
}

/// A lane's connection slot.
#[derive(Debug, Default)]
enum State {
    /// None open: the next request opens one.
    #[default]
    Closed,
    /// A user is opening it; the others wait for [`Lane::opened`].
    Opening,
    Open(Open),
}

/// A connection a lane opened, and the protocol it speaks.
#[derive(Debug, Clone)]
enum Open {
    Http1(Rc<Pipeline>),
    Http2(Rc<Http2>),
    #[cfg(feature = "http3")]
    Http3(Rc<h3::Http3>),
}

impl Open {
    /// Whether it takes new requests. Always inline, with HTTP/3's arm a call: every request on
    /// a lane asks, and with that arm inlined too the whole was left out of line
    /// (bench/RESULTS.md § HTTP/3's cost to the other protocols' path).
    #[inline(always)]
    fn is_open(&self) -> bool {
        match self {
            Open::Http1(pipeline) => pipeline.is_open(),
            Open::Http2(h2) => h2.is_open(),
            #[cfg(feature = "http3")]
            Open::Http3(h3) => h3.is_open(),
        }
    }

    /// Whether `other` is this very connection.
    fn is(&self, other: &Open) -> bool {
        match (self, other) {
            (Open::Http1(a), Open::Http1(b)) => Rc::ptr_eq(a, b),
            (Open::Http2(a), Open::Http2(b)) => Rc::ptr_eq(a, b),
            #[cfg(feature = "http3")]
            (Open::Http3(a), Open::Http3(b)) => Rc::ptr_eq(a, b),
            _ => false,
        }
    }
}

impl Lane {
    /// The `count` lanes of one worker, for `target` with `transport`; over HTTP/3 they share
    /// the worker's `endpoints`.
    pub(crate) fn for_worker(
        target: &Rc<Target>,
        transport: Transport,
        count: u32,
        endpoints: &Rc<QuicEndpoints>,
    ) -> Vec<Rc<Lane>> {
        #[cfg(not(feature = "http3"))]
        let _ = endpoints;
        (0..count.max(1))
            .map(|_| {
                let tls = target.tls().map(|(client, _)| h2::tls_config(client, transport));
                Rc::new(Lane {
                    target: Rc::clone(target),
                    #[cfg(feature = "http3")]
                    quic: tls
                        .as_ref()
                        .filter(|_| transport.protocol.is_http3())
                        .map(|tls| h3::Quic::new(endpoints, target, tls)),
                    tls,
                    transport,
                    state: RefCell::new(State::Closed),
                    opened: Notify::new(),
                })
            })
            .collect()
    }

    /// Whether this lane's connections may speak HTTP/1.1, and so need a request's HTTP/1.1
    /// bytes: all but HTTP/2 with prior knowledge (`http2` on `http://`) and HTTP/3, which never
    /// do.
    pub(crate) fn may_speak_http1(&self) -> bool {
        match self.transport.protocol {
            Protocol::Http1 => true,
            Protocol::Http2 => self.tls.is_some(),
            Protocol::Http3 => false,
        }
    }

    /// Whether this lane's connections may speak HTTP/2 or HTTP/3, and so need a request's
    /// headers and body apart: only when one of them is asked (ALPN offers `h2` only then).
    pub(crate) fn sends_parts(&self) -> bool {
        self.transport.protocol != Protocol::Http1
    }

    /// Sends `sender`'s request on this lane's connection (opened if need be) and reads its
    /// response, within `deadline`.
    // An `async` block, not an `async fn`, as `Ctx::execute`: its arguments are then in its state
    // once, not twice.
    #[allow(clippy::manual_async_fn)]
    pub(crate) fn exchange<'a, U: Sender + 'a>(
        &'a self,
        mut sender: U,
        deadline: Instant,
    ) -> impl Future<Output = Result<Response>> + 'a {
        async move {
            // Resends so far: `[written before, never written]`.
            let mut tries = [0u32; 2];
            // Whether this is the request's second or later try: a pipeline sends it ahead of
            // first tries, or the users that got answered would take the front of every new
            // connection, and a server closing after K responses would fail it every time.
            let mut again = false;
            loop {
                let open = match self.current() {
                    Some(open) => open,
                    None => {
                        let user = sender.user();
                        // Boxed: opening is rare, and its future would otherwise be part of (and
                        // copied with) every request's, the unshared path's too (`Ctx::exchange`).
                        let opening = Box::pin(self.connection(user.counters, user.recorder));
                        match user.timer.within(deadline, opening).await {
                            Some(open) => open?,
                            None if self.transport.protocol.is_http3() => {
                                return Err(failures::quic_handshake_timed_out(user.timeout));
                            }
                            None => return Err(failures::timed_out(user.timeout)),
                        }
                    }
                };
                let outcome = match &open {
                    Open::Http1(pipeline) => {
                        let exchange = pipeline.exchange(&sender.request(), again);
                        sender.timer().within(deadline, exchange).await
                    }
                    Open::Http2(h2) => {
                        let exchange = h2.exchange(&sender.request());
                        sender.timer().within(deadline, exchange).await
                    }
                    #[cfg(feature = "http3")]
                    Open::Http3(h3) => {
                        // Boxed: its future is h3's and quinn's, larger than the others', and
                        // would otherwise widen every request's future on every lane.
                        let exchange = Box::pin(h3.exchange(&sender.request()));
                        let outcome = sender.timer().within(deadline, exchange).await;
                        h3_recorded(h3, &mut sender, outcome)
                    }
                };
                match outcome {
                    Some(Ok(reply)) => {
                        let counters = sender.counters();
                        counters.responses += 1;
                        counters.status.count(reply.response.status());
                        counters.bytes_received += reply.body_len;
                        counters.http2_responses += u64::from(matches!(open, Open::Http2(_)));
                        return Ok(reply.response);
                    }
                    Some(Err(failure)) => {
                        self.forget(&open);
                        // A request never written costs none of its retries (it waited behind others
                        // on a connection the server closed): it has a larger budget of its own.
                        let budget = if failure.unsent { UNSENT_TRIES } else { RETRIES + self.transport.depth() };
                        if failure.retry && tries[usize::from(failure.unsent)] < budget {
                            tries[usize::from(failure.unsent)] += 1;
                            again = true;
                            sender.counters().retries += 1;
                            continue;
                        }
                        return Err(failure.error);
                    }
                    None => return Err(self.timed_out(&open, sender.user().timeout)),
                }
            }
        }
    }

    /// The connection, if it is open: the path of every request but the first on it.
    fn current(&self) -> Option<Open> {
        match &*self.state.borrow() {
            State::Open(open) if open.is_open() => Some(open.clone()),
            _ => None,
        }
    }

    /// The open connection, opened by this user if there is none and no other user is opening
    /// one (then this one waits for it).
    async fn connection(&self, counters: &mut HttpCounters, recorder: Option<&dyn Recorder>) -> Result<Open> {
        loop {
            if let Some(open) = self.current() {
                return Ok(open);
            }
            if matches!(*self.state.borrow(), State::Opening) {
                // Registered before the state is looked at again, so that a wake between the
                // two is not lost.
                let opened = self.opened.notified();
                if matches!(*self.state.borrow(), State::Opening) {
                    opened.await;
                }
                continue;
            }
            // Closed, or a connection that no longer takes requests: this user opens one.
            *self.state.borrow_mut() = State::Opening;
            // Whatever happens below (an error, or this future dropped at its deadline), the
            // slot does not stay `Opening`.
            let mut reset = ResetOnDrop { lane: self, armed: true };
            let opened = self.open(counters, recorder).await;
            reset.armed = false;
            *self.state.borrow_mut() = match &opened {
                Ok(open) => State::Open(open.clone()),
                Err(_) => State::Closed,
            };
            self.opened.notify_waiters();
            return opened;
        }
    }

    /// Opens a connection and starts the protocol it speaks.
    async fn open(&self, counters: &mut HttpCounters, recorder: Option<&dyn Recorder>) -> Result<Open> {
        if self.transport.protocol.is_http3() {
            #[cfg(feature = "http3")]
            if let Some(quic) = &self.quic {
                let h3 = quic.connect(self.target.addr(), counters, recorder).await?;
                return Ok(Open::Http3(Rc::new(h3)));
            }
            // Refused before any load (`harness/run.rs`); never TCP in its place.
            return Err(crate::error::Error::new(
                crate::error::ErrorKind::Connect,
                "HTTP/3 needs an https:// target and loadbench-runtime's `http3` feature",
            ));
        }
        let name = self.target.tls().map(|(_, name)| name);
        let tls = self.tls.as_ref().zip(name);
        // Boxed as in `Ctx::exchange`: opening is rare.
        let opened = Box::pin(Stream::open(self.target.addr(), tls)).await;
        let stream = failures::connected(opened, self.target.addr(), counters, recorder)?;
        if h2::speaks_h2(&stream, self.transport) {
            Ok(Open::Http2(Rc::new(Http2::start(stream, &self.target))))
        } else {
            Ok(Open::Http1(Rc::new(Pipeline::start(stream, self.transport.depth()))))
        }
    }

    /// The error of a request on `open` that did not complete within `timeout`. A 0-RTT
    /// connection whose handshake is unfinished is a QUIC handshake that timed out, and is given
    /// up as a 1-RTT one past its deadline is: the next request opens anew.
    #[cold]
    #[cfg_attr(not(feature = "http3"), allow(unused_variables))]
    fn timed_out(&self, open: &Open, timeout: Duration) -> crate::error::Error {
        #[cfg(feature = "http3")]
        if let Open::Http3(h3) = open
            && h3.handshake() != h3::Handshake::Complete
        {
            h3.abandon();
            self.forget(open);
            return failures::quic_handshake_timed_out(timeout);
        }
        failures::timed_out(timeout)
    }

    /// Drops `open` from the slot if it is still the slot's connection: the next request opens
    /// a new one. A connection other users still wait on finishes their exchanges by itself.
    fn forget(&self, open: &Open) {
        let mut state = self.state.borrow_mut();
        if let State::Open(current) = &*state
            && current.is(open)
            && !current.is_open()
        {
            *state = State::Closed;
        }
    }
}

/// Records what an HTTP/3 exchange measured beyond its latency (its time to first byte, and
/// the connection's 0-RTT answer once it is in), counts its response as HTTP/3's, and hands
/// back its reply.
#[cfg(feature = "http3")]
fn h3_recorded<U: Sender>(
    h3: &h3::Http3,
    sender: &mut U,
    outcome: Option<std::result::Result<h3::Answered, Failure>>,
) -> Option<std::result::Result<Reply, Failure>> {
    // Counted here rather than with every protocol's responses: the other protocols' path then
    // writes nothing more.
    if let Some(Ok(_)) = &outcome {
        sender.counters().http3_responses += 1;
    }
    // A 0-RTT connection is one once its handshake completes: a server gone never answers.
    let zero_rtt = h3.take_zero_rtt().filter(|answer| answer.established);
    if zero_rtt.is_some() {
        sender.counters().connections += 1;
    }
    let recorder = sender.user().recorder;
    if let Some(recorder) = recorder {
        if let Some(h3::ZeroRtt { accepted, elapsed, .. }) = zero_rtt {
            recorder.record_quic(crate::http::QuicTiming::ZeroRtt { elapsed, accepted });
        }
        if let Some(Ok(answered)) = &outcome {
            recorder.record_quic(crate::http::QuicTiming::FirstByte(answered.first_byte));
        }
    }
    outcome.map(|result| result.map(|answered| answered.reply))
}

/// Puts a lane back to `Closed` if the user opening it stops before it is done.
struct ResetOnDrop<'a> {
    lane: &'a Lane,
    armed: bool,
}

impl Drop for ResetOnDrop<'_> {
    fn drop(&mut self) {
        if self.armed {
            *self.lane.state.borrow_mut() = State::Closed;
            self.lane.opened.notify_waiters();
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn only_http2_with_prior_knowledge_never_needs_http1_bytes() {
        let target = Rc::new(Target::resolve("http://127.0.0.1:1/").unwrap());
        let lane = |http2| {
            let protocol = crate::config::Protocol::from_http2(http2);
            Lane::for_worker(&target, Transport { connections: Some(1), pipeline: None, protocol }, 1, &Rc::default())
        };
        assert!(!lane(true)[0].may_speak_http1());
        assert!(lane(false)[0].may_speak_http1());
        assert!(lane(true)[0].sends_parts());
        assert!(!lane(false)[0].sends_parts());
    }
}
