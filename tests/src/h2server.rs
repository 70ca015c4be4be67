//! An HTTP/2 server on 127.0.0.1 (hyper's, HTTP/1.1 too when ALPN or the client's first bytes
//! say so) that counts what it sees: connections, requests and the protocol of each, and per
//! connection the peak of streams in progress at once. It can limit streams
//! (`MAX_CONCURRENT_STREAMS`), close each connection gracefully with `GOAWAY` after K requests,
//! and reset every Nth stream (`RST_STREAM` with `INTERNAL_ERROR`: what hyper sends when its
//! service fails), for `tests/http2.rs`. `/chain/N` redirects (302) to `/chain/N-1` down to
//! `/chain/0`.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use rustls::ServerConfig;
use tokio::net::TcpListener;
use tokio::sync::Notify;
use tokio_rustls::TlsAcceptor;

use crate::tls::{Identity, Pki};

/// The body of every response.
pub const BODY: &str = "hello, h2";

/// How an [`H2Server`] behaves.
#[derive(Debug, Clone, Default)]
pub struct H2Options {
    /// The `MAX_CONCURRENT_STREAMS` it announces (hyper's default otherwise: 200).
    pub max_concurrent_streams: Option<u32>,
    /// Time each request takes before its response, so that streams overlap.
    pub delay: Duration,
    /// Each connection is shut down gracefully (`GOAWAY`) once it has seen this many requests.
    pub goaway_after: Option<u64>,
    /// Every Nth request (counted over the server) has its stream reset.
    pub reset_every: Option<u64>,
    /// Over TLS, the protocols ALPN offers (`h2`, `http/1.1`); `None`: plain TCP.
    pub alpn: Option<Vec<&'static str>>,
}

#[derive(Debug, Default)]
struct Counters {
    connections: AtomicU64,
    requests: AtomicU64,
    resets: AtomicU64,
    versions: Mutex<BTreeMap<String, u64>>,
    /// Requests per method and path, such as `GET /chain/2`.
    paths: Mutex<BTreeMap<String, u64>>,
    /// One per connection accepted.
    streams: Mutex<Vec<Arc<Streams>>>,
}

/// One connection's streams in progress, and their peak.
#[derive(Debug, Default)]
struct Streams {
    now: AtomicU64,
    peak: AtomicU64,
    requests: AtomicU64,
}

/// Ends a stream's count however its handler ends.
struct InProgress(Arc<Streams>);

impl Drop for InProgress {
    fn drop(&mut self) {
        self.0.now.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A counting HTTP/2 server on an ephemeral loopback port, on a runtime of its own; stops when
/// dropped.
#[derive(Debug)]
pub struct H2Server {
    addr: SocketAddr,
    tls: bool,
    counters: Arc<Counters>,
    _runtime: tokio::runtime::Runtime,
}

impl H2Server {
    /// Starts a server with `options`; over TLS, with `pki`'s `localhost` certificate.
    pub fn start(options: H2Options, pki: Option<&Pki>) -> H2Server {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("test server runtime");
        let std_listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        std_listener.set_nonblocking(true).expect("non-blocking listener");
        let addr = std_listener.local_addr().expect("local addr");
        let listener = {
            let _inside = runtime.enter();
            TcpListener::from_std(std_listener).expect("listener on the server's runtime")
        };
        let acceptor = options.alpn.as_ref().map(|alpn| {
            let pki = pki.expect("a PKI for a TLS server");
            TlsAcceptor::from(Arc::new(server_config(pki, alpn)))
        });
        let tls = acceptor.is_some();
        let counters = Arc::new(Counters::default());
        let accepting = Arc::clone(&counters);
        runtime.spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else { continue };
                let _ = tcp.set_nodelay(true);
                accepting.connections.fetch_add(1, Ordering::SeqCst);
                let counters = Arc::clone(&accepting);
                let options = options.clone();
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    match acceptor {
                        None => serve(TokioIo::new(tcp), options, counters).await,
                        Some(acceptor) => {
                            if let Ok(tls) = acceptor.accept(tcp).await {
                                serve(TokioIo::new(tls), options, counters).await;
                            }
                        }
                    }
                });
            }
        });
        H2Server { addr, tls, counters, _runtime: runtime }
    }

    /// `http://127.0.0.1:PORT/` or `https://…`.
    pub fn url(&self) -> String {
        format!("{}://{}/", if self.tls { "https" } else { "http" }, self.addr)
    }

    /// Connections accepted.
    pub fn connections(&self) -> u64 {
        self.counters.connections.load(Ordering::SeqCst)
    }

    /// Requests received, answered or reset.
    pub fn requests(&self) -> u64 {
        self.counters.requests.load(Ordering::SeqCst)
    }

    /// Streams reset (`reset_every`).
    pub fn resets(&self) -> u64 {
        self.counters.resets.load(Ordering::SeqCst)
    }

    /// Requests by protocol version (`HTTP/2.0`, `HTTP/1.1`).
    pub fn versions(&self) -> BTreeMap<String, u64> {
        self.counters.versions.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Per connection that sent a request, the most streams it had in progress at once.
    pub fn peak_streams(&self) -> Vec<u64> {
        let streams = self.counters.streams.lock().unwrap_or_else(PoisonError::into_inner);
        streams
            .iter()
            .filter(|s| s.requests.load(Ordering::SeqCst) > 0)
            .map(|s| s.peak.load(Ordering::SeqCst))
            .collect()
    }

    /// Requests per method and path, such as `GET /chain/2`.
    pub fn paths(&self) -> BTreeMap<String, u64> {
        self.counters.paths.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Per connection, the requests it carried.
    pub fn requests_per_connection(&self) -> Vec<u64> {
        let streams = self.counters.streams.lock().unwrap_or_else(PoisonError::into_inner);
        streams.iter().map(|s| s.requests.load(Ordering::SeqCst)).collect()
    }
}

/// HTTP/2 (or HTTP/1.1) on one accepted connection, shut down gracefully when `goaway_after`
/// says so.
async fn serve<I>(io: TokioIo<I>, options: H2Options, counters: Arc<Counters>)
where
    I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let streams = Arc::new(Streams::default());
    counters.streams.lock().unwrap_or_else(PoisonError::into_inner).push(Arc::clone(&streams));
    let goaway = Arc::new(Notify::new());
    let service = {
        let (options, goaway) = (options.clone(), Arc::clone(&goaway));
        service_fn(move |request: Request<Incoming>| {
            let (options, counters, streams, goaway) =
                (options.clone(), Arc::clone(&counters), Arc::clone(&streams), Arc::clone(&goaway));
            async move { answer(request, &options, &counters, streams, &goaway).await }
        })
    };
    let mut builder = auto::Builder::new(TokioExecutor::new());
    if let Some(max) = options.max_concurrent_streams {
        builder.http2().max_concurrent_streams(max);
    }
    let connection = builder.serve_connection(io, service);
    tokio::pin!(connection);
    tokio::select! {
        _ = connection.as_mut() => return,
        () = goaway.notified() => connection.as_mut().graceful_shutdown(),
    }
    let _ = connection.await;
}

async fn answer(
    request: Request<Incoming>,
    options: &H2Options,
    counters: &Counters,
    streams: Arc<Streams>,
    goaway: &Notify,
) -> Result<Response<Full<Bytes>>, std::io::Error> {
    let n = counters.requests.fetch_add(1, Ordering::SeqCst) + 1;
    *counters
        .versions
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .entry(format!("{:?}", request.version()))
        .or_default() += 1;
    *counters
        .paths
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .entry(format!("{} {}", request.method(), request.uri().path()))
        .or_default() += 1;
    let now = streams.now.fetch_add(1, Ordering::SeqCst) + 1;
    streams.peak.fetch_max(now, Ordering::SeqCst);
    let on_connection = streams.requests.fetch_add(1, Ordering::SeqCst) + 1;
    let _in_progress = InProgress(streams);
    if options.goaway_after == Some(on_connection) {
        goaway.notify_one();
    }
    tokio::time::sleep(options.delay).await;
    if options.reset_every.is_some_and(|every| n.is_multiple_of(every)) {
        counters.resets.fetch_add(1, Ordering::SeqCst);
        // hyper resets the stream with INTERNAL_ERROR when its service fails.
        return Err(std::io::Error::other("reset on purpose"));
    }
    let next = request.uri().path().strip_prefix("/chain/").and_then(|n| n.parse::<u32>().ok()).filter(|&n| n > 0);
    if let Some(n) = next {
        let redirect = Response::builder()
            .status(302)
            .header("location", format!("/chain/{}", n - 1))
            .body(Full::new(Bytes::new()))
            .map_err(std::io::Error::other)?;
        return Ok(redirect);
    }
    Ok(Response::new(Full::new(Bytes::from_static(BODY.as_bytes()))))
}

fn server_config(pki: &Pki, alpn: &[&str]) -> ServerConfig {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let identity = pki.server(Identity::Localhost);
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("protocol versions of the ring provider")
        .with_no_client_auth()
        .with_single_cert(identity.chain(), identity.private_key())
        .expect("server certificate and key");
    config.alpn_protocols = alpn.iter().map(|p| p.as_bytes().to_vec()).collect();
    config
}
