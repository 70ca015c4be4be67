//! HTTP/2 on a lane: the requests of its users as concurrent streams on one connection.
//!
//! The `h2` crate's client directly, not hyper's: hyper's client sends each request through a
//! channel to a connection task and its response back through a oneshot (the dispatch that made
//! the HTTP/1.1 client hand-written, ~11,000 instructions a request); here each request clones
//! the connection's `SendRequest` (two reference counts) and polls its own stream in place.
//! The connection itself (frames in and out, flow control, settings) is driven by a task of its
//! own on the worker's `LocalSet`.
//!
//! A stream beyond the server's `MAX_CONCURRENT_STREAMS` waits in h2's queue until one ends: it
//! is opened (its id sent) only when there is room, so the server never sees more streams than
//! it allows.

mod io;

use std::cell::{Cell, RefCell};
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::{Arc, OnceLock};

use bytes::{Bytes, BytesMut};
use h2::client::SendRequest;
use h2::{Reason, RecvStream};
use http::uri::{Authority, PathAndQuery, Scheme};
use http::{HeaderMap, Request, Uri, Version, header};

use self::io::Watched;
use super::{Failure, Outgoing, Reply};
use crate::config::Transport;
use crate::error::{Error, ErrorKind};
use crate::http::TlsClient;
use crate::http::connection::{BodyPolicy, ExchangeError};
use crate::http::response::Response;
use crate::http::stream::Stream;
use crate::http::target::Target;
use crate::http::tls::Cause;

/// The receive window of each stream, advertised in our SETTINGS: 16 MiB, the default
/// `max_body`, so that one response of that size arrives without waiting for a
/// `WINDOW_UPDATE`. The protocol's default (64 KiB) would make a large body wait a round trip
/// every 64 KiB; h2load's default (1 GiB) would let a server push far more than a user keeps
/// into memory before the user reads it.
const STREAM_WINDOW: u32 = 16 << 20;

/// The receive window of the whole connection: 64 MiB, four streams' worth at full window.
/// Bodies are consumed (and their capacity released) as they arrive, so the window only bounds
/// what may wait unread in h2's buffers; it never throttles a connection whose users read.
const CONNECTION_WINDOW: u32 = 64 << 20;

/// Streams opened before the server's SETTINGS say how many it allows: one, so that a server
/// with a low `MAX_CONCURRENT_STREAMS` never has to refuse the first burst of a lane's users
/// (h2 would otherwise assume no limit). The SETTINGS arrive within the first round trip, and
/// the waiting streams are opened then.
const STREAMS_BEFORE_SETTINGS: usize = 1;

/// A lane's TLS configuration: the run's, with a session cache of its own, offering `h2` in
/// ALPN when HTTP/2 is asked.
pub(crate) fn tls_config(client: &TlsClient, transport: Transport) -> Arc<rustls::ClientConfig> {
    client.for_lane(transport.http2)
}

/// Whether a connection just opened speaks HTTP/2: with prior knowledge on `http://` when it
/// is asked, and over TLS when ALPN agreed on `h2` (offered only when it is asked).
pub(crate) fn speaks_h2(stream: &Stream, transport: Transport) -> bool {
    match stream {
        Stream::Plain(_) => transport.http2,
        Stream::Tls(tls) => tls.get_ref().1.alpn_protocol() == Some(b"h2"),
    }
}

/// One HTTP/2 connection.
#[derive(Debug)]
pub(crate) struct Http2 {
    send: SendRequest<Bytes>,
    shared: Rc<Shared>,
    scheme: Scheme,
    authority: Authority,
    addr: SocketAddr,
    /// The last request's path, parsed: most scenarios send the same few paths, and a clone of
    /// it costs a reference count where a new one costs an allocation and a parse.
    path: RefCell<Option<PathAndQuery>>,
}

/// What the connection's driver task and its streams share.
#[derive(Debug, Default)]
struct Shared {
    /// The connection takes no new streams: it ended, the server sent `GOAWAY`, or it failed.
    gone: Cell<bool>,
    /// A response has come on it: the server speaks HTTP/2. Until then, a connection with prior
    /// knowledge that fails is most likely a server that does not.
    answered: Cell<bool>,
    /// The TLS alert that ended the session, if one did: h2 keeps only the text of an I/O error,
    /// so the socket's wrapper (`io.rs`) keeps the cause.
    alert: RefCell<Option<Cause>>,
}

impl Http2 {
    /// The connection preface and settings exchange on `stream`, opened to `target`; the
    /// connection's driver runs as a task of the worker's own.
    pub(crate) async fn handshake(stream: Stream, target: &Target) -> Result<Http2, Failure> {
        let scheme = if matches!(stream, Stream::Tls(_)) { Scheme::HTTPS } else { Scheme::HTTP };
        let authority = Authority::try_from(target.host_header().as_bytes()).map_err(|e| Failure {
            error: Error::with_source(ErrorKind::Scenario, "the target's host is not an HTTP/2 authority", e),
            retry: false,
        })?;
        let shared = Rc::new(Shared::default());
        let io = Watched::new(stream, Rc::clone(&shared));
        let (send, connection) = h2::client::Builder::new()
            .initial_window_size(STREAM_WINDOW)
            .initial_connection_window_size(CONNECTION_WINDOW)
            .initial_max_send_streams(STREAMS_BEFORE_SETTINGS)
            .enable_push(false)
            .handshake::<_, Bytes>(io)
            .await
            .map_err(|e| Failure {
                error: Error::with_source(ErrorKind::Io, "HTTP/2 handshake failed", e),
                retry: false,
            })?;
        let ended = Rc::clone(&shared);
        tokio::task::spawn_local(async move {
            // Its error, if any, reaches every stream still open, which reports it.
            let _ = connection.await;
            ended.gone.set(true);
        });
        Ok(Http2 { send, shared, scheme, authority, addr: target.addr(), path: RefCell::new(None) })
    }

    /// Whether the connection takes new streams.
    pub(crate) fn is_open(&self) -> bool {
        !self.shared.gone.get()
    }

    /// Sends `request` on a new stream and reads its response.
    pub(crate) async fn exchange(&self, request: &Outgoing<'_>) -> Result<Reply, Failure> {
        let head = self.head(request)?;
        // A handle of this request's own: h2 lets each handle queue one stream that waits for
        // room under the server's limit, and this one is dropped with the request.
        let mut send = self.send.clone();
        let end = request.body.is_empty();
        let (response, mut body_out) = send.send_request(head, end).map_err(|e| self.refused_before_sending(e))?;
        if !end {
            // Buffered by h2 and sent as the stream's window allows.
            body_out.send_data(request.body.clone(), true).map_err(|e| self.failed(e))?;
        }
        let response = response.await.map_err(|e| self.failed(e))?;
        self.shared.answered.set(true);
        let (parts, mut body) = response.into_parts();
        let (bytes, body_len) = read_body(&mut body, request.policy, &parts.headers).await.map_err(|e| match e {
            BodyError::Stream(e) => self.failed(e),
            BodyError::TooLarge(limit) => Failure {
                error: Error::with_source(
                    ErrorKind::BodyTooLarge,
                    "request failed",
                    ExchangeError::BodyTooLarge { limit },
                ),
                retry: false,
            },
        })?;
        let sets_cookie = parts.headers.contains_key(header::SET_COOKIE);
        let response = Response {
            status: parts.status,
            head: Bytes::new(),
            headers: OnceLock::from(parts.headers),
            body: bytes,
            sets_cookie,
        };
        Ok(Reply { response, body_len })
    }

    /// The request's head: pseudo-headers from the target and the path, and the request's own
    /// headers less those HTTP/2 forbids. A `Host` header the scenario set becomes the
    /// `:authority`, as HTTP/2 asks.
    fn head(&self, request: &Outgoing<'_>) -> Result<Request<()>, Failure> {
        let mut authority = self.authority.clone();
        let headers = if request.headers.is_empty() {
            HeaderMap::new()
        } else {
            let mut headers = request.headers.clone();
            for name in [header::CONNECTION, header::TRANSFER_ENCODING, header::UPGRADE] {
                headers.remove(name);
            }
            headers.remove("keep-alive");
            headers.remove("proxy-connection");
            if headers.get(header::TE).is_some_and(|te| te != "trailers") {
                headers.remove(header::TE);
            }
            if let Some(host) = headers.remove(header::HOST)
                && let Ok(host) = Authority::try_from(host.as_bytes())
            {
                authority = host;
            }
            headers
        };
        let path = self.path(request.path)?;
        let mut uri = http::uri::Parts::default();
        uri.scheme = Some(self.scheme.clone());
        uri.authority = Some(authority);
        uri.path_and_query = Some(path);
        let uri = Uri::from_parts(uri).map_err(|e| Failure {
            error: Error::with_source(ErrorKind::Scenario, "invalid request URI", e),
            retry: false,
        })?;
        let mut head = Request::new(());
        *head.method_mut() = request.method.clone();
        *head.uri_mut() = uri;
        *head.version_mut() = Version::HTTP_2;
        *head.headers_mut() = headers;
        Ok(head)
    }

    /// `path` parsed, from the last request's when it is the same.
    fn path(&self, path: &str) -> Result<PathAndQuery, Failure> {
        let mut last = self.path.borrow_mut();
        if let Some(parsed) = last.as_ref()
            && parsed.as_str() == path
        {
            return Ok(parsed.clone());
        }
        let parsed = PathAndQuery::from_maybe_shared(Bytes::copy_from_slice(path.as_bytes())).map_err(|e| Failure {
            error: Error::with_source(ErrorKind::Scenario, format!("invalid request path `{path}`"), e),
            retry: false,
        })?;
        *last = Some(parsed.clone());
        Ok(parsed)
    }

    /// A request h2 would not take: the connection is gone (then the request was never sent
    /// and may go on a new one), or the request itself is malformed.
    #[cold]
    fn refused_before_sending(&self, err: h2::Error) -> Failure {
        if err.is_io() || err.is_go_away() || err.is_reset() {
            self.shared.gone.set(true);
            return Failure {
                error: Error::with_source(ErrorKind::Io, "the HTTP/2 connection is closed", err),
                retry: true,
            };
        }
        Failure { error: Error::with_source(ErrorKind::Scenario, "HTTP/2 refused the request", err), retry: false }
    }

    /// The error of a stream that failed after it was handed to h2.
    #[cold]
    fn failed(&self, err: h2::Error) -> Failure {
        let outcome = classify(&err, &self.shared);
        // Prior knowledge (`--http2` on `http://`) to a server that never answered in HTTP/2: say
        // what is most likely wrong rather than h2's "broken pipe".
        let unheard = self.scheme == Scheme::HTTP && !self.shared.answered.get();
        if unheard && outcome == Outcome::Connection {
            return Failure {
                error: Error::with_source(
                    ErrorKind::Io,
                    "the server closed the connection without an HTTP/2 answer; does it speak HTTP/2 \
                     without TLS? (--http2 and http2 = true on http:// send HTTP/2 with prior knowledge, h2c)",
                    err,
                ),
                retry: false,
            };
        }
        outcome.into_failure(err, self.addr)
    }
}

/// What became of a stream that failed.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    /// Refused unprocessed: above the last stream id of the server's `GOAWAY` (the connection
    /// takes no more streams).
    GoneAway(Reason),
    /// Refused unprocessed with `REFUSED_STREAM`; the connection goes on.
    Refused,
    /// Reset by the server for another reason: the request's own failure.
    Reset(Reason),
    /// The TLS session ended with an alert.
    Tls(String),
    /// The connection failed (or h2 found the server's frames malformed).
    Connection,
}

/// Sorts a stream's error, marking the connection gone when it is.
fn classify(err: &h2::Error, shared: &Shared) -> Outcome {
    if let Some(reason) = err.reason()
        && err.is_remote()
    {
        if err.is_go_away() {
            // h2 gives a stream the server's GOAWAY error only when the stream's id is above the
            // frame's last stream id: the server says it did not and will not process it.
            shared.gone.set(true);
            return Outcome::GoneAway(reason);
        }
        return if reason == Reason::REFUSED_STREAM { Outcome::Refused } else { Outcome::Reset(reason) };
    }
    shared.gone.set(true);
    match shared.alert.borrow().as_ref() {
        Some(cause) => Outcome::Tls(cause.text.clone()),
        None => Outcome::Connection,
    }
}

impl Outcome {
    fn into_failure(self, err: h2::Error, addr: SocketAddr) -> Failure {
        let (error, retry) = match self {
            Outcome::GoneAway(reason) => (
                Error::new(
                    ErrorKind::Io,
                    format!("the server closed the connection (GOAWAY {reason:?}) before this request"),
                ),
                true,
            ),
            Outcome::Refused => {
                (Error::new(ErrorKind::StreamReset, "the server refused the stream: REFUSED_STREAM"), true)
            }
            Outcome::Reset(reason) => {
                (Error::new(ErrorKind::StreamReset, format!("the server reset the stream: {reason:?}")), false)
            }
            // As `Ctx::exchange` reports a TLS 1.3 server's refusal of the client's certificate.
            Outcome::Tls(text) => {
                (Error::new(ErrorKind::Tls, format!("TLS handshake with {addr} failed: {text}")), false)
            }
            Outcome::Connection => (Error::with_source(ErrorKind::Io, "request failed", err), false),
        };
        Failure { error, retry }
    }
}

/// Why a response's body could not be read.
enum BodyError {
    Stream(h2::Error),
    /// Longer than the request's limit.
    TooLarge(u64),
}

/// Reads the body of a response to its end as `policy` says, releasing each chunk's
/// flow-control capacity as it arrives (kept or not); its bytes, if kept, and its length.
async fn read_body(body: &mut RecvStream, policy: BodyPolicy, headers: &HeaderMap) -> Result<(Bytes, u64), BodyError> {
    if let BodyPolicy::Keep(limit) = policy
        && content_length(headers).is_some_and(|len| len > limit)
    {
        // Refused before a byte is read; dropping the stream resets it (CANCEL) and gives its
        // buffered bytes back to the connection's window.
        return Err(BodyError::TooLarge(limit));
    }
    let mut kept = Kept::default();
    let mut len = 0u64;
    if body.is_end_stream() {
        return Ok((Bytes::new(), 0));
    }
    while let Some(chunk) = body.data().await {
        let chunk = chunk.map_err(BodyError::Stream)?;
        // Fails only for more than was received, which this is not.
        let _ = body.flow_control().release_capacity(chunk.len());
        len += chunk.len() as u64;
        if let BodyPolicy::Keep(limit) = policy {
            if len > limit {
                return Err(BodyError::TooLarge(limit));
            }
            kept.push(chunk);
        }
    }
    Ok((kept.into_bytes(), len))
}

/// A body's chunks: the first as it came (most bodies are one DATA frame, then no copy), the
/// others appended to a buffer.
#[derive(Default)]
struct Kept {
    first: Bytes,
    more: Option<BytesMut>,
}

impl Kept {
    fn push(&mut self, chunk: Bytes) {
        if let Some(more) = &mut self.more {
            more.extend_from_slice(&chunk);
        } else if self.first.is_empty() {
            self.first = chunk;
        } else {
            let mut more = BytesMut::with_capacity(self.first.len() + chunk.len());
            more.extend_from_slice(&self.first);
            more.extend_from_slice(&chunk);
            self.more = Some(more);
        }
    }

    fn into_bytes(self) -> Bytes {
        match self.more {
            Some(more) => more.freeze(),
            None => self.first,
        }
    }
}

/// The `Content-Length` a response declares, if it is a number.
fn content_length(headers: &HeaderMap) -> Option<u64> {
    headers.get(header::CONTENT_LENGTH)?.to_str().ok()?.parse().ok()
}

#[cfg(test)]
mod tests;
