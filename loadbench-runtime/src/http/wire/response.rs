//! A complete response as a scenario sees it: status, headers (parsed on first use) and body.

use std::mem::MaybeUninit;
use std::sync::OnceLock;

use bytes::Bytes;
use http::{HeaderMap, StatusCode};

use super::h1;
use crate::error::{Error, ErrorKind, Result};

/// A complete response: status, headers and body.
// One pointer wide: a response moves through every future of its request on its way to the
// scenario, and a wider `Result<Response>` was copied at each level in pieces whose loads
// straddled the stores that wrote them, so that the processor waited for those stores to land
// (bench/RESULTS.md § Layouts on the request path). One allocation a response is cheaper than those
// waits. A test in `error.rs` holds it to one word.
#[derive(Debug, Clone)]
pub struct Response(Box<Parts>);

/// What a response holds. A shared connection's driver keeps it in the request's slot as it is,
/// and the user boxes it when it takes it: each user then reuses the allocation its last response
/// freed, where a driver allocating a batch at once would miss the allocator's cache
/// (bench/RESULTS.md § Layouts on the request path).
#[derive(Debug, Clone)]
pub(crate) struct Parts {
    status: StatusCode,
    /// Whether the head has a `Set-Cookie` header, for the user's jar.
    sets_cookie: bool,
    /// Where the body starts in `message`: the head's length.
    body_at: u32,
    /// The head as received, then the body: one handle on the connection's read buffer rather
    /// than one each, so that a response costs one reference count (an atomic add and an atomic
    /// subtract) rather than two.
    message: Bytes,
    /// Boxed: most responses are never asked for their headers, and the allocation of every
    /// response should stay small. Parsed from the head on first use.
    headers: OnceLock<Box<HeaderMap>>,
}

impl Response {
    /// The response that `parts` hold.
    pub(in crate::http) fn from_parts(parts: Parts) -> Response {
        Response(Box::new(parts))
    }

    /// The response that `parts` hold, in `room` made for them beforehand.
    pub(in crate::http) fn from_parts_in(room: Box<MaybeUninit<Parts>>, parts: Parts) -> Response {
        Response(Box::write(room, parts))
    }

    /// The status code.
    pub fn status(&self) -> StatusCode {
        self.0.status
    }

    /// Whether the head has a `Set-Cookie` header.
    pub(in crate::http) fn sets_cookie(&self) -> bool {
        self.0.sets_cookie
    }

    /// The response headers.
    pub fn headers(&self) -> &HeaderMap {
        self.0.headers.get_or_init(|| Box::new(h1::header_map(self.head())))
    }

    /// The head as received (an HTTP/1.1 head; HTTP/2's headers are written as one).
    fn head(&self) -> &[u8] {
        self.0.message.get(..self.0.body_at as usize).unwrap_or_default()
    }

    /// The body; empty when the request discarded it ([`RequestBuilder::discard_body`](crate::RequestBuilder::discard_body)).
    ///
    /// ```no_run
    /// # async fn body(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    /// let size = ctx.get("/").send().await?.bytes().len();
    /// # Ok(()) }
    /// ```
    pub fn bytes(&self) -> &[u8] {
        self.0.message.get(self.0.body_at as usize..).unwrap_or_default()
    }

    /// The body, to keep after the response is gone: a handle on the bytes received, not a
    /// copy.
    pub fn into_bytes(self) -> Bytes {
        self.0.message.slice(self.0.body_at as usize..)
    }

    /// The body as UTF-8 text.
    pub fn text(&self) -> Result<&str> {
        std::str::from_utf8(self.bytes()).map_err(|e| Error::with_source(ErrorKind::Scenario, "body is not UTF-8", e))
    }

    /// Passes the response through if its status is `expected`, or fails with an
    /// [`ErrorKind::Status`] error.
    ///
    /// ```no_run
    /// # async fn body(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    /// ctx.get("/health").send().await?.expect_status(200)?;
    /// # Ok(()) }
    /// ```
    // Inline, with the failure out of line: every request of most scenarios makes this check, and
    // its passing case is one comparison.
    #[inline]
    pub fn expect_status(self, expected: u16) -> Result<Response> {
        if self.0.status.as_u16() == expected { Ok(self) } else { Err(unexpected_status(expected, self.0.status)) }
    }

    /// Passes the response through if its status is 2xx, or fails with an [`ErrorKind::Status`]
    /// error.
    #[inline]
    pub fn expect_success(self) -> Result<Response> {
        if self.0.status.is_success() { Ok(self) } else { Err(unsuccessful(self.0.status)) }
    }
}

impl Parts {
    /// A response whose head is the first `body_at` bytes of `message` and whose body is the rest
    /// (the body is empty when `body_at` is past the end).
    pub(in crate::http) fn new(status: StatusCode, message: Bytes, body_at: usize, sets_cookie: bool) -> Parts {
        // A head is at most `h1::MAX_HEAD_BYTES` (HTTP/1.1) or a header list's size (HTTP/2).
        let body_at = u32::try_from(body_at.min(message.len())).unwrap_or(u32::MAX);
        Parts { status, sets_cookie, body_at, message, headers: OnceLock::new() }
    }
}

#[cold]
fn unexpected_status(expected: u16, status: StatusCode) -> Error {
    Error::new(ErrorKind::Status, format!("expected status {expected}, got {status}"))
}

#[cold]
fn unsuccessful(status: StatusCode) -> Error {
    Error::new(ErrorKind::Status, format!("expected a 2xx status, got {status}"))
}
