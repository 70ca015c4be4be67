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
    /// The head as received; `headers` is parsed from it on first use.
    pub(super) head: Bytes,
    /// Boxed: most responses are never asked for their headers, and a response moves through
    /// every future of its request on its way to the scenario (a `HeaderMap` would double its
    /// size).
    pub(super) headers: OnceLock<Box<HeaderMap>>,
    pub(super) body: Bytes,
    /// Whether the head has a `Set-Cookie` header, for the user's jar.
    pub(super) sets_cookie: bool,
}

impl Response {
    /// The status code.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The response headers.
    pub fn headers(&self) -> &HeaderMap {
        self.headers.get_or_init(|| Box::new(h1::header_map(&self.head)))
    }

    /// The body; empty when the request discarded it ([`RequestBuilder::discard_body`](crate::RequestBuilder::discard_body)).
    pub fn bytes(&self) -> &Bytes {
        &self.body
    }

    /// The body as UTF-8 text.
    pub fn text(&self) -> Result<&str> {
        std::str::from_utf8(&self.body).map_err(|e| Error::with_source(ErrorKind::Scenario, "body is not UTF-8", e))
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
