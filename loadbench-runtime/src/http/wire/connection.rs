//! One virtual user's keep-alive HTTP/1.1 connection: a socket (TCP, or TLS over it), a read
//! buffer and a write buffer, reused for every request.
//!
//! Why not hyper's client: a virtual user has exactly one request in flight, so hyper's
//! machinery for the general case (a request channel to a connection task, a oneshot for the
//! response, a `HeaderMap` built for every response, a body channel) is the whole per-request
//! cost of the generator, and less CPU per request than wrk is out of reach with it
//! (bench/RESULTS.md § HTTP/1.1 client). What is left here is one `write` and usually one `read`
//! per request, httparse (hyper's own parser) for the head, and the framing rules in `h1.rs`. Every
//! test server is hyper's, so this client is checked against hyper on every run of the suite.

use std::future::Future;
use std::pin::{Pin, pin};
use std::task::{Context, Poll};

use bytes::{Buf, Bytes, BytesMut};
use http::{Method, StatusCode};
use tokio::io::{AsyncReadExt, AsyncWrite};

use super::h1::{self, BodyLength, Chunked, Head, ProtocolError};
use super::response::{Parts, Response};
use super::stream::Stream;

/// Bytes kept free in the read buffer before each read: a typical small response fits in one
/// read, and 1,000 idle connections hold 4 MiB rather than hyper's 16+ MiB.
const READ_CHUNK: usize = 4 * 1024;

/// Largest step the read buffer grows by while a big body arrives, so that a server announcing
/// an absurd `Content-Length` cannot make us allocate it up front.
const MAX_RESERVE: usize = 1024 * 1024;

/// Room made for each read of a body that is dropped as it arrives: few system calls per
/// megabyte, and a bounded buffer per connection whatever the body's size.
const DISCARD_CHUNK: usize = 64 * 1024;

/// What becomes of a response's body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BodyPolicy {
    /// Kept for the scenario, up to this many bytes: a longer body fails the exchange with
    /// [`ExchangeError::BodyTooLarge`] as soon as it is known to be longer.
    Keep(u64),
    /// Counted and dropped as it arrives.
    Discard,
}

/// An open keep-alive connection.
#[derive(Debug)]
pub(crate) struct Http1Connection {
    stream: Stream,
    /// Bytes read but not yet consumed.
    read: BytesMut,
    /// False once a response said the connection ends after it.
    reusable: bool,
    phase: Phase,
    /// A chunked body being decoded.
    chunks: BytesMut,
    /// What the current exchange does with the body.
    policy: BodyPolicy,
    /// Bytes of the current body received, where that is not simply the buffer's length (a body
    /// dropped or decoded as it arrives). Here rather than in [`Phase::Body`], which is moved on
    /// every poll.
    received: u64,
    /// Whether the current exchange has passed a 1xx head: then part of the response has
    /// arrived, and the request is not sent again.
    informational: bool,
    /// The last head, parsed once for the responses that repeat it.
    heads: h1::HeadMemo,
}

/// A response as read off the wire.
#[derive(Debug)]
pub(crate) struct RawResponse {
    pub(crate) status: StatusCode,
    /// The head's bytes (kept for [`crate::Response::headers`]), then the body's, or nothing
    /// when it was discarded.
    pub(crate) message: Bytes,
    /// Where the body starts in `message`.
    pub(crate) body_at: usize,
    /// The body's length as received, kept or not.
    pub(crate) body_len: u64,
    /// Whether the head has a `Set-Cookie` header.
    pub(crate) sets_cookie: bool,
}

impl RawResponse {
    /// The response as a scenario sees it.
    pub(crate) fn into_response(self) -> Response {
        Response::from_parts(self.into_parts())
    }

    /// The response's parts, unboxed, for a shared connection's slot.
    pub(crate) fn into_parts(self) -> Parts {
        Parts::new(self.status, self.message, self.body_at, self.sets_cookie)
    }

    /// The body received, empty when it was discarded.
    #[cfg(test)]
    pub(crate) fn body(&self) -> &[u8] {
        self.message.get(self.body_at..).unwrap_or_default()
    }
}

/// Why an exchange failed. All of them leave the connection unusable.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ExchangeError {
    #[error("writing the request failed")]
    Write(#[source] std::io::Error),
    #[error("reading the response failed")]
    Read(#[source] std::io::Error),
    #[error("the server closed the connection before the response was complete")]
    Closed,
    #[error("the response body is larger than the limit of {limit} bytes (`max_body`)")]
    BodyTooLarge { limit: u64 },
    #[error(transparent)]
    Protocol(#[from] ProtocolError),
}

impl ExchangeError {
    /// The system's (or the TLS session's) error, for a failed read or write.
    pub(crate) fn io_error(&self) -> Option<&std::io::Error> {
        match self {
            ExchangeError::Write(e) | ExchangeError::Read(e) => Some(e),
            _ => None,
        }
    }

    /// Whether this is how a reused keep-alive connection ends when the server closed it just
    /// as the request went out: the end of the stream, or a reset, before any byte of the
    /// response. Then the server cannot have begun to answer, and an idempotent request can
    /// be sent again on a new connection.
    pub(crate) fn is_stale_connection(&self) -> bool {
        use std::io::ErrorKind as Io;
        match self {
            ExchangeError::Closed => true,
            ExchangeError::Write(e) | ExchangeError::Read(e) => {
                matches!(e.kind(), Io::ConnectionReset | Io::ConnectionAborted | Io::BrokenPipe | Io::UnexpectedEof)
            }
            ExchangeError::BodyTooLarge { .. } | ExchangeError::Protocol(_) => false,
        }
    }
}

impl Http1Connection {
    /// A connection over `stream`, opened by [`Stream::open`].
    pub(crate) fn new(stream: Stream) -> Http1Connection {
        Http1Connection {
            stream,
            read: BytesMut::new(),
            reusable: true,
            phase: Phase::Idle,
            chunks: BytesMut::new(),
            policy: BodyPolicy::Discard,
            received: 0,
            informational: false,
            heads: h1::HeadMemo::default(),
        }
    }

    /// Whether an idle connection can take another request: the last response allowed it, and
    /// the server has neither closed it nor sent anything unasked since.
    ///
    /// hyper's client makes the same check before each request, so that a keep-alive connection
    /// the server dropped is replaced instead of failing a request.
    pub(crate) fn idle_ok(&mut self) -> bool {
        self.reusable && self.read.is_empty() && self.stream.idle_ok()
    }

    /// Sends `request` (a whole encoded request) and reads the whole response to it.
    #[cfg(test)]
    pub(crate) async fn exchange(
        &mut self,
        request: &[u8],
        method: &Method,
        policy: BodyPolicy,
    ) -> Result<RawResponse, ExchangeError> {
        self.begin(policy);
        std::future::poll_fn(|cx| self.poll_exchange(cx, request, method)).await
    }

    /// Starts a new exchange; then [`poll_exchange`](Self::poll_exchange) until it is ready.
    pub(crate) fn begin(&mut self, policy: BodyPolicy) {
        self.reusable = false; // until a complete response says otherwise
        self.phase = Phase::Write { written: 0 };
        self.policy = policy;
        self.informational = false;
    }

    /// Starts reading the next response on a connection whose requests are written elsewhere
    /// (a pipeline writes many at once); then [`poll_exchange`](Self::poll_exchange) with no
    /// request bytes until it is ready. What the read buffer holds beyond the last response is
    /// the start of this one.
    pub(crate) fn begin_response(&mut self, policy: BodyPolicy) {
        self.begin(policy);
        self.phase = Phase::Head;
    }

    /// Whether the last complete response let the connection carry more requests.
    pub(crate) fn reusable(&self) -> bool {
        self.reusable
    }

    /// The socket, for a pipeline that writes its queued requests itself.
    pub(crate) fn stream_mut(&mut self) -> &mut Stream {
        &mut self.stream
    }

    /// Watches a connection with no request in flight: ready once it cannot carry another (the
    /// server closed it, it failed, or the server sent bytes nobody asked for). Pending, with
    /// the socket's waker registered, while it stays open and quiet.
    pub(crate) fn poll_idle_end(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if !self.reusable || !self.read.is_empty() {
            return Poll::Ready(());
        }
        // Anything at all (data, the end, an error) ends it; a TLS session ticket is taken by
        // rustls and reads as nothing yet.
        self.poll_fill(cx, READ_CHUNK).map(|_| ())
    }

    /// Whether a failed exchange may be sent again on a new connection: nothing of its response
    /// arrived, and `err` is how a connection the server had closed fails.
    pub(crate) fn may_retry(&self, err: &ExchangeError) -> bool {
        // Bytes of a head stay in the buffer until it is complete, and a complete one is either
        // a 1xx (flagged) or the start of a body (the phase says so): nothing derived here costs
        // the common path a thing.
        let nothing_received = self.read.is_empty() && !self.informational && !matches!(self.phase, Phase::Body { .. });
        nothing_received && err.is_stale_connection()
    }

    /// Drives the exchange [`begin`](Self::begin) started: writes `request`, reads the head,
    /// then the body.
    ///
    /// A hand-written state machine rather than an `async fn`: its state lives in the connection,
    /// so the future a scenario awaits is a few pointers instead of the nested states of a write,
    /// a read and a body, copied each time it moves.
    pub(crate) fn poll_exchange(
        &mut self,
        cx: &mut Context<'_>,
        request: &[u8],
        method: &Method,
    ) -> Poll<Result<RawResponse, ExchangeError>> {
        loop {
            match std::mem::replace(&mut self.phase, Phase::Idle) {
                Phase::Idle => return Poll::Ready(Err(ExchangeError::Closed)),
                Phase::Write { mut written } => {
                    while written < request.len() {
                        match Pin::new(&mut self.stream).poll_write(cx, &request[written..]) {
                            Poll::Pending => {
                                self.phase = Phase::Write { written };
                                return Poll::Pending;
                            }
                            Poll::Ready(Ok(0)) => {
                                return Poll::Ready(Err(ExchangeError::Write(std::io::ErrorKind::WriteZero.into())));
                            }
                            Poll::Ready(Ok(n)) => written += n,
                            Poll::Ready(Err(e)) => return Poll::Ready(Err(ExchangeError::Write(e))),
                        }
                    }
                    // Written to a TCP socket is sent; a TLS session may still hold records.
                    self.phase = if self.stream.buffers_writes() { Phase::Flush } else { Phase::Head };
                }
                Phase::Flush => match Pin::new(&mut self.stream).poll_flush(cx) {
                    Poll::Pending => {
                        self.phase = Phase::Flush;
                        return Poll::Pending;
                    }
                    Poll::Ready(Err(e)) => return Poll::Ready(Err(ExchangeError::Write(e))),
                    Poll::Ready(Ok(())) => self.phase = Phase::Head,
                },
                Phase::Head => match self.heads.parse(&self.read, method) {
                    Err(e) => return Poll::Ready(Err(e.into())),
                    Ok(None) => {
                        self.phase = Phase::Head;
                        match self.poll_fill(cx, READ_CHUNK) {
                            Poll::Pending => return Poll::Pending,
                            Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                            Poll::Ready(Ok(0)) => return Poll::Ready(Err(ExchangeError::Closed)),
                            Poll::Ready(Ok(_)) => {}
                        }
                    }
                    Ok(Some(head)) => {
                        // 100 Continue, 103 Early Hints: the final response follows. Dropped in
                        // place, so that a server sending them forever costs no memory.
                        if head.status.is_informational() && head.status != StatusCode::SWITCHING_PROTOCOLS {
                            self.read.advance(head.len);
                            self.informational = true;
                            self.phase = Phase::Head;
                            continue;
                        }
                        if let (BodyLength::Fixed(len), BodyPolicy::Keep(limit)) = (head.body, self.policy)
                            && len > limit
                        {
                            // Refused before a byte of it is read or a byte allocated for it.
                            return Poll::Ready(Err(ExchangeError::BodyTooLarge { limit }));
                        }
                        // A kept body follows its head, so that the two leave as one `Bytes`: in
                        // the read buffer as it arrives, or decoded behind a copy of the head.
                        let head_bytes = match (head.body, self.policy) {
                            (BodyLength::Fixed(_) | BodyLength::UntilClose, BodyPolicy::Keep(_)) => None,
                            (BodyLength::Chunked, BodyPolicy::Keep(_)) => {
                                self.chunks.extend_from_slice(&self.read[..head.len]);
                                self.read.advance(head.len);
                                None
                            }
                            _ => Some(match self.heads.current() {
                                Some(bytes) => {
                                    self.read.advance(head.len);
                                    bytes
                                }
                                None => self.read.split_to(head.len).freeze(),
                            }),
                        };
                        self.received = 0;
                        self.phase = Phase::Body { head, head_bytes, chunked: Chunked::Size };
                    }
                },
                Phase::Body { head, head_bytes, mut chunked } => {
                    let received = &mut self.received;
                    let want = match (head.body, self.policy) {
                        (BodyLength::Empty, _) => {
                            let message = head_bytes.unwrap_or_else(|| self.read.split_to(head.len).freeze());
                            return self.done(head, message, 0);
                        }
                        (BodyLength::Fixed(len), BodyPolicy::Keep(_)) => {
                            // At most the limit, checked when the head arrived; behind the head.
                            let end = usize::try_from(len)
                                .ok()
                                .and_then(|len| len.checked_add(head.len))
                                .ok_or(ProtocolError::ContentLength)?;
                            if self.read.len() >= end {
                                let message = self.read.split_to(end).freeze();
                                return self.done(head, message, len);
                            }
                            (end - self.read.len()).min(MAX_RESERVE)
                        }
                        (BodyLength::Fixed(len), BodyPolicy::Discard) => {
                            let take = usize::try_from(len - *received).unwrap_or(usize::MAX).min(self.read.len());
                            self.read.advance(take);
                            *received += take as u64;
                            if *received == len {
                                return self.done(head, head_bytes.unwrap_or_default(), len);
                            }
                            usize::try_from(len - *received).unwrap_or(usize::MAX).min(DISCARD_CHUNK)
                        }
                        (BodyLength::Chunked, policy) => {
                            let chunks = &mut self.chunks;
                            chunked = h1::decode_chunked(chunked, &mut self.read, |data| {
                                *received += data.len() as u64;
                                if let BodyPolicy::Keep(limit) = policy {
                                    if *received > limit {
                                        return Err(ExchangeError::BodyTooLarge { limit });
                                    }
                                    chunks.extend_from_slice(data);
                                }
                                Ok(())
                            })?;
                            if chunked == Chunked::Done {
                                let len = *received;
                                let message = if policy == BodyPolicy::Discard {
                                    head_bytes.unwrap_or_default()
                                } else {
                                    self.chunks.split().freeze()
                                };
                                return self.done(head, message, len);
                            }
                            if policy == BodyPolicy::Discard { DISCARD_CHUNK } else { READ_CHUNK }
                        }
                        (BodyLength::UntilClose, BodyPolicy::Keep(limit)) => {
                            // Behind its head.
                            if self.read.len().saturating_sub(head.len) as u64 > limit {
                                return Poll::Ready(Err(ExchangeError::BodyTooLarge { limit }));
                            }
                            READ_CHUNK
                        }
                        (BodyLength::UntilClose, BodyPolicy::Discard) => {
                            *received += self.read.len() as u64;
                            self.read.clear();
                            DISCARD_CHUNK
                        }
                    };
                    self.phase = Phase::Body { head, head_bytes, chunked };
                    match self.poll_fill(cx, want) {
                        Poll::Pending => return Poll::Pending,
                        Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                        Poll::Ready(Ok(0)) if head.body == BodyLength::UntilClose => {
                            let message = match std::mem::take(&mut self.phase) {
                                // Discarding: everything read was counted before this read.
                                Phase::Body { head_bytes: Some(head_bytes), .. } => head_bytes,
                                // Kept: the body is the rest of the buffer, behind its head.
                                _ => self.read.split().freeze(),
                            };
                            let len = self.received + message.len().saturating_sub(head.len) as u64;
                            return self.done(head, message, len);
                        }
                        Poll::Ready(Ok(0)) => return Poll::Ready(Err(ExchangeError::Closed)),
                        Poll::Ready(Ok(_)) => {}
                    }
                }
            }
        }
    }

    /// The response of `head`, received as `message` (its head, then its body if kept).
    fn done(&mut self, head: Head, message: Bytes, body_len: u64) -> Poll<Result<RawResponse, ExchangeError>> {
        self.reusable = head.keep_alive;
        Poll::Ready(Ok(RawResponse {
            status: head.status,
            message,
            body_at: head.len,
            body_len,
            sets_cookie: head.sets_cookie,
        }))
    }

    /// Reads once into the buffer, with at least `want` bytes of room; 0 at end of stream.
    // Always inlined, as it was when `poll_exchange` was its only caller: the unshared path does
    // not pay for the pipeline's second caller.
    #[inline(always)]
    fn poll_fill(&mut self, cx: &mut Context<'_>, want: usize) -> Poll<Result<usize, ExchangeError>> {
        if self.read.capacity() - self.read.len() < want.min(READ_CHUNK) {
            self.read.reserve(want);
        }
        // `read_buf`'s future holds nothing but its two references, so one made for each poll
        // loses nothing when dropped while pending.
        pin!(self.stream.read_buf(&mut self.read)).poll(cx).map_err(ExchangeError::Read)
    }
}

/// Where an exchange stands, between polls.
#[derive(Debug, Default)]
enum Phase {
    /// No exchange in progress.
    #[default]
    Idle,
    /// Writing the request; this many bytes are out.
    Write { written: usize },
    /// Sending what the TLS session still holds of the request.
    Flush,
    /// Reading the response head.
    Head,
    /// Reading the body of the response with this head. `head_bytes` is `None` when the body is
    /// kept behind the head: at the start of the read buffer, or of `chunks` for a chunked one.
    Body { head: Head, head_bytes: Option<Bytes>, chunked: Chunked },
}

#[cfg(test)]
mod fuzz;

#[cfg(test)]
mod tests;
