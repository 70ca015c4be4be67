//! One virtual user's keep-alive HTTP/1.1 connection: a socket, a read buffer and a write
//! buffer, reused for every request.
//!
//! Why not hyper's client: a virtual user has exactly one request in flight, so hyper's
//! machinery for the general case (a request channel to a connection task, a oneshot for the
//! response, a `HeaderMap` built for every response, a body channel) is the whole per-request
//! cost of the generator. Measured with callgrind on the peer benchmark, hyper's client
//! dispatch took about 11,000 instructions per request, three times wrk's entire user-space
//! cost; the target (less CPU per request than wrk) is out of reach with it. What is
//! left here is one `write` and usually one `read` per request, httparse (hyper's own parser)
//! for the head, and the framing rules in `http1.rs`. Every test server is hyper's, so this
//! client is checked against hyper on every run of the suite.

use std::net::SocketAddr;
use std::task::{Context, Poll, Waker};

use bytes::{Bytes, BytesMut};
use http::{Method, StatusCode};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::http1::{self, BodyLength, Chunked, ProtocolError};

/// Bytes kept free in the read buffer before each read: a typical small response fits in one
/// read, and 1,000 idle connections hold 4 MiB rather than hyper's 16+ MiB.
const READ_CHUNK: usize = 4 * 1024;

/// Largest step the read buffer grows by while a big body arrives, so that a server announcing
/// an absurd `Content-Length` cannot make us allocate it up front.
const MAX_RESERVE: usize = 1024 * 1024;

/// An open keep-alive connection.
#[derive(Debug)]
pub(crate) struct Http1Connection {
    stream: TcpStream,
    /// Bytes read but not yet consumed.
    read: BytesMut,
    /// False once a response said the connection ends after it.
    reusable: bool,
}

/// A response as read off the wire.
#[derive(Debug)]
pub(crate) struct RawResponse {
    pub(crate) status: StatusCode,
    /// The head's bytes, kept for [`crate::Response::headers`].
    pub(crate) head: Bytes,
    pub(crate) body: Bytes,
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
    #[error(transparent)]
    Protocol(#[from] ProtocolError),
}

impl Http1Connection {
    pub(crate) async fn open(addr: SocketAddr) -> std::io::Result<Http1Connection> {
        let stream = TcpStream::connect(addr).await?;
        // Requests are small and latency-bound; Nagle would hold them back.
        stream.set_nodelay(true)?;
        Ok(Http1Connection { stream, read: BytesMut::new(), reusable: true })
    }

    /// Whether an idle connection can take another request: the last response allowed it, and
    /// the server has neither closed it nor sent anything unasked since.
    ///
    /// Costs no system call unless the socket was flagged readable while idle, which is how a
    /// server's close shows up; hyper's client makes the same check before each request, so
    /// that a keep-alive connection the server dropped is replaced instead of failing a request.
    pub(crate) fn idle_ok(&mut self) -> bool {
        if !self.reusable || !self.read.is_empty() {
            return false;
        }
        let mut cx = Context::from_waker(Waker::noop());
        match self.stream.poll_read_ready(&mut cx) {
            Poll::Pending => true,
            Poll::Ready(Err(_)) => false,
            Poll::Ready(Ok(())) => {
                let mut probe = [0u8; 1];
                // `try_read` clears the readiness flag when there is nothing to read.
                matches!(self.stream.try_read(&mut probe), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock)
            }
        }
    }

    /// Sends `request` (a whole encoded request) and reads the whole response to it.
    pub(crate) async fn exchange(&mut self, request: &[u8], method: &Method) -> Result<RawResponse, ExchangeError> {
        self.reusable = false; // until a complete response says otherwise
        self.stream.write_all(request).await.map_err(ExchangeError::Write)?;
        loop {
            let head = loop {
                if let Some(head) = http1::parse_head(&self.read, method)? {
                    break head;
                }
                if self.fill(READ_CHUNK).await? == 0 {
                    return Err(ExchangeError::Closed);
                }
            };
            let head_bytes = self.read.split_to(head.len).freeze();
            // 100 Continue, 103 Early Hints: the final response follows on the same connection.
            if head.status.is_informational() && head.status != StatusCode::SWITCHING_PROTOCOLS {
                continue;
            }
            let body = match head.body {
                BodyLength::Empty => Bytes::new(),
                BodyLength::Fixed(len) => self.read_exact(len).await?,
                BodyLength::Chunked => self.read_chunked().await?,
                BodyLength::UntilClose => self.read_to_close().await?,
            };
            self.reusable = head.keep_alive;
            return Ok(RawResponse { status: head.status, head: head_bytes, body });
        }
    }

    /// Reads once into the buffer, with at least `want` bytes of room; 0 at end of stream.
    async fn fill(&mut self, want: usize) -> Result<usize, ExchangeError> {
        if self.read.capacity() - self.read.len() < want.min(READ_CHUNK) {
            self.read.reserve(want);
        }
        self.stream.read_buf(&mut self.read).await.map_err(ExchangeError::Read)
    }

    async fn read_exact(&mut self, len: u64) -> Result<Bytes, ExchangeError> {
        let len = usize::try_from(len).map_err(|_| ProtocolError::ContentLength)?;
        while self.read.len() < len {
            let missing = len - self.read.len();
            if self.fill(missing.min(MAX_RESERVE)).await? == 0 {
                return Err(ExchangeError::Closed);
            }
        }
        Ok(self.read.split_to(len).freeze())
    }

    async fn read_chunked(&mut self) -> Result<Bytes, ExchangeError> {
        let mut body = BytesMut::new();
        let mut state = Chunked::Size;
        loop {
            state = http1::decode_chunked(state, &mut self.read, &mut body)?;
            if state == Chunked::Done {
                return Ok(body.freeze());
            }
            if self.fill(READ_CHUNK).await? == 0 {
                return Err(ExchangeError::Closed);
            }
        }
    }

    async fn read_to_close(&mut self) -> Result<Bytes, ExchangeError> {
        while self.fill(READ_CHUNK).await? != 0 {}
        Ok(self.read.split().freeze())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::net::TcpListener;

    async fn pair() -> (Http1Connection, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (conn, accepted) = tokio::join!(Http1Connection::open(addr), listener.accept());
        (conn.unwrap(), accepted.unwrap().0)
    }

    async fn exchange_with(reply: &'static [u8], method: Method) -> (Result<RawResponse, ExchangeError>, bool) {
        let (mut conn, mut server) = pair().await;
        let serve = async move {
            let mut buf = [0u8; 256];
            let _ = server.read(&mut buf).await.unwrap();
            // In pieces, so that framing is exercised across reads.
            for piece in reply.chunks(7) {
                server.write_all(piece).await.unwrap();
                server.flush().await.unwrap();
                tokio::task::yield_now().await;
            }
            // Closing ends a body delimited by the end of the connection.
            drop(server);
        };
        let (result, ()) = tokio::join!(conn.exchange(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n", &method), serve);
        (result, conn.reusable)
    }

    #[tokio::test]
    async fn reads_each_kind_of_body() {
        let (r, keep) = exchange_with(b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello", Method::GET).await;
        assert_eq!((&r.unwrap().body[..], keep), (&b"hello"[..], true));
        let (r, keep) =
            exchange_with(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", Method::GET)
                .await;
        assert_eq!((&r.unwrap().body[..], keep), (&b"abc"[..], true));
        let (r, keep) = exchange_with(b"HTTP/1.1 200 OK\r\n\r\nuntil close", Method::GET).await;
        assert_eq!((&r.unwrap().body[..], keep), (&b"until close"[..], false));
        let (r, _) = exchange_with(
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\ncontent-length: 0\r\n\r\n",
            Method::POST,
        )
        .await;
        assert_eq!(r.unwrap().status, StatusCode::CREATED);
        let (r, keep) = exchange_with(b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\n", Method::HEAD).await;
        assert_eq!((r.unwrap().body.len(), keep), (0, true));
    }

    #[tokio::test]
    async fn a_short_body_is_an_error() {
        let (r, keep) = exchange_with(b"HTTP/1.1 200 OK\r\ncontent-length: 50\r\n\r\nhello", Method::GET).await;
        assert!(matches!(r, Err(ExchangeError::Closed)), "{r:?}");
        assert!(!keep);
        let (r, _) = exchange_with(b"garbage\r\n\r\n", Method::GET).await;
        assert!(matches!(r, Err(ExchangeError::Protocol(_))), "{r:?}");
    }

    #[tokio::test]
    async fn the_idle_check_sees_a_closed_connection() {
        let (mut conn, server) = pair().await;
        assert!(conn.idle_ok());
        drop(server);
        // Give the FIN time to arrive and the reactor time to flag the socket.
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        assert!(!conn.idle_ok());
    }
}
