//! The task that owns a pipelined connection's socket: it writes what the users queued (all of
//! it in one write, up to the depth) and reads the responses, handing each to the oldest request.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use bytes::Buf;
use tokio::io::AsyncWrite;

use super::{Queue, State, Why, unanswered};
use crate::error::{Error, ErrorKind};
use crate::http::wire::connection::{BodyPolicy, ExchangeError, Http1Connection, RawResponse};
use crate::http::wire::shared::{Failure, Received};
use crate::http::wire::tls::Cause;

/// A pipelined connection's driver; ends when the connection does.
pub(super) struct Driver {
    queue: Rc<RefCell<Queue>>,
    conn: Http1Connection,
    /// Whether the oldest request's response has begun to be read.
    reading: bool,
    /// Whether a TLS session may hold written records that still need a flush.
    flush: bool,
}

impl Driver {
    pub(super) fn new(queue: Rc<RefCell<Queue>>, conn: Http1Connection) -> Driver {
        Driver { queue, conn, reading: false, flush: false }
    }

    /// Writes what may be written; `Err` when the connection failed (everything is failed then).
    fn poll_write(&mut self, cx: &mut Context<'_>, queue: &mut Queue) -> Result<bool, ()> {
        let limit = queue.write_limit();
        if queue.written < limit {
            let len = usize::try_from(limit - queue.written).unwrap_or(usize::MAX).min(queue.out.len());
            return match Pin::new(self.conn.stream_mut()).poll_write(cx, &queue.out[..len]) {
                Poll::Ready(Ok(n)) if n > 0 => {
                    queue.out.advance(n);
                    queue.written += n as u64;
                    #[cfg(test)]
                    {
                        queue.writes += 1;
                    }
                    self.flush = self.conn.stream_mut().buffers_writes();
                    Ok(true)
                }
                // A zero-length write or an error: the connection is gone.
                Poll::Ready(_) => {
                    queue.fail_rest(Why::Closed);
                    Err(())
                }
                Poll::Pending => Ok(false),
            };
        }
        if self.flush {
            return match Pin::new(self.conn.stream_mut()).poll_flush(cx) {
                Poll::Ready(Ok(())) => {
                    self.flush = false;
                    Ok(true)
                }
                Poll::Ready(Err(_)) => {
                    queue.fail_rest(Why::Closed);
                    Err(())
                }
                Poll::Pending => Ok(false),
            };
        }
        Ok(false)
    }

    /// Reads the oldest request's response; `Err` when the connection ended.
    fn poll_read(&mut self, cx: &mut Context<'_>, queue: &mut Queue) -> Result<bool, ()> {
        let Some(&front) = queue.order.front() else {
            // Nothing in flight: any byte, or the end, means the connection cannot be reused.
            return match self.conn.poll_idle_end(cx) {
                Poll::Ready(()) => {
                    queue.fail_rest(Why::Closed);
                    Err(())
                }
                Poll::Pending => Ok(false),
            };
        };
        if !queue.sent(front) {
            // Its write is pending: no response can come yet.
            return Ok(false);
        }
        let slot = &queue.slots[front];
        if !self.reading {
            // A response nobody waits for any more is counted through and dropped.
            let policy = if matches!(slot.state, State::Abandoned) { BodyPolicy::Discard } else { slot.policy };
            self.conn.begin_response(policy);
            self.reading = true;
        }
        match self.conn.poll_exchange(cx, &[], &slot.method) {
            Poll::Pending => Ok(false),
            Poll::Ready(Ok(raw)) => {
                self.reading = false;
                queue.answer(Ok(received(raw)));
                if self.conn.reusable() {
                    return Ok(true);
                }
                // `Connection: close`, HTTP/1.0, or a body that ends with the connection.
                queue.fail_rest(Why::Closed);
                Err(())
            }
            Poll::Ready(Err(err)) => {
                // Nothing of it came back, and the connection ended as a closed one does: the
                // server closed it before answering. Otherwise this response is the failure.
                let closed = self.conn.may_retry(&err);
                let failure = if closed {
                    unanswered(&slot.method, true, Why::Closed)
                } else {
                    Err(Failure::new(request_failed(err), false))
                };
                queue.answer(failure);
                queue.fail_rest(if closed { Why::Closed } else { Why::Broken });
                Err(())
            }
        }
    }
}

impl Future for Driver {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        let queue = Rc::clone(&this.queue);
        let mut queue = queue.borrow_mut();
        queue.driver.polled(cx);
        loop {
            if queue.closing {
                queue.fail_rest(Why::Abandoned);
                return Poll::Ready(());
            }
            // Every response already in is read first, so that the room they free is filled by
            // one write; then a write, which lets more responses come. Pending on both
            // registers the socket's wakers.
            loop {
                match this.poll_read(cx, &mut queue) {
                    Ok(true) => {}
                    Ok(false) => break,
                    Err(()) => return Poll::Ready(()),
                }
            }
            match this.poll_write(cx, &mut queue) {
                Ok(true) => {}
                Ok(false) => return Poll::Pending,
                Err(()) => return Poll::Ready(()),
            }
        }
    }
}

fn received(raw: RawResponse) -> Received {
    Received { body_len: raw.body_len, parts: raw.into_parts() }
}

/// The error of a response that could not be read, as the unshared path words it.
fn request_failed(err: ExchangeError) -> Error {
    if let Some(cause) = err.io_error().and_then(Cause::of_session) {
        return Error::new(ErrorKind::Tls, format!("the TLS session failed: {}", cause.text));
    }
    let kind = match err {
        ExchangeError::BodyTooLarge { .. } => ErrorKind::BodyTooLarge,
        // A head that does not parse, is too large or has too many headers, a bad
        // `Content-Length`, a malformed chunked body: the server broke HTTP/1.1.
        ExchangeError::Protocol(_) => ErrorKind::Protocol,
        ExchangeError::Write(_) | ExchangeError::Read(_) | ExchangeError::Closed => ErrorKind::Io,
    };
    Error::with_source(kind, "request failed", err)
}
