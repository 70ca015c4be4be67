//! An HTTP/3 server on 127.0.0.1 (quinn for QUIC, hyperium's h3 over it) that counts what it sees:
//! QUIC connections established, request streams opened, requests received and answered, and per
//! connection the requests it carried. Every request is answered `200 OK` with [`BODY`]. Its
//! certificate is the tests' PKI's `localhost` one ([`crate::tls`]), so a client trusts it with
//! the test CA, as over TCP. [`h3_get`] is a client written with the h3 crates directly, for the
//! server's own test; loadbench's client is measured against the server, not by it.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bytes::{Buf, Bytes};
use quinn::crypto::rustls::{QuicClientConfig, QuicServerConfig};
use rustls::{ClientConfig, RootCertStore, ServerConfig};

use crate::tls::{Identity, Pki};

/// The body of every response.
pub const BODY: &str = "hello, h3";

/// The ALPN of HTTP/3 (RFC 9114 § 3.1).
const ALPN: &[u8] = b"h3";

#[derive(Debug, Default)]
struct Counters {
    connections: AtomicU64,
    streams: AtomicU64,
    requests: AtomicU64,
    responses: AtomicU64,
    /// One per connection established: the requests it carried.
    per_connection: Mutex<Vec<Arc<AtomicU64>>>,
}

/// How an [`H3Server`] misbehaves, for the fault tests; the default answers every request at
/// once.
#[derive(Debug, Clone, Default)]
pub struct H3Options {
    /// How long each response waits before its head is sent.
    pub delay: Duration,
    /// After this many requests in all, the server reads requests and never answers them, nor
    /// sends anything else (QUIC still acknowledges packets until its idle timeout).
    pub stall_after: Option<u64>,
    /// The server's QUIC idle timeout (the connection's is the lower of both ends').
    pub idle_timeout: Option<Duration>,
    /// Every Nth request's stream is reset with `H3_INTERNAL_ERROR` instead of answered.
    pub reset_every: Option<u64>,
    /// Every Nth request's stream is refused with `H3_REQUEST_REJECTED` (unprocessed).
    pub reject_every: Option<u64>,
    /// After this many requests on a connection, the next one's arrival closes the connection
    /// with this application error code while the request waits.
    pub close_after: Option<(u64, u32)>,
    /// Accept 0-RTT early data on resumed connections (tickets allow it).
    pub zero_rtt: bool,
    /// With `zero_rtt`: issue tickets that allow early data, then honour none of them, so that
    /// every reconnect's early data is refused and its handshake is a full one, as after a
    /// server's restart.
    pub refuse_early_data: bool,
    /// After this many connection attempts, every new one is ignored (no packet in answer), as
    /// from a server gone away: a client that kept its tickets tries them in vain.
    pub silent_after: Option<u64>,
    /// Answer every request with a body of this many bytes instead of [`BODY`].
    pub body_size: Option<usize>,
    /// Ask every client for a certificate signed by the PKI's client CA (mutual TLS).
    pub client_auth: bool,
    /// Stop reading each request once its head is in (`STOP_SENDING` with `H3_NO_ERROR`), and
    /// answer it all the same, as RFC 9114 § 4.1.2 allows.
    pub stop_reading: bool,
}

/// A counting HTTP/3 server on an ephemeral loopback UDP port, on a runtime of its own; stops
/// when dropped.
#[derive(Debug)]
pub struct H3Server {
    addr: SocketAddr,
    counters: Arc<Counters>,
    /// Shut down in the background when dropped, so that a test on a runtime of its own (the
    /// h3 client's) may drop the server.
    runtime: Option<tokio::runtime::Runtime>,
}

impl H3Server {
    /// Starts a server with `pki`'s `localhost` certificate.
    pub fn start(pki: &Pki) -> H3Server {
        H3Server::start_with(pki, H3Options::default())
    }

    /// Starts a server with `pki`'s `localhost` certificate that behaves as `options` say.
    pub fn start_with(pki: &Pki, options: H3Options) -> H3Server {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("test server runtime");
        let mut tls = server_config(pki, options.client_auth);
        if options.zero_rtt {
            // QUIC asks for this exact value when early data is allowed (RFC 9001 § 4.6.1).
            tls.max_early_data_size = u32::MAX;
        }
        if options.refuse_early_data {
            tls.session_storage = Arc::new(Forgetful);
        }
        let crypto = QuicServerConfig::try_from(tls).expect("a TLS 1.3 configuration for QUIC");
        let mut config = quinn::ServerConfig::with_crypto(Arc::new(crypto));
        if let Some(idle) = options.idle_timeout {
            let mut transport = quinn::TransportConfig::default();
            transport.max_idle_timeout(Some(idle.try_into().expect("a valid idle timeout")));
            config.transport_config(Arc::new(transport));
        }
        let options = Arc::new(options);
        let endpoint = {
            let _inside = runtime.enter();
            quinn::Endpoint::server(config, (Ipv4Addr::LOCALHOST, 0).into()).expect("bind UDP 127.0.0.1:0")
        };
        let addr = endpoint.local_addr().expect("local addr");
        let counters = Arc::new(Counters::default());
        let accepting = Arc::clone(&counters);
        runtime.spawn(async move {
            let mut attempts = 0;
            while let Some(incoming) = endpoint.accept().await {
                attempts += 1;
                if options.silent_after.is_some_and(|after| attempts > after) {
                    incoming.ignore();
                    continue;
                }
                let (counters, options) = (Arc::clone(&accepting), Arc::clone(&options));
                tokio::spawn(async move {
                    // A handshake that fails is no connection: only established ones count.
                    let Ok(connecting) = incoming.accept() else { return };
                    let connection = if options.zero_rtt {
                        match connecting.into_0rtt() {
                            // Always `Ok` on a server: 0.5-RTT. Whether the client's early data was
                            // taken is the client's to report.
                            Ok((connection, _)) => Some(connection),
                            Err(connecting) => connecting.await.ok(),
                        }
                    } else {
                        connecting.await.ok()
                    };
                    if let Some(connection) = connection {
                        serve(connection, counters, options).await;
                    }
                });
            }
        });
        H3Server { addr, counters, runtime: Some(runtime) }
    }

    /// `https://localhost:PORT/` (the certificate's name; the port is UDP).
    pub fn url(&self) -> String {
        format!("https://localhost:{}/", self.addr.port())
    }

    /// The UDP address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// QUIC connections established (handshake complete).
    pub fn connections(&self) -> u64 {
        self.counters.connections.load(Ordering::SeqCst)
    }

    /// Request streams the clients opened, whether or not a request arrived on them.
    pub fn streams(&self) -> u64 {
        self.counters.streams.load(Ordering::SeqCst)
    }

    /// Requests received (their headers read).
    pub fn requests(&self) -> u64 {
        self.counters.requests.load(Ordering::SeqCst)
    }

    /// Responses sent in full (headers, body and the stream's end).
    pub fn responses(&self) -> u64 {
        self.counters.responses.load(Ordering::SeqCst)
    }

    /// Per connection established, in order, the requests it carried.
    pub fn requests_per_connection(&self) -> Vec<u64> {
        let per = self.counters.per_connection.lock().unwrap_or_else(PoisonError::into_inner);
        per.iter().map(|n| n.load(Ordering::SeqCst)).collect()
    }
}

impl Drop for H3Server {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// HTTP/3 on one established connection, until the client closes it.
async fn serve(connection: quinn::Connection, counters: Arc<Counters>, options: Arc<H3Options>) {
    counters.connections.fetch_add(1, Ordering::SeqCst);
    let on_connection = Arc::new(AtomicU64::new(0));
    counters.per_connection.lock().unwrap_or_else(PoisonError::into_inner).push(Arc::clone(&on_connection));
    let quic = connection.clone();
    let Ok(mut h3) = h3::server::Connection::<_, Bytes>::new(h3_quinn::Connection::new(connection)).await else {
        return;
    };
    // `Ok(None)` and errors both end the connection (a client's close is an error to h3).
    while let Ok(Some(resolver)) = h3.accept().await {
        counters.streams.fetch_add(1, Ordering::SeqCst);
        let (counters, on_connection, options) =
            (Arc::clone(&counters), Arc::clone(&on_connection), Arc::clone(&options));
        let quic = quic.clone();
        tokio::spawn(async move {
            let Ok((_request, mut stream)) = resolver.resolve_request().await else { return };
            let nth = counters.requests.fetch_add(1, Ordering::SeqCst) + 1;
            let on_this = on_connection.fetch_add(1, Ordering::SeqCst) + 1;
            if let Some((after, code)) = options.close_after
                && on_this > after
            {
                quic.close(code.into(), b"closed by the test server");
                return;
            }
            if options.stall_after.is_some_and(|after| nth > after) {
                // Holds the stream open, unanswered, until the connection ends.
                std::future::pending::<()>().await;
            }
            if options.reject_every.is_some_and(|k| nth % k == 0) {
                stream.stop_stream(h3::error::Code::H3_REQUEST_REJECTED);
                return;
            }
            if options.reset_every.is_some_and(|k| nth % k == 0) {
                stream.stop_stream(h3::error::Code::H3_INTERNAL_ERROR);
                return;
            }
            if options.stop_reading {
                stream.stop_sending(h3::error::Code::H3_NO_ERROR);
            }
            if !options.delay.is_zero() {
                tokio::time::sleep(options.delay).await;
            }
            let response = http::Response::builder().status(200).body(()).expect("valid response parts");
            // Counted before the stream ends: a client that has read the whole response sees
            // the count already.
            if let Some(size) = options.body_size {
                // A large body, for the client's limit: sent until the client stops it.
                if stream.send_response(response).await.is_err() {
                    return;
                }
                let chunk = Bytes::from(vec![b'x'; 64 * 1024]);
                let mut left = size;
                while left > 0 {
                    let part = chunk.slice(..left.min(chunk.len()));
                    left -= part.len();
                    if stream.send_data(part).await.is_err() {
                        return;
                    }
                }
                counters.responses.fetch_add(1, Ordering::SeqCst);
                let _ = stream.finish().await;
                return;
            }
            if stream.send_response(response).await.is_ok()
                && stream.send_data(Bytes::from_static(BODY.as_bytes())).await.is_ok()
            {
                counters.responses.fetch_add(1, Ordering::SeqCst);
                let _ = stream.finish().await;
            }
        });
    }
}

fn server_config(pki: &Pki, client_auth: bool) -> ServerConfig {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let identity = pki.server(Identity::Localhost);
    let builder = ServerConfig::builder_with_provider(Arc::clone(&provider))
        .with_protocol_versions(&[&rustls::version::TLS13])
        .expect("TLS 1.3 in the ring provider");
    let builder = if client_auth {
        let mut roots = RootCertStore::empty();
        roots.add(pki.client_ca_der()).expect("client CA into the root store");
        let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
            .build()
            .expect("client certificate verifier");
        builder.with_client_cert_verifier(verifier)
    } else {
        builder.with_no_client_auth()
    };
    let mut config =
        builder.with_single_cert(identity.chain(), identity.private_key()).expect("server certificate and key");
    config.alpn_protocols = vec![ALPN.to_vec()];
    config
}

/// A session store that takes every ticket and finds none of them again: tickets go out, and
/// each resumption is refused with its early data.
#[derive(Debug)]
struct Forgetful;

impl rustls::server::StoresServerSessions for Forgetful {
    fn put(&self, _key: Vec<u8>, _value: Vec<u8>) -> bool {
        true
    }

    fn get(&self, _key: &[u8]) -> Option<Vec<u8>> {
        None
    }

    fn take(&self, _key: &[u8]) -> Option<Vec<u8>> {
        None
    }

    fn can_cache(&self) -> bool {
        true
    }
}

/// What [`h3_get`] saw of one response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct H3Response {
    /// The status code.
    pub status: u16,
    /// The whole body, as text.
    pub body: String,
}

/// Opens one QUIC connection to `server` trusting `pki`'s CA, sends `requests` GET / on it at
/// once (a stream each), reads every response in full, and closes the connection. The h3 crates'
/// own client: a reference for the server's counts, independent of loadbench's client.
pub async fn h3_get(server: &H3Server, pki: &Pki, requests: usize) -> Vec<H3Response> {
    let mut roots = RootCertStore::empty();
    roots.add(pki.ca_der()).expect("the test CA is a valid trust anchor");
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut crypto = ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .expect("TLS 1.3 in the ring provider")
        .with_root_certificates(roots)
        .with_no_client_auth();
    crypto.alpn_protocols = vec![ALPN.to_vec()];
    let crypto = QuicClientConfig::try_from(crypto).expect("a TLS 1.3 configuration for QUIC");
    let mut endpoint = quinn::Endpoint::client((Ipv4Addr::LOCALHOST, 0).into()).expect("bind UDP 127.0.0.1:0");
    endpoint.set_default_client_config(quinn::ClientConfig::new(Arc::new(crypto)));
    let connection = endpoint.connect(server.addr(), "localhost").expect("connect").await.expect("QUIC handshake");
    let (mut driver, send_request) = h3::client::new(h3_quinn::Connection::new(connection.clone())).await.expect("h3");
    let driving = tokio::spawn(async move { std::future::poll_fn(|cx| driver.poll_close(cx)).await });
    let mut exchanges = Vec::new();
    for _ in 0..requests {
        let mut send_request = send_request.clone();
        let url = server.url();
        exchanges.push(tokio::spawn(async move {
            let request = http::Request::get(url).body(()).expect("request parts");
            let mut stream = send_request.send_request(request).await.expect("send the request");
            // The server may stop reading once it has the request's head (RFC 9114 § 4.1.2):
            // then the end fails, and the response is read all the same.
            let _ = stream.finish().await;
            let response = stream.recv_response().await.expect("response headers");
            let mut body = Vec::new();
            while let Some(mut chunk) = stream.recv_data().await.expect("response body") {
                while chunk.has_remaining() {
                    let part = chunk.chunk();
                    body.extend_from_slice(part);
                    let n = part.len();
                    chunk.advance(n);
                }
            }
            H3Response { status: response.status().as_u16(), body: String::from_utf8_lossy(&body).into_owned() }
        }));
    }
    let mut responses = Vec::new();
    for exchange in exchanges {
        responses.push(exchange.await.expect("an exchange's task"));
    }
    drop(send_request);
    connection.close(0u32.into(), b"done");
    let _ = driving.await;
    endpoint.wait_idle().await;
    responses
}

/// The options of a client over HTTP/3 (when `http3`, as `--http3` sets them; otherwise the
/// scenario's attribute decides) that trusts `pki`'s CA.
pub fn client(pki: &Pki, http3: bool) -> loadbench::http::ClientOptions {
    let tls = loadbench::http::TlsOptions::default().ca_file(&pki.ca);
    loadbench::http::ClientOptions { http3, tls, ..loadbench::http::ClientOptions::default() }
}

/// Runs the registered scenario `name` against `url` with `client`, its results checked against
/// the schema, and returns its report.
pub fn run(name: &str, url: &str, client: loadbench::http::ClientOptions) -> loadbench::report::ScenarioReport {
    let report = loadbench::Harness::new()
        .target(url)
        .only(name)
        .progress(false)
        .client(client)
        .run_report()
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    crate::schema::Schema::RunReport.assert_serializes_valid(&report, name);
    report.scenarios.into_iter().next().unwrap_or_else(|| panic!("{name}: no scenario ran"))
}
