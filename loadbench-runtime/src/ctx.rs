//! What a scenario body gets: one virtual user's HTTP client, with its own connection.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::rc::Rc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::HeaderMap;
use hyper::http::header::{HeaderName, HeaderValue};
use hyper::http::{Method, Request, StatusCode, Uri};

use crate::connection::{ConnectError, Http1Connection};
use crate::error::{Error, ErrorKind, Result};
use crate::target::Target;

/// One virtual user's view of the run: an HTTP/1.1 client bound to the target, with a keep-alive
/// connection of its own.
///
/// No pool and no lock sit between the scenario and the socket: each virtual user owns its
/// connection and reconnects when the server closes it, so `concurrency = C` means exactly C
/// connections.
///
/// ```no_run
/// #[loadbench::scenario(concurrency = 10, count = 1_000)]
/// async fn create_item(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
///     ctx.post("/items")
///         .header("content-type", "application/json")
///         .body(r#"{"name":"widget"}"#)
///         .send()
///         .await?
///         .expect_status(201)?;
///     Ok(())
/// }
/// # fn main() {}
/// ```
#[derive(Debug)]
pub struct Ctx {
    target: Rc<Target>,
    timeout: Duration,
    user: u32,
    conn: Option<Http1Connection>,
    /// The last path requested and its parsed URI: scenario bodies usually request the same few
    /// paths over and over, and a `Uri` clone is a reference-count bump where parsing allocates.
    last_uri: Option<(String, Uri)>,
    /// [`Ctx::user_data`], one value per type.
    user_data: HashMap<TypeId, Box<dyn Any>>,
    pub(crate) counters: HttpCounters,
}

/// HTTP figures of one virtual user, merged into the scenario's totals when it finishes.
#[derive(Debug, Default)]
pub(crate) struct HttpCounters {
    pub(crate) responses: u64,
    pub(crate) bytes_received: u64,
    pub(crate) connections: u64,
    /// Few distinct codes occur in a run, so a short vector beats a map on the hot path.
    pub(crate) status: Vec<(u16, u64)>,
}

impl HttpCounters {
    fn count_status(&mut self, status: StatusCode) {
        let code = status.as_u16();
        match self.status.iter_mut().find(|(c, _)| *c == code) {
            Some((_, n)) => *n += 1,
            None => self.status.push((code, 1)),
        }
    }
}

impl Ctx {
    pub(crate) fn new(target: Rc<Target>, timeout: Duration, user: u32) -> Ctx {
        Ctx {
            target,
            timeout,
            user,
            conn: None,
            last_uri: None,
            user_data: HashMap::new(),
            counters: HttpCounters::default(),
        }
    }

    /// This virtual user's own value of type `T`, made with `T::default()` on first use and kept
    /// for the user's whole run, from its `setup` to its `teardown`: a session token, a cart id,
    /// a counter. Each type is one slot.
    ///
    /// ```no_run
    /// #[derive(Default)]
    /// struct Session {
    ///     token: String,
    /// }
    ///
    /// async fn log_in(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ///     let token = ctx.post("/login").send().await?.expect_status(200)?.text()?.to_owned();
    ///     ctx.user_data::<Session>().token = token;
    ///     Ok(())
    /// }
    ///
    /// #[loadbench::scenario(concurrency = 10, count = 1_000, setup = log_in)]
    /// async fn account(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ///     let auth = format!("Bearer {}", ctx.user_data::<Session>().token);
    ///     ctx.get("/account").header("authorization", &auth).send().await?.expect_status(200)?;
    ///     Ok(())
    /// }
    /// # fn main() {}
    /// ```
    pub fn user_data<T: Default + 'static>(&mut self) -> &mut T {
        let slot = self.user_data.entry(TypeId::of::<T>()).or_insert_with(|| Box::new(T::default()));
        match slot.downcast_mut::<T>() {
            Some(value) => value,
            None => unreachable!("each slot holds the type of its key"),
        }
    }

    /// This virtual user's number, from 0 to `concurrency - 1`; handy for picking test data.
    pub fn user(&self) -> u32 {
        self.user
    }

    /// The base URL requests go to.
    pub fn target(&self) -> &str {
        self.target.url()
    }

    /// Starts a GET request for `path`, relative to the target's base URL.
    pub fn get(&mut self, path: &str) -> RequestBuilder<'_> {
        self.request(Method::GET, path)
    }

    /// Starts a POST request for `path`, relative to the target's base URL.
    pub fn post(&mut self, path: &str) -> RequestBuilder<'_> {
        self.request(Method::POST, path)
    }

    /// Starts a PUT request for `path`, relative to the target's base URL.
    pub fn put(&mut self, path: &str) -> RequestBuilder<'_> {
        self.request(Method::PUT, path)
    }

    /// Starts a DELETE request for `path`, relative to the target's base URL.
    pub fn delete(&mut self, path: &str) -> RequestBuilder<'_> {
        self.request(Method::DELETE, path)
    }

    /// Starts a request with any method.
    pub fn request(&mut self, method: Method, path: &str) -> RequestBuilder<'_> {
        let (uri, error) = match self.uri_for(path) {
            Ok(uri) => (uri, None),
            Err(err) => (Uri::default(), Some(err)),
        };
        RequestBuilder { ctx: self, method, uri, headers: HeaderMap::new(), body: Bytes::new(), error }
    }

    fn uri_for(&mut self, path: &str) -> Result<Uri> {
        if let Some((last, uri)) = &self.last_uri
            && last == path
        {
            return Ok(uri.clone());
        }
        let joined = self.target.join(path);
        let uri = Uri::try_from(joined.as_str())
            .map_err(|e| Error::with_source(ErrorKind::Scenario, format!("invalid request path `{path}`"), e))?;
        self.last_uri = Some((path.to_owned(), uri.clone()));
        Ok(uri)
    }

    /// Sends `request` and reads the whole response, within the timeout.
    async fn execute(&mut self, request: Result<Request<Full<Bytes>>>) -> Result<Response> {
        let request = request?;
        let timeout = self.timeout;
        match tokio::time::timeout(timeout, self.exchange(request)).await {
            Ok(result) => result,
            Err(_) => {
                // The connection is mid-exchange: its state is unknown, so it cannot be reused.
                self.conn = None;
                Err(Error::new(
                    ErrorKind::Timeout,
                    format!("no complete response within {}", humantime::format_duration(timeout)),
                ))
            }
        }
    }

    async fn exchange(&mut self, mut request: Request<Full<Bytes>>) -> Result<Response> {
        // One retry, only for a request hyper never started to send: the server may close an
        // idle keep-alive connection just as we pick it up, which is not the server failing.
        let mut retried = false;
        let response = loop {
            let conn = self.ready_connection().await?;
            match conn.send(request).await {
                Ok(response) => break response,
                Err(mut err) => {
                    self.conn = None;
                    match err.take_message() {
                        Some(unsent) if !retried => {
                            retried = true;
                            request = unsent;
                        }
                        _ => return Err(Error::with_source(ErrorKind::Io, "request failed", err.into_error())),
                    }
                }
            }
        };
        let (parts, body) = response.into_parts();
        self.counters.responses += 1;
        self.counters.count_status(parts.status);
        let Some(conn) = self.conn.as_mut() else {
            return Err(Error::new(ErrorKind::Io, "the connection was lost before the body arrived"));
        };
        let body = match conn.read_body(body).await {
            Ok(body) => body,
            Err(err) => {
                self.conn = None;
                return Err(Error::with_source(ErrorKind::Io, "reading the response body failed", err));
            }
        };
        self.counters.bytes_received += body.len() as u64;
        Ok(Response { status: parts.status, headers: parts.headers, body })
    }

    /// The open connection, after reconnecting if the server closed the previous one.
    async fn ready_connection(&mut self) -> Result<&mut Http1Connection> {
        if let Some(conn) = &mut self.conn {
            // Not ready once the server has closed the connection (e.g. `Connection: close`).
            if !conn.ready().await {
                self.conn = None;
            }
        }
        if self.conn.is_none() {
            // Boxed: connecting is rare, and its large future would otherwise be part of (and
            // copied with) every request's future.
            let addr = self.target.addr();
            let conn = Box::pin(Http1Connection::open(addr)).await.map_err(|err| match err {
                ConnectError::Tcp(e) => Error::with_source(ErrorKind::Connect, format!("cannot connect to {addr}"), e),
                ConnectError::Handshake(e) => {
                    Error::with_source(ErrorKind::Connect, format!("HTTP handshake with {addr} failed"), e)
                }
            })?;
            self.counters.connections += 1;
            self.conn = Some(conn);
        }
        match &mut self.conn {
            Some(conn) => Ok(conn),
            None => Err(Error::new(ErrorKind::Connect, "no connection")),
        }
    }
}

/// A request being built; send it with [`RequestBuilder::send`].
#[derive(Debug)]
#[must_use = "a request does nothing until `.send().await`"]
pub struct RequestBuilder<'a> {
    ctx: &'a mut Ctx,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
    error: Option<Error>,
}

impl<'a> RequestBuilder<'a> {
    /// Adds a header. An invalid name or value makes [`send`](Self::send) fail with a scenario
    /// error.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        match (HeaderName::from_bytes(name.as_bytes()), HeaderValue::from_str(value)) {
            (Ok(name), Ok(value)) => {
                self.headers.append(name, value);
            }
            _ => {
                self.error.get_or_insert_with(|| Error::msg(format!("invalid header `{name}: {value}`")));
            }
        }
        self
    }

    /// Sets the request body.
    pub fn body(mut self, body: impl Into<Bytes>) -> Self {
        self.body = body.into();
        self
    }

    /// Sends the request and reads the whole response, within the scenario's timeout.
    ///
    /// Any status is a successful exchange here; use [`Response::expect_status`] to turn an
    /// unexpected status into an error that counts as a failed iteration.
    // Not an `async fn`: the request is built before the future exists, so the future returned
    // is `execute`'s own rather than a wrapper holding the builder's fields next to it (every
    // byte of a request's future is copied as it moves up through the awaits).
    #[allow(clippy::manual_async_fn)]
    pub fn send(self) -> impl std::future::Future<Output = Result<Response>> + 'a {
        let RequestBuilder { ctx, method, uri, headers, body, error } = self;
        let request = match error {
            Some(error) => Err(error),
            None => {
                let mut request = Request::new(Full::new(body));
                *request.method_mut() = method;
                *request.uri_mut() = uri;
                let request_headers = request.headers_mut();
                request_headers.reserve(headers.len() + 1);
                request_headers.insert(hyper::http::header::HOST, ctx.target.host_header().clone());
                request_headers.extend(headers);
                Ok(request)
            }
        };
        ctx.execute(request)
    }
}

/// A complete response: status, headers and body.
#[derive(Debug, Clone)]
pub struct Response {
    status: StatusCode,
    headers: HeaderMap,
    body: Bytes,
}

impl Response {
    /// The status code.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The response headers.
    pub fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    /// The body.
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
