//! What a user's session carries from request to request, as plain data: the scenario's cookie
//! and redirect settings, what a request that may be redirected keeps to send again, and where
//! a chain of redirects stands. Apart
//! from `redirects.rs`, which extends the request builder, so that `ctx.rs` can hold them
//! without the two files importing each other.

use bytes::Bytes;
use http::HeaderMap;

use crate::config::CookieMode;

/// What a scenario sets for its users' sessions: the cookie jar's mode and the redirects a
/// request follows unless it says otherwise.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct SessionOptions {
    pub(crate) cookies: CookieMode,
    pub(crate) follow_redirects: u32,
}

/// The headers and body of a request that may be followed, kept to be sent again by a 307 or
/// 308 (a 301, 302 or 303 drops the body).
#[derive(Debug)]
pub(crate) struct Resend {
    pub(crate) headers: HeaderMap,
    pub(crate) body: Bytes,
}

/// Where a chain of redirects stands, from the first one followed (`redirects.rs`).
#[derive(Debug)]
pub(in crate::http) struct Chain {
    /// The request's own headers and body, for a 307 or 308.
    pub(in crate::http) resend: Option<Box<Resend>>,
    /// The path of the last hop.
    pub(in crate::http) path: String,
    /// Redirects followed so far.
    pub(in crate::http) hops: u32,
}
