//! Test support: a real hyper server on 127.0.0.1 that counts what it sees, so tests can compare
//! what loadbench reports with what the server observed; a server that misbehaves on purpose
//! ([`hostile`]; over HTTP/2, in raw frames, [`hostile_h2`]); a raw HTTP/1.1 server that shows how deep requests were pipelined
//! ([`pipelined`]); `cargo loadbench` run as the tests' child ([`cli`]) or watched while it runs
//! ([`child`]: peak memory, signals, a deadline); a test PKI and an HTTPS server that counts
//! handshakes and resumptions ([`tls`]); the JSON Schema every results document a test reads
//! is checked against ([`schema`]); headless Chromium, to open an HTML file offline and see what
//! it logged, threw and requested ([`browser`]); git repositories with a service and a bench
//! crate, for `cargo loadbench ab` and the shipped workflow ([`ab`]); a WebSocket echo server
//! that counts handshakes and messages ([`websocket`]); a tonic gRPC server that counts calls per
//! method ([`grpc`]); an HTTP/3 server on QUIC that counts connections, streams and requests
//! ([`h3server`]).

// A test server that cannot start is a broken test environment; failing loudly is right here.
#![allow(clippy::expect_used)]

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

/// Headless Chromium over the DevTools protocol, for tests of the HTML report in a real browser.
pub mod ab;
pub mod browser;
pub mod child;
pub mod cli;
pub mod grpc;
pub mod h2server;
pub mod h3server;
pub mod hostile;
pub mod hostile_h2;
pub mod hostile_h3;
pub mod outcomes;
pub mod pipelined;
pub mod schema;
pub mod timing;
pub mod tls;
pub mod websocket;
pub mod workflow;

/// How the test server answers. Request numbers start at 1, in order of arrival. Whatever the
/// behaviour, a path under `/missing/` is answered `404 Not Found`.
#[derive(Debug, Clone)]
pub struct Behavior {
    /// Time each request takes before its response.
    pub delay: Duration,
    /// Every Nth request gets a 500 response.
    pub fail_every: Option<u64>,
    /// Every Nth response carries `Connection: close`, so the server closes the connection after it.
    pub close_every: Option<u64>,
    /// Every Nth request has its connection dropped without any response.
    pub reset_every: Option<u64>,
    /// Every Nth request is held this long before its response (to trigger client timeouts).
    pub stall_every: Option<(u64, Duration)>,
    /// When request N arrives the whole server freezes for this long: every response, of that
    /// request and of any other in flight or arriving meanwhile, waits until the freeze ends.
    /// (A stop-the-world pause, as a garbage collector or a full disk makes; it happens once.)
    pub freeze_at: Option<(u64, Duration)>,
    /// The first N requests each take this long (a cold cache, a JIT warming up).
    pub slow_first: Option<(u64, Duration)>,
    /// Requests arriving within the first span after the first request each take the second
    /// duration.
    pub slow_for: Option<(Duration, Duration)>,
    /// Requests whose path starts with the first each take this much longer than `delay` (one
    /// step of a scenario made slower, for `tests/gate.rs`).
    pub path_delay: Option<(&'static str, Duration)>,
    /// The response body.
    pub body: &'static str,
    /// Answers every request in place of the rules above (an application: a login, redirects,
    /// an echo), from the request as received.
    pub app: Option<fn(&SeenRequest) -> Reply>,
}

/// What [`Behavior::app`] answers: a status, headers and a body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// The status code.
    pub status: u16,
    /// Headers, in order; a name may repeat (`set-cookie`).
    pub headers: Vec<(&'static str, String)>,
    /// The body.
    pub body: String,
}

impl Reply {
    /// A response with `status` and `body`, without headers of its own.
    pub fn new(status: u16, body: impl Into<String>) -> Reply {
        Reply { status, headers: Vec::new(), body: body.into() }
    }

    /// Adds a header.
    pub fn header(mut self, name: &'static str, value: impl Into<String>) -> Reply {
        self.headers.push((name, value.into()));
        self
    }
}

impl Default for Behavior {
    fn default() -> Self {
        Behavior {
            delay: Duration::ZERO,
            fail_every: None,
            close_every: None,
            reset_every: None,
            stall_every: None,
            freeze_at: None,
            slow_first: None,
            slow_for: None,
            path_delay: None,
            body: "<p>hello, world!</p>",
            app: None,
        }
    }
}

#[derive(Debug, Default)]
struct Counters {
    requests: AtomicU64,
    in_flight: AtomicU64,
    max_in_flight: AtomicU64,
    connections: AtomicU64,
    /// When the freeze of [`Behavior::freeze_at`] ends, once it has begun.
    frozen_until: Mutex<Option<Instant>>,
    /// When the first request arrived.
    first_request: Mutex<Option<Instant>>,
    /// The first [`RECORDED`] requests, as received.
    seen: Mutex<Vec<SeenRequest>>,
}

/// How many requests a [`TestServer`] keeps in full for [`TestServer::seen`]; it counts the
/// rest.
pub const RECORDED: usize = 1_000;

/// A request as the test server received it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeenRequest {
    /// The method, such as `POST`.
    pub method: String,
    /// The path and query of the request line.
    pub path: String,
    /// Every header, names in lower case, in the order received.
    pub headers: Vec<(String, String)>,
    /// The whole body.
    pub body: Vec<u8>,
}

impl SeenRequest {
    /// The value of the first header named `name` (lower case), if any.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

/// A server on an ephemeral loopback port; stops when dropped.
#[derive(Debug)]
pub struct TestServer {
    addr: SocketAddr,
    counters: Arc<Counters>,
    runtime: Option<tokio::runtime::Runtime>,
}

/// Decrements the in-flight count however the request ends (answered, dropped, or cancelled).
struct InFlight(Arc<Counters>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

impl TestServer {
    /// Starts a server with the given behaviour on 127.0.0.1 and an ephemeral port.
    pub fn start(behavior: Behavior) -> TestServer {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("test server runtime");
        let listener = runtime.block_on(TcpListener::bind("127.0.0.1:0")).expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local addr");
        let counters = Arc::new(Counters::default());
        let behavior = Arc::new(behavior);
        let accept_counters = Arc::clone(&counters);
        runtime.spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else { continue };
                let _ = stream.set_nodelay(true);
                accept_counters.connections.fetch_add(1, Ordering::SeqCst);
                let counters = Arc::clone(&accept_counters);
                let behavior = Arc::clone(&behavior);
                tokio::spawn(async move {
                    let service =
                        service_fn(move |request| handle(request, Arc::clone(&counters), Arc::clone(&behavior)));
                    let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
                });
            }
        });
        TestServer { addr, counters, runtime: Some(runtime) }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Requests received so far.
    pub fn requests(&self) -> u64 {
        self.counters.requests.load(Ordering::SeqCst)
    }

    /// The most requests that were being handled at the same moment.
    pub fn max_in_flight(&self) -> u64 {
        self.counters.max_in_flight.load(Ordering::SeqCst)
    }

    /// Checks the most requests this server had in flight at once against `users` virtual users:
    /// never more (exact, whatever the machine), and at least 90 % of them, since a slower or busier
    /// machine can leave a user or two between requests at the busiest moment.
    #[track_caller]
    pub fn assert_peak(&self, users: u64, what: &str) {
        let peak = self.max_in_flight();
        assert!(peak <= users, "{what}: {peak} requests in flight at once, more than the {users} users");
        let floor = (users * 9).div_ceil(10);
        assert!(peak >= floor, "{what}: at most {peak} requests in flight at once, under 90 % of the {users} users");
    }

    /// TCP connections accepted so far.
    pub fn connections(&self) -> u64 {
        self.counters.connections.load(Ordering::SeqCst)
    }

    /// The first [`RECORDED`] requests received, in order of arrival: method, path, headers
    /// and body.
    pub fn seen(&self) -> Vec<SeenRequest> {
        self.counters.seen.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

async fn handle(
    request: Request<Incoming>,
    counters: Arc<Counters>,
    behavior: Arc<Behavior>,
) -> Result<Response<Full<Bytes>>, std::io::Error> {
    let n = counters.requests.fetch_add(1, Ordering::SeqCst) + 1;
    let now = counters.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    counters.max_in_flight.fetch_max(now, Ordering::SeqCst);
    let _guard = InFlight(Arc::clone(&counters));
    let missing = request.uri().path().starts_with("/missing/");
    let path_delay = behavior.path_delay.filter(|(prefix, _)| request.uri().path().starts_with(prefix));
    let seen = record(request, &counters, behavior.app.is_some()).await;
    if let (Some(app), Some(seen)) = (behavior.app, seen) {
        let reply = app(&seen);
        let status = StatusCode::from_u16(reply.status).expect("the app answers a valid status");
        let mut response = Response::builder().status(status);
        for (name, value) in reply.headers {
            response = response.header(name, value);
        }
        return Ok(response.body(Full::new(Bytes::from(reply.body))).expect("the app's headers are valid"));
    }
    let every = |k: Option<u64>| k.is_some_and(|k| k > 0 && n.is_multiple_of(k));

    if let Some((k, length)) = behavior.freeze_at
        && n == k
    {
        *counters.frozen_until.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now() + length);
    }
    if !behavior.delay.is_zero() {
        tokio::time::sleep(behavior.delay).await;
    }
    if let Some((_, longer)) = path_delay {
        tokio::time::sleep(longer).await;
    }
    if let Some((first, slow)) = behavior.slow_first
        && n <= first
    {
        tokio::time::sleep(slow).await;
    }
    if let Some((span, slow)) = behavior.slow_for {
        let arrived = Instant::now();
        let first = *counters.first_request.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(arrived);
        if arrived.duration_since(first) < span {
            tokio::time::sleep(slow).await;
        }
    }
    let frozen_until = *counters.frozen_until.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(until) = frozen_until {
        tokio::time::sleep_until(until.into()).await;
    }
    if let Some((k, stall)) = behavior.stall_every
        && every(Some(k))
    {
        tokio::time::sleep(stall).await;
    }
    if every(behavior.reset_every) {
        // An error from the service makes hyper drop the connection without a response.
        return Err(std::io::Error::other("test server drops this connection"));
    }
    let status = if missing {
        StatusCode::NOT_FOUND
    } else if every(behavior.fail_every) {
        StatusCode::INTERNAL_SERVER_ERROR
    } else {
        StatusCode::OK
    };
    let mut response = Response::builder().status(status).header("content-type", "text/html");
    if every(behavior.close_every) {
        response = response.header("connection", "close");
    }
    Ok(response.body(Full::new(Bytes::from_static(behavior.body.as_bytes()))).expect("static response parts are valid"))
}

/// Reads the whole request, and keeps it when it is among the first [`RECORDED`]; returns it
/// when `wanted` (for [`Behavior::app`]).
async fn record(request: Request<Incoming>, counters: &Counters, wanted: bool) -> Option<SeenRequest> {
    let (parts, body) = request.into_parts();
    // Read even when not kept: a body left unread would cost the connection its keep-alive.
    let body = body.collect().await.map(|b| b.to_bytes().to_vec()).unwrap_or_default();
    let mut seen = counters.seen.lock().unwrap_or_else(|e| e.into_inner());
    if seen.len() >= RECORDED && !wanted {
        return None;
    }
    let request = SeenRequest {
        method: parts.method.to_string(),
        path: parts.uri.path_and_query().map_or_else(|| parts.uri.path().to_owned(), |p| p.as_str().to_owned()),
        headers: parts
            .headers
            .iter()
            .map(|(name, value)| (name.as_str().to_owned(), String::from_utf8_lossy(value.as_bytes()).into_owned()))
            .collect(),
        body,
    };
    if seen.len() < RECORDED {
        seen.push(request.clone());
    }
    wanted.then_some(request)
}

/// A loopback address where nothing listens, for connection-refused tests.
pub fn closed_port_url() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    let addr = listener.local_addr().expect("local addr");
    drop(listener);
    format!("http://{addr}")
}

/// Runs the scenario registered as `name` in the calling test binary against `target`, without
/// progress output, and returns its report (panicking, with the reason, if it could not run).
pub fn run_scenario(name: &str, target: &str) -> loadbench::report::ScenarioReport {
    let report = loadbench::Harness::new()
        .target(target)
        .only(name)
        .progress(false)
        .run_report()
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    schema::Schema::RunReport.assert_serializes_valid(&report, name);
    assert_eq!(report.scenarios.len(), 1, "{name} selected exactly once");
    report.scenarios.into_iter().next().unwrap_or_else(|| unreachable!("checked above"))
}

/// The named-request row `name` of `report` (`.name(…)` requests and `ctx.measure` operations),
/// which must be there.
#[track_caller]
pub fn request_row<'a>(report: &'a loadbench::report::ScenarioReport, name: &str) -> &'a loadbench::report::StepReport {
    report
        .requests
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no request row `{name}`: {:?}", report.requests))
}
