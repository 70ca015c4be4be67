//! A request being built from a user's [`Ctx`], and how it is sent: encoded once into the user's
//! buffer (and sent again as it is while it does not change), its future `Ctx::execute`'s own.

use bytes::Bytes;
use http::header::{HeaderName, HeaderValue};
use http::uri::PathAndQuery;
use http::{HeaderMap, Method};

use super::ctx::Ctx;
use super::names::Naming;
use super::session::Resend;
use crate::error::{Error, ErrorKind, Result};
use crate::http::wire::connection::BodyPolicy;
use crate::http::wire::h1;
use crate::http::wire::response::Response;

// Each of these is inline, as `send` is: a `RequestBuilder` returned from a call came back through
// memory for `send` to take apart (bench/RESULTS.md § Request path instruction costs).
// Only a new path leaves the inline code.
impl Ctx {
    /// Starts a GET request for `path`, relative to the target's base URL.
    #[inline]
    pub fn get(&mut self, path: &str) -> RequestBuilder<'_> {
        self.request(Method::GET, path)
    }

    /// Starts a POST request for `path`, relative to the target's base URL.
    #[inline]
    pub fn post(&mut self, path: &str) -> RequestBuilder<'_> {
        self.request(Method::POST, path)
    }

    /// Starts a PUT request for `path`, relative to the target's base URL.
    #[inline]
    pub fn put(&mut self, path: &str) -> RequestBuilder<'_> {
        self.request(Method::PUT, path)
    }

    /// Starts a DELETE request for `path`, relative to the target's base URL.
    #[inline]
    pub fn delete(&mut self, path: &str) -> RequestBuilder<'_> {
        self.request(Method::DELETE, path)
    }

    /// Starts a request with any method.
    #[inline]
    pub fn request(&mut self, method: Method, path: &str) -> RequestBuilder<'_> {
        let error = self.set_path(path).err();
        self.method = method;
        self.policy = BodyPolicy::Keep(self.max_body);
        self.follow = self.follow_default;
        RequestBuilder { ctx: self, headers: None, body: None, error, name: None }
    }

    #[inline]
    fn set_path(&mut self, path: &str) -> Result<()> {
        if self.last.is(path) { Ok(()) } else { self.new_path(path) }
    }

    /// Checks a path other than the last one, joined to the target's base path, and remembers it.
    #[inline(never)]
    fn new_path(&mut self, path: &str) -> Result<()> {
        let joined = self.target.join(path);
        PathAndQuery::try_from(joined.as_str())
            .map_err(|e| Error::with_source(ErrorKind::Scenario, format!("invalid request path `{path}`"), e))?;
        self.last.set(path, joined);
        Ok(())
    }
}

/// A request being built; send it with [`RequestBuilder::send`].
#[derive(Debug)]
#[must_use = "a request does nothing until `.send().await`"]
pub struct RequestBuilder<'a> {
    pub(in crate::http) ctx: &'a mut Ctx,
    /// The request's own headers; `None` until it has one, as most requests never do: an empty
    /// `HeaderMap` is still made and dropped.
    headers: Option<HeaderMap>,
    /// `None` until it has one, as most requests never do: an empty `Bytes` is still made and
    /// dropped through its vtable, an indirect call a request.
    body: Option<Bytes>,
    pub(in crate::http) error: Option<Error>,
    /// The row this request is counted in ([`RequestBuilder::name`]).
    pub(in crate::http) name: Option<&'a str>,
}

impl<'a> RequestBuilder<'a> {
    /// Adds a header. An invalid name or value makes [`send`](Self::send) fail with a scenario
    /// error.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        match (HeaderName::from_bytes(name.as_bytes()), HeaderValue::from_str(value)) {
            (Ok(name), Ok(value)) => {
                self.headers_mut().append(name, value);
            }
            _ => {
                self.error.get_or_insert_with(|| Error::msg(format!("invalid header `{name}: {value}`")));
            }
        }
        self
    }

    /// Adds a header whose name and value are already checked.
    #[cfg(feature = "oneshot")]
    pub(crate) fn typed_header(mut self, name: HeaderName, value: HeaderValue) -> Self {
        self.headers_mut().append(name, value);
        self
    }

    /// The request's headers, made on first use.
    pub(in crate::http) fn headers_mut(&mut self) -> &mut HeaderMap {
        self.headers.get_or_insert_with(HeaderMap::new)
    }

    /// Sets the request body.
    pub fn body(mut self, body: impl Into<Bytes>) -> Self {
        self.body = Some(body.into());
        self
    }

    /// Keeps at most `bytes` of this response's body instead of the scenario's `max_body`
    /// ([`DEFAULT_MAX_BODY`](crate::DEFAULT_MAX_BODY), 16 MiB, unless the attribute sets it): a
    /// longer body fails the request with [`ErrorKind::BodyTooLarge`], at once when its
    /// `Content-Length` says so, otherwise as soon as it grows past the limit.
    pub fn max_body(self, bytes: u64) -> Self {
        self.ctx.policy = BodyPolicy::Keep(bytes);
        self
    }

    /// Drops this response's body as it arrives, whatever its size: it is counted in the bytes
    /// received, and [`Response::bytes`] is empty. For requests whose body the scenario does not
    /// read, memory then stays flat however large the server's answers are.
    ///
    /// ```no_run
    /// # async fn body(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    /// ctx.get("/export.csv").discard_body().send().await?.expect_status(200)?;
    /// # Ok(()) }
    /// ```
    pub fn discard_body(self) -> Self {
        self.ctx.policy = BodyPolicy::Discard;
        self
    }

    /// Sends the request and reads the whole response, within the scenario's timeout.
    ///
    /// Any status is a successful exchange here; use [`Response::expect_status`] to turn an
    /// unexpected status into an error that counts as a failed iteration.
    // Not an `async fn`: the request is encoded before the future exists, so the future returned
    // is `execute`'s own rather than a wrapper holding the builder's fields next to it (every
    // byte of a request's future is copied as it moves up through the awaits). Inlined, always:
    // the future is then built where the body's `.await` keeps it, not built here and copied
    // there (bench/RESULTS.md § Request path instruction costs).
    #[allow(clippy::manual_async_fn)]
    #[inline(always)]
    pub fn send(self) -> impl std::future::Future<Output = Result<Response>> + 'a {
        let RequestBuilder { ctx, mut headers, body, error, name } = self;
        if ctx.follow != 0 {
            // Kept before the jar's `Cookie` is added: each hop asks the jar again.
            ctx.resend = Some(Box::new(Resend {
                headers: headers.clone().unwrap_or_default(),
                body: body.clone().unwrap_or_default(),
            }));
        }
        if ctx.jar.has_cookies()
            && let Some(path) = ctx.last.joined()
            && let Some(cookie) = ctx.jar.header(&ctx.target, path)
        {
            headers.get_or_insert_with(HeaderMap::new).append(http::header::COOKIE, cookie);
        }
        let plain = headers.as_ref().is_none_or(HeaderMap::is_empty) && body.as_ref().is_none_or(Bytes::is_empty);
        // HTTP/2 with prior knowledge sends the request's parts, never its HTTP/1.1 bytes.
        let wire_unused = ctx.lane.as_ref().is_some_and(|lane| !lane.may_speak_http1());
        let prepared = match (error, ctx.last.joined()) {
            (Some(error), _) => Err(Box::new(error)),
            (None, None) => Err(Box::new(Error::msg("no request path"))),
            // The same request as the last one, still encoded in `wire`.
            (None, Some(_)) if wire_unused || (plain && ctx.last.is_encoded(&ctx.method)) => Ok(()),
            (None, Some(path)) => {
                ctx.wire.clear();
                let none;
                let headers = match &headers {
                    Some(headers) => headers,
                    None => {
                        none = HeaderMap::new();
                        &none
                    }
                };
                let body = body.as_deref().unwrap_or_default();
                h1::encode_request(&mut ctx.wire, &ctx.method, path, ctx.target.host_header(), headers, body);
                ctx.last.set_encoded(plain.then(|| ctx.method.clone()));
                Ok(())
            }
        };
        // Only HTTP/2 and HTTP/3 send the parts; on a lane that speaks neither they would be moved into
        // the user's state and dropped from it for nothing, a cold line or two a request.
        if ctx.lane.as_ref().is_some_and(|lane| lane.sends_parts()) {
            ctx.parts = (headers.unwrap_or_default(), body.unwrap_or_default());
        }
        let naming = Naming::start(name, ctx);
        ctx.execute(prepared, naming)
    }
}
