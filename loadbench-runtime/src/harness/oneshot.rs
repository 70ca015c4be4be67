//! One-shot runs: one HTTP request given at run time (as `cargo loadbench url …` gives it), sent
//! under a load also given at run time.
//!
//! A one-shot run goes through the same executor as a `#[scenario]`: the same virtual users and
//! connections, load models, generator self-check, progress and stop flag, and it reports the
//! same [`ScenarioReport`]. Only the body differs: instead of a registered function, each
//! iteration sends the prepared request and fails with [`ErrorKind::Status`] on a 4xx or 5xx
//! status.
//!
//! ```no_run
//! use loadbench::oneshot::{OneShot, Request};
//!
//! let request = Request::new(loadbench::Method::GET, "http://127.0.0.1:9090/").unwrap();
//! let report = OneShot::new(request, loadbench::load::Load::Count(100_000)).concurrency(1000).run();
//! println!("{} requests, {} failed", report.iterations, report.failed);
//! ```

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use bytes::Bytes;
use http::header::{HeaderName, HeaderValue};
use http::uri::{Scheme, Uri};
use http::{Method, StatusCode};

use loadbench_grammar::{Percentile, Threshold};

use super::limits;
/// Why a run cannot speak HTTP/3 to a URL, if it cannot: the harness's rule, for `cargo loadbench
/// url --http3` to refuse before any request.
pub use super::runner::http3_refusal;
use super::runner::{Connections, RunSettings};
use crate::cli::Shard;
use crate::config::{DEFAULT_GRACE, DEFAULT_TIMEOUT, Load, Rate, ScenarioConfig};
use crate::engine::registry::Workload;
use crate::engine::vu::{VirtualUser, vu_future};
use crate::engine::{Board, LoadPlan, Position, Sizing, StopFlags};
use crate::error::{Error, ErrorKind, Result};
use crate::http::{ClientOptions, Ctx, TlsSetupError};
use crate::report::{ScenarioReport, check};

/// Why a request of a one-shot run cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RequestError {
    /// The URL does not parse, or lacks a scheme or a host.
    #[error("`{url}` is not a valid URL: {reason}")]
    InvalidUrl {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A header is not `name: value`, or its name or value is not valid in HTTP.
    #[error("`{header}` is not a valid header: {reason}; write it as 'name: value'")]
    InvalidHeader {
        /// The header as given.
        header: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A method that is not an HTTP token.
    #[error("`{method}` is not a valid HTTP method")]
    InvalidMethod {
        /// The method as given.
        method: String,
    },
}

/// One request header, checked when it is parsed from `name: value`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// The name, in lower case (as HTTP/1.1 servers see it, case-insensitively).
    name: String,
    value: String,
}

impl Header {
    /// The name and value as sent; both were checked by [`Header::from_str`].
    fn typed(&self) -> Option<(HeaderName, HeaderValue)> {
        Some((HeaderName::from_bytes(self.name.as_bytes()).ok()?, HeaderValue::from_str(&self.value).ok()?))
    }

    /// The header's name, in lower case.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The header's value, without surrounding spaces.
    pub fn value(&self) -> &str {
        &self.value
    }
}

impl FromStr for Header {
    type Err = RequestError;

    /// Parses `name: value`, as curl's, ab's and oha's `-H` take it.
    ///
    /// ```
    /// let h: loadbench::oneshot::Header = "X-Trace: abc 1".parse().unwrap();
    /// assert_eq!((h.name(), h.value()), ("x-trace", "abc 1"));
    /// assert!("no colon".parse::<loadbench::oneshot::Header>().is_err());
    /// ```
    fn from_str(text: &str) -> std::result::Result<Header, RequestError> {
        let invalid = |reason: &str| RequestError::InvalidHeader { header: text.to_owned(), reason: reason.to_owned() };
        let (name, value) = text.split_once(':').ok_or_else(|| invalid("it has no `:`"))?;
        let name = HeaderName::from_bytes(name.trim().as_bytes()).map_err(|_| invalid("the name is not a token"))?;
        let value = value.trim();
        HeaderValue::from_str(value).map_err(|_| invalid("the value holds a control character"))?;
        Ok(Header { name: name.as_str().to_owned(), value: value.to_owned() })
    }
}

impl fmt::Display for Header {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.name, self.value)
    }
}

/// The request a one-shot run sends: method, URL, headers and body, checked once up front.
#[derive(Debug, Clone)]
pub struct Request {
    method: Method,
    url: String,
    /// `http://host:port` or `https://host:port`: the target the virtual users connect to.
    origin: String,
    /// The path and query sent in the request line.
    path: String,
    headers: Vec<Header>,
    body: Bytes,
}

impl Request {
    /// A request with `method` for `url`, which must be an `http://` or `https://` URL with a
    /// host; its path and query are sent as they are.
    ///
    /// ```
    /// use loadbench::oneshot::Request;
    ///
    /// let r = Request::new(loadbench::Method::GET, "http://127.0.0.1:9090/items?id=1").unwrap();
    /// assert_eq!(r.default_name(), "GET /items?id=1");
    /// assert!(Request::new(loadbench::Method::GET, "ftp://127.0.0.1/").is_err());
    /// assert!(Request::new(loadbench::Method::GET, "127.0.0.1:9090").is_err());
    /// ```
    pub fn new(method: Method, url: &str) -> std::result::Result<Request, RequestError> {
        let invalid = |reason: &str| RequestError::InvalidUrl { url: url.to_owned(), reason: reason.to_owned() };
        let uri: Uri = url.parse().map_err(|e: http::uri::InvalidUri| invalid(&e.to_string()))?;
        match uri.scheme() {
            Some(s) if *s == Scheme::HTTP || *s == Scheme::HTTPS => {}
            Some(s) => return Err(invalid(&format!("the scheme must be http:// or https://, not {s}://"))),
            None => return Err(invalid("it needs a scheme and a host, as in http://127.0.0.1:8080/")),
        }
        let authority = uri.authority().ok_or_else(|| invalid("it has no host"))?;
        // The same host and port rules as every target: an out-of-range port is refused here,
        // before any load, rather than sent to port 80.
        crate::http::Target::check_authority(authority).map_err(|reason| invalid(&reason))?;
        let path = uri.path_and_query().map_or("/", |p| p.as_str());
        let path = if path.is_empty() { "/" } else { path };
        Ok(Request {
            method,
            url: url.to_owned(),
            origin: format!("{}://{authority}", uri.scheme_str().unwrap_or("http")),
            path: path.to_owned(),
            headers: Vec::new(),
            body: Bytes::new(),
        })
    }

    /// Parses a method name case-insensitively (`post` is `POST`); any HTTP token is accepted.
    pub fn parse_method(text: &str) -> std::result::Result<Method, RequestError> {
        Method::from_bytes(text.trim().to_ascii_uppercase().as_bytes())
            .map_err(|_| RequestError::InvalidMethod { method: text.to_owned() })
    }

    /// Adds a header, after any added before (a `Host` header replaces the URL's).
    pub fn header(mut self, header: Header) -> Request {
        self.headers.push(header);
        self
    }

    /// Sets the body.
    pub fn body(mut self, body: impl Into<Bytes>) -> Request {
        self.body = body.into();
        self
    }

    /// The method.
    pub fn method(&self) -> &Method {
        &self.method
    }

    /// The URL as given.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The path and query sent in the request line, such as `/items?id=1` (`/` for a URL
    /// without a path).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The name a run of this request gets when none is given: the method and the path with
    /// its query, such as `GET /items?id=1`. It leaves out the host and port, so that a baseline
    /// recorded against one server (or port) compares with a run against another.
    pub fn default_name(&self) -> String {
        format!("{} {}", self.method, self.path)
    }
}

/// Bodies up to this size are copied into each virtual user, so that cloning one per request
/// touches a reference count of that user's alone rather than one shared by every worker
/// thread; larger bodies are shared, as copying them per user could take more memory than the
/// run is worth.
const PER_USER_BODY: usize = 16 * 1024;

/// The request as each iteration sends it.
#[derive(Debug)]
struct Prepared {
    method: Method,
    path: String,
    /// Parsed once, not for every request.
    headers: Vec<(HeaderName, HeaderValue)>,
    body: Bytes,
}

impl Prepared {
    fn for_user(&self) -> Prepared {
        let body =
            if self.body.len() <= PER_USER_BODY { Bytes::copy_from_slice(&self.body) } else { self.body.clone() };
        Prepared { method: self.method.clone(), path: self.path.clone(), headers: self.headers.clone(), body }
    }

    async fn send(&self, ctx: &mut Ctx) -> Result<()> {
        // Only the status is looked at: the body is counted and dropped as it arrives, so that
        // memory stays flat however large the server's answers are.
        let mut request = ctx.request(self.method.clone(), &self.path).discard_body();
        for (name, value) in &self.headers {
            request = request.typed_header(name.clone(), value.clone());
        }
        if !self.body.is_empty() {
            request = request.body(self.body.clone());
        }
        let status = request.send().await?.status();
        // As k6 and wrk count them: 2xx and 3xx succeed (redirects are not followed).
        if status.as_u16() < StatusCode::BAD_REQUEST.as_u16() {
            Ok(())
        } else {
            Err(Error::new(ErrorKind::Status, format!("expected a status below 400, got {status}")))
        }
    }
}

/// A one-shot run: a [`Request`] and the load to send it under. Build it, then [`OneShot::run`].
#[derive(Debug, Clone)]
#[must_use]
pub struct OneShot {
    name: String,
    request: Request,
    concurrency: u32,
    load: Load,
    rate: Option<Rate>,
    timeout: Duration,
    thresholds: Vec<Threshold>,
    percentiles: Vec<Percentile>,
    progress: bool,
    worker_threads: Option<usize>,
    grace: Duration,
    stop: StopFlags,
    connections: Connections,
    shard: Option<Shard>,
    histograms: bool,
}

impl OneShot {
    /// Sends `request` under `load` from one virtual user, with the default timeout, showing
    /// progress, named by [`Request::default_name`].
    pub fn new(request: Request, load: Load) -> OneShot {
        OneShot {
            name: request.default_name(),
            request,
            concurrency: ScenarioConfig::DEFAULT.users(),
            load,
            rate: None,
            timeout: DEFAULT_TIMEOUT,
            thresholds: Vec::new(),
            percentiles: Vec::new(),
            progress: true,
            worker_threads: None,
            grace: DEFAULT_GRACE,
            stop: StopFlags::default(),
            connections: Connections::default(),
            shard: None,
            histograms: false,
        }
    }

    /// The name in the report (and so in tables, baselines and `--threshold NAME:…`).
    pub fn name(mut self, name: impl Into<String>) -> OneShot {
        self.name = name.into();
        self
    }

    /// Virtual users, each with its own connection unless the client options share fewer
    /// (`ClientOptions::connections`): requests in flight at once in the closed model, the users
    /// available to serve the rate in the open model. At least 1.
    pub fn concurrency(mut self, users: u32) -> OneShot {
        self.concurrency = users.max(1);
        self
    }

    /// Open model: start requests at this rate, whether or not earlier ones have finished.
    pub fn rate(mut self, rate: Option<Rate>) -> OneShot {
        self.rate = rate;
        self
    }

    /// Per-request timeout (connect, send and whole response).
    pub fn timeout(mut self, timeout: Duration) -> OneShot {
        self.timeout = timeout;
        self
    }

    /// Conditions the run must meet; their outcomes are in [`ScenarioReport::thresholds`].
    pub fn thresholds(mut self, thresholds: Vec<Threshold>) -> OneShot {
        self.thresholds = thresholds;
        self
    }

    /// Shows or hides progress on stderr; the results, failures' causes included, are in the
    /// report either way.
    pub fn progress(mut self, show: bool) -> OneShot {
        self.progress = show;
        self
    }

    /// Runs the virtual users on this many worker threads instead of one per CPU (half of them
    /// for a server on this machine).
    pub fn worker_threads(mut self, threads: usize) -> OneShot {
        self.worker_threads = Some(threads.max(1));
        self
    }

    /// How long requests in flight may go on after a duration-bound run's end, or after the
    /// stop flag is set, before they are cancelled (counted in
    /// [`ScenarioReport::cancelled`](crate::report::ScenarioReport::cancelled)). Default 5 s.
    pub fn grace(mut self, grace: Duration) -> OneShot {
        self.grace = grace;
        self
    }

    /// A flag that stops the run when set: no new request starts, those in flight may finish
    /// within the grace period, and the report says `interrupted`. Set it from a Ctrl-C handler.
    pub fn stop_flag(mut self, stop: Arc<AtomicBool>) -> OneShot {
        self.stop.graceful = stop;
        self
    }

    /// A flag that cancels the requests in flight at once when set (a second Ctrl-C).
    pub fn cancel_flag(mut self, cancel: Arc<AtomicBool>) -> OneShot {
        self.stop.now = cancel;
        self
    }

    /// How connections are made: TLS settings and `--connect-to` rules. The TLS files and the
    /// machine's trust store are read here, once for every run of this load, so that a bad file
    /// is found before any request.
    pub fn client(mut self, options: ClientOptions) -> std::result::Result<OneShot, TlsSetupError> {
        self.connections = Connections::new(options, std::iter::once(self.request.url.as_str()))?;
        Ok(self)
    }

    /// Also measures these latency percentiles (beyond p50, p90, p95, p99 and p99.9, always
    /// measured), as `cargo loadbench url --percentiles 75,99.99` shows them.
    ///
    /// ```no_run
    /// # use loadbench::oneshot::OneShot;
    /// # fn more(run: OneShot) -> OneShot {
    /// run.percentiles(vec!["p75".parse().unwrap()])
    /// # }
    /// ```
    pub fn percentiles(mut self, percentiles: Vec<Percentile>) -> OneShot {
        self.percentiles = percentiles;
        self
    }

    /// Runs part `shard` of the load, as `cargo loadbench url --shard I/N`: the users, the
    /// request count and the rate split as a scenario's are (the shards add up to the whole
    /// exactly; users numbered across them), the report's `config` the whole load and its
    /// `share` this part. The latencies carry their histograms, which a merge adds up. Fewer users
    /// than shards leave this shard without one: check [`Shard::too_few_users`] first (the run
    /// comes back with a `setup_error` saying so).
    pub fn shard(mut self, shard: Option<Shard>) -> OneShot {
        self.shard = shard;
        self
    }

    /// Writes every latency's HdrHistogram into the report (base64 of the V2 deflate encoding),
    /// as `--histograms` asks; always on for a shard.
    pub fn histograms(mut self, on: bool) -> OneShot {
        self.histograms = on;
        self
    }

    /// Runs the load and returns its report. A run that cannot start (the host does not
    /// resolve, too few file descriptors) comes back with [`ScenarioReport::setup_error`] set;
    /// request failures are counted in it, never fatal.
    pub fn run(&self) -> ScenarioReport {
        let prepared = Arc::new(Prepared {
            method: self.request.method.clone(),
            path: self.request.path.clone(),
            headers: self.request.headers.iter().filter_map(Header::typed).collect(),
            body: self.request.body.clone(),
        });
        let workload = Workload {
            name: Arc::from(self.name.as_str()),
            run: Arc::new(move |user: VirtualUser| {
                let request = prepared.for_user();
                vu_future(user, async move |ctx: &mut Ctx| request.send(ctx).await)
            }),
            setup: None,
            teardown: None,
            feed: None,
        };
        // Thresholds of a registered scenario are `'static`; these are added to the report.
        let config = ScenarioConfig {
            rate: self.rate,
            timeout: Some(self.timeout),
            grace: Some(self.grace),
            concurrency: Some(self.concurrency),
            load: self.load,
            ..ScenarioConfig::DEFAULT
        };
        let settings = RunSettings {
            sizing: Sizing::Declared,
            board: self.progress.then(Board::for_stderr),
            worker_threads: self.worker_threads,
            file_limit: limits::raise_open_files(),
            // The request goes to a server of its own, never one in this process.
            server_here: None,
            stop: self.stop.clone(),
            grace: None,
            connections: self.connections.clone(),
            // The thresholds are added after the run: their percentiles are measured here.
            percentiles: self
                .percentiles
                .iter()
                .copied()
                .chain(self.thresholds.iter().filter_map(|t| t.metric.percentile()))
                .collect(),
            shard: self.shard,
            histograms: self.histograms || self.shard.is_some(),
            // `cargo loadbench url` pushes no live metrics.
            #[cfg(feature = "remote-write")]
            remote_write: None,
        };
        let plan = LoadPlan::new(&config, settings.sizing);
        let mut report = settings.run(&workload, &plan, &config, &self.request.origin, Position { index: 1, of: 1 });
        report.config.target = Some(self.request.url.clone());
        report.config.thresholds = self.thresholds.clone();
        check::judge(&mut report);
        report
    }
}

#[cfg(test)]
mod tests;
