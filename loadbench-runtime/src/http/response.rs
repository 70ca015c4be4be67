//! A complete response as a scenario sees it: status, headers (parsed on first use) and body.

use std::sync::OnceLock;

use bytes::Bytes;
use http::{HeaderMap, StatusCode};

use super::h1;
use crate::error::{Error, ErrorKind, Result};

/// A complete response: status, headers and body.
#[derive(Debug, Clone)]
pub struct Response {
    pub(super) status: StatusCode,
    /// Whether the head has a `Set-Cookie` header, for the user's jar.
    pub(super) sets_cookie: bool,
    /// Where the body starts in `message`: the head's length.
    body_at: u32,
    /// The head as received, then the body: one handle on the connection's read buffer rather
    /// than one each, so that a response costs one reference count (an atomic add and an atomic
    /// subtract) and moves through every future of its request as 56 bytes, not 88
    /// (bench/RESULTS.md).
    message: Bytes,
    /// Boxed: most responses are never asked for their headers, and a response moves through
    /// every future of its request on its way to the scenario (a `HeaderMap` would double its
    /// size). Parsed from the head on first use.
    headers: OnceLock<Box<HeaderMap>>,
}

impl Response {
    /// The response whose head is the first `body_at` bytes of `message` and whose body is the
    /// rest (the body is empty when `body_at` is past the end).
    pub(super) fn new(status: StatusCode, message: Bytes, body_at: usize, sets_cookie: bool) -> Response {
        // A head is at most `h1::MAX_HEAD_BYTES` (HTTP/1.1) or a header list's size (HTTP/2).
        let body_at = u32::try_from(body_at.min(message.len())).unwrap_or(u32::MAX);
        Response { status, sets_cookie, body_at, message, headers: OnceLock::new() }
    }

    /// The status code.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The response headers.
    pub fn headers(&self) -> &HeaderMap {
        self.headers.get_or_init(|| Box::new(h1::header_map(self.head())))
    }

    /// The head as received (an HTTP/1.1 head; HTTP/2's headers are written as one).
    fn head(&self) -> &[u8] {
        self.message.get(..self.body_at as usize).unwrap_or_default()
    }

    /// The body; empty when the request discarded it ([`RequestBuilder::discard_body`](crate::RequestBuilder::discard_body)).
    ///
    /// ```no_run
    /// # async fn body(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    /// let size = ctx.get("/").send().await?.bytes().len();
    /// # Ok(()) }
    /// ```
    pub fn bytes(&self) -> &[u8] {
        self.message.get(self.body_at as usize..).unwrap_or_default()
    }

    /// The body, to keep after the response is gone: a handle on the bytes received, not a
    /// copy.
    pub fn into_bytes(self) -> Bytes {
        self.message.slice(self.body_at as usize..)
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
    pub fn expect_status(self, expected: u16) -> Result<Response> {
        if self.status.as_u16() == expected {
            Ok(self)
        } else {
            Err(Error::new(ErrorKind::Status, format!("expected status {expected}, got {}", self.status)))
        }
    }

    /// Passes the response through if its status is 2xx, or fails with an [`ErrorKind::Status`]
    /// error.
    pub fn expect_success(self) -> Result<Response> {
        if self.status.is_success() {
            Ok(self)
        } else {
            Err(Error::new(ErrorKind::Status, format!("expected a 2xx status, got {}", self.status)))
        }
    }
}
