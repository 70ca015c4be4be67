//! A minimal hyper 1.x server answering `<p>hello, world!</p>` as text/html: the server of the
//! peer benchmark. One thread (the benchmark pins it to one core), keep-alive, no logging.
//!
//! Usage: `hello-server [ADDR] [--tls CERT.pem [--no-resumption] | --http2]` (default
//! 127.0.0.1:8080). Prints `listening on ADDR` when ready.
//!
//! HTTP/1.1 by default; pipelined requests are answered in order, their responses written
//! together when the requests arrived together (hyper's `pipeline_flush`, as TechEmpower's hyper
//! entry sets it), so that a pipelining generator is measured against a server that pipelines.
//!
//! With `--http2` it speaks HTTP/2 in clear text only, with prior knowledge (h2c, no `Upgrade`),
//! through hyper's HTTP/2 server on the same single thread: what `h2load`, `oha --http2` and
//! `loadbench --http2` send to an `http://` URL. It allows 256 concurrent streams a connection,
//! above the 100 the benchmark opens, so that the server's limit never shapes the load.
//!
//! With `--tls CERT.pem` it speaks HTTPS (tokio-rustls, ALPN `http/1.1`, TLS 1.2 and 1.3): it makes
//! a self-signed ECDSA P-256 certificate for `localhost` and `127.0.0.1` at start and writes it to
//! CERT.pem, for the generators' `--cacert`. Session resumption is rustls's default: a stateful
//! session cache, from which TLS 1.3 clients are sent tickets. `--no-resumption` turns both off
//! (no session cache, no tickets), so that every handshake is a full one whatever the client does.
//!
//! `GET /stats` answers the counts since start as one JSON line: `requests` answered,
//! `connections` accepted, `handshakes_full`, `handshakes_resumed` and `handshakes_failed` (0
//! without `--tls`). The request that asks is itself counted (its request, its connection and,
//! with TLS, its full handshake).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::server::conn::{http1, http2};
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::HandshakeKind;
use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio::net::{TcpSocket, TcpStream};
use tokio_rustls::TlsAcceptor;

const BODY: &[u8] = b"<p>hello, world!</p>";
const USAGE: &str = "usage: hello-server [ADDR] [--tls CERT.pem [--no-resumption] | --http2]";
/// Above the 100 streams a connection of the HTTP/2 benchmark (h2load's `-m 100`).
const MAX_CONCURRENT_STREAMS: u32 = 256;

static REQUESTS: AtomicU64 = AtomicU64::new(0);
static CONNECTIONS: AtomicU64 = AtomicU64::new(0);
static HANDSHAKES_FULL: AtomicU64 = AtomicU64::new(0);
static HANDSHAKES_RESUMED: AtomicU64 = AtomicU64::new(0);
static HANDSHAKES_FAILED: AtomicU64 = AtomicU64::new(0);

fn main() -> std::io::Result<()> {
    let mut addr = SocketAddr::from(([127, 0, 0, 1], 8080));
    let mut cert_path = None;
    let mut resumption = true;
    let mut h2 = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--tls" {
            cert_path = Some(args.next().ok_or_else(|| std::io::Error::other(USAGE))?);
        } else if arg == "--no-resumption" {
            resumption = false;
        } else if arg == "--http2" {
            h2 = true;
        } else if arg.starts_with('-') {
            return Err(std::io::Error::other(format!("unknown option `{arg}`; {USAGE}")));
        } else {
            addr = arg.parse().map_err(|e| std::io::Error::other(format!("bad address `{arg}`: {e}")))?;
        }
    }
    if h2 && cert_path.is_some() {
        return Err(std::io::Error::other(format!("--http2 is HTTP/2 in clear text, without --tls; {USAGE}")));
    }
    let protocol = if h2 { Protocol::Http2 } else { Protocol::Http1 };
    let acceptor = match cert_path {
        Some(path) => Some(tls_acceptor(&path, resumption)?),
        None if !resumption => return Err(std::io::Error::other(format!("--no-resumption needs --tls; {USAGE}"))),
        None => None,
    };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(serve(addr, acceptor, protocol))
}

/// A self-signed certificate for `localhost` and `127.0.0.1` (rcgen's default key: ECDSA P-256),
/// written as PEM to `cert_path`, and the rustls server configuration that presents it.
fn tls_acceptor(cert_path: &str, resumption: bool) -> std::io::Result<TlsAcceptor> {
    let certified = rcgen::generate_simple_self_signed(vec!["localhost".to_string(), "127.0.0.1".to_string()])
        .map_err(|e| std::io::Error::other(format!("certificate generation failed: {e}")))?;
    std::fs::write(cert_path, certified.cert.pem())
        .map_err(|e| std::io::Error::other(format!("cannot write {cert_path}: {e}")))?;
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(certified.signing_key.serialize_der()));
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(std::io::Error::other)?
        .with_no_client_auth()
        .with_single_cert(vec![certified.cert.der().clone()], key)
        .map_err(std::io::Error::other)?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    if !resumption {
        config.session_storage = Arc::new(rustls::server::NoServerSessionStorage {});
        config.send_tls13_tickets = 0;
    }
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// What a clear-text connection speaks.
#[derive(Clone, Copy)]
enum Protocol {
    Http1,
    /// Prior knowledge: the client's first bytes are HTTP/2's connection preface.
    Http2,
}

async fn serve(addr: SocketAddr, acceptor: Option<TlsAcceptor>, protocol: Protocol) -> std::io::Result<()> {
    let socket = TcpSocket::new_v4()?;
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    // 1,000 generator connections arrive at once; a short accept queue would drop SYNs.
    let listener = socket.listen(4096)?;
    println!("listening on {}", listener.local_addr()?);
    loop {
        let (stream, _) = listener.accept().await?;
        let _ = stream.set_nodelay(true);
        CONNECTIONS.fetch_add(1, Ordering::Relaxed);
        match &acceptor {
            None => {
                tokio::spawn(serve_connection(stream, protocol));
            }
            Some(acceptor) => {
                tokio::spawn(serve_tls_connection(acceptor.clone(), stream));
            }
        }
    }
}

async fn serve_connection(stream: TcpStream, protocol: Protocol) {
    let io = TokioIo::new(stream);
    let _ = match protocol {
        Protocol::Http1 => http1::Builder::new().pipeline_flush(true).serve_connection(io, service_fn(hello)).await,
        Protocol::Http2 => {
            http2::Builder::new(TokioExecutor::new())
                .max_concurrent_streams(MAX_CONCURRENT_STREAMS)
                .serve_connection(io, service_fn(hello))
                .await
        }
    };
}

async fn serve_tls_connection(acceptor: TlsAcceptor, stream: TcpStream) {
    let stream = match acceptor.accept(stream).await {
        Ok(stream) => stream,
        Err(_) => {
            HANDSHAKES_FAILED.fetch_add(1, Ordering::Relaxed);
            return;
        }
    };
    let counter = match stream.get_ref().1.handshake_kind() {
        Some(HandshakeKind::Resumed) => &HANDSHAKES_RESUMED,
        _ => &HANDSHAKES_FULL,
    };
    counter.fetch_add(1, Ordering::Relaxed);
    let _ = http1::Builder::new().pipeline_flush(true).serve_connection(TokioIo::new(stream), service_fn(hello)).await;
}

async fn hello(request: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    REQUESTS.fetch_add(1, Ordering::Relaxed);
    if request.uri().path() == "/stats" {
        let stats = format!(
            "{{\"requests\":{},\"connections\":{},\"handshakes_full\":{},\"handshakes_resumed\":{},\"handshakes_failed\":{}}}\n",
            REQUESTS.load(Ordering::Relaxed),
            CONNECTIONS.load(Ordering::Relaxed),
            HANDSHAKES_FULL.load(Ordering::Relaxed),
            HANDSHAKES_RESUMED.load(Ordering::Relaxed),
            HANDSHAKES_FAILED.load(Ordering::Relaxed),
        );
        let mut response = Response::new(Full::new(Bytes::from(stats)));
        response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        return Ok(response);
    }
    let mut response = Response::new(Full::new(Bytes::from_static(BODY)));
    response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("text/html"));
    Ok(response)
}
