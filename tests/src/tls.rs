// Over 500 lines because the test PKI and the HTTPS server counting handshakes are used together.
//! HTTPS for the end-to-end TLS tests (`tests/tls.rs`): a test PKI made with rcgen when the test
//! starts ([`Pki`]: a CA, server certificates for chosen names, an expired one, a client CA and
//! client certificates), written as PEM files the CLI is given (`--cacert`, `--cert`, `--key`),
//! and a hyper + tokio-rustls server on 127.0.0.1 ([`TlsServer`]) that counts what it sees at the
//! TLS layer — connections, handshakes, resumed handshakes, SNI, protocol versions, ALPN — so a
//! test can set what loadbench reports against what the server observed.
//!
//! Plain-HTTP servers for "this is not TLS" are [`crate::TestServer`]'s.

// A test server or PKI that cannot be made is a broken test environment; failing loudly is right.
#![allow(clippy::expect_used)]

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
    KeyUsagePurpose, date_time_ymd,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::server::{ServerSessionMemoryCache, WebPkiClientVerifier};
use rustls::{HandshakeKind, ProtocolVersion, RootCertStore, ServerConfig};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

/// The name of the server certificate for another host ([`Identity::OtherName`]).
pub const OTHER_NAME: &str = "api.example.test";

/// The body of every response.
pub const BODY: &str = "<p>hello, tls!</p>";

/// A certificate and its private key, in memory (DER) and on disk (PEM).
#[derive(Debug)]
pub struct Issued {
    /// The certificate chain: the leaf, then its issuer when not self-signed.
    chain: Vec<CertificateDer<'static>>,
    key_der: Vec<u8>,
    /// The PEM file of the chain.
    pub cert: PathBuf,
    /// The PEM file of the private key (PKCS#8).
    pub key: PathBuf,
}

impl Issued {
    /// The certificate chain (DER): the leaf, then its issuer when not self-signed.
    pub fn chain(&self) -> Vec<CertificateDer<'static>> {
        self.chain.clone()
    }

    /// The private key (DER, PKCS#8).
    pub fn private_key(&self) -> PrivateKeyDer<'static> {
        PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(self.key_der.clone()))
    }
}

/// Which certificate a [`TlsServer`] presents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Identity {
    /// Signed by the test CA, for `localhost` and `127.0.0.1`.
    Localhost,
    /// Signed by the test CA, for [`OTHER_NAME`] only.
    OtherName,
    /// Signed by the test CA, for `localhost` and `127.0.0.1`, expired since 2001.
    Expired,
    /// Self-signed, for `localhost` and `127.0.0.1`: no CA at all.
    SelfSigned,
    /// Self-signed and marked as a CA (`CA:TRUE`), as `openssl req -x509` makes them.
    SelfSignedCa,
}

/// The test PKI, made when created; its PEM files live in a temporary directory that is removed
/// when it is dropped.
#[derive(Debug)]
pub struct Pki {
    dir: tempfile::TempDir,
    /// The PEM file of the CA that signs the server certificates (give it to `--cacert`).
    pub ca: PathBuf,
    ca_der: CertificateDer<'static>,
    localhost: Issued,
    other_name: Issued,
    expired: Issued,
    self_signed: Issued,
    self_signed_ca: Issued,
    /// The PEM file of the CA that signs client certificates (the server trusts it for mTLS).
    pub client_ca: PathBuf,
    client_ca_der: CertificateDer<'static>,
    /// A client certificate signed by the client CA: accepted by a server asking for one.
    pub client: Issued,
    /// A client certificate signed by the server CA instead: refused by a server asking for one.
    pub foreign_client: Issued,
}

impl Default for Pki {
    fn default() -> Self {
        Pki::new()
    }
}

impl Pki {
    /// Makes every key and certificate and writes them under a new temporary directory.
    pub fn new() -> Pki {
        let dir = tempfile::tempdir().expect("tempdir for the test PKI");
        let ca = make_ca("loadbench test CA");
        let client_ca = make_ca("loadbench test client CA");
        let local = ["localhost", "127.0.0.1"];
        let localhost = issue(dir.path(), "localhost", &local, Some(&ca), Use::Server, keep);
        let other_name = issue(dir.path(), "other-name", &[OTHER_NAME], Some(&ca), Use::Server, keep);
        let expired = issue(dir.path(), "expired", &local, Some(&ca), Use::Server, expire);
        let self_signed = issue(dir.path(), "self-signed", &local, None, Use::Server, keep);
        let self_signed_ca = issue(dir.path(), "self-signed-ca", &local, None, Use::Server, as_ca);
        let client = issue(dir.path(), "client", &["client.test"], Some(&client_ca), Use::Client, keep);
        let foreign_client = issue(dir.path(), "foreign-client", &["client.test"], Some(&ca), Use::Client, keep);
        let ca_path = write(dir.path(), "ca.pem", &ca.pem());
        let client_ca_path = write(dir.path(), "client-ca.pem", &client_ca.pem());
        Pki {
            ca: ca_path,
            ca_der: ca.der().clone(),
            localhost,
            other_name,
            expired,
            self_signed,
            self_signed_ca,
            client_ca: client_ca_path,
            client_ca_der: client_ca.der().clone(),
            client,
            foreign_client,
            dir,
        }
    }

    /// The directory the PEM files are in.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The server certificate (and key) of `identity`.
    pub fn server(&self, identity: Identity) -> &Issued {
        match identity {
            Identity::Localhost => &self.localhost,
            Identity::OtherName => &self.other_name,
            Identity::Expired => &self.expired,
            Identity::SelfSigned => &self.self_signed,
            Identity::SelfSignedCa => &self.self_signed_ca,
        }
    }

    /// The test CA's certificate, for a client of the tests' own (the server's self-test).
    pub fn ca_der(&self) -> CertificateDer<'static> {
        self.ca_der.clone()
    }

    /// The client CA's certificate (DER), for a server that asks for client certificates.
    pub fn client_ca_der(&self) -> CertificateDer<'static> {
        self.client_ca_der.clone()
    }
}

fn make_ca(name: &str) -> CertifiedIssuer<'static, KeyPair> {
    let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA parameters");
    params.distinguished_name.push(DnType::CommonName, name);
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign, KeyUsagePurpose::DigitalSignature];
    let key = KeyPair::generate().expect("CA key");
    CertifiedIssuer::self_signed(params, key).expect("self-signed CA")
}

#[derive(Clone, Copy)]
enum Use {
    Server,
    Client,
}

fn keep(_: &mut CertificateParams) {}

/// Valid from 2000 to 2001.
fn expire(params: &mut CertificateParams) {
    params.not_before = date_time_ymd(2000, 1, 1);
    params.not_after = date_time_ymd(2001, 1, 1);
}

fn as_ca(params: &mut CertificateParams) {
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
}

/// Makes a leaf certificate for `names` (DNS names or IP addresses), signed by `issuer` (or
/// self-signed), changed by `tweak`, and writes `STEM.pem` and `STEM-key.pem` into `dir`.
fn issue(
    dir: &Path,
    stem: &str,
    names: &[&str],
    issuer: Option<&CertifiedIssuer<'static, KeyPair>>,
    usage: Use,
    tweak: fn(&mut CertificateParams),
) -> Issued {
    let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
    let mut params = CertificateParams::new(names.clone()).expect("leaf parameters");
    // A name no trust store has: a machine's store may hold a certificate named `localhost`
    // (Debian's ssl-cert snakeoil), and a self-signed `CN=localhost` would then be checked against it.
    params.distinguished_name.push(DnType::CommonName, format!("loadbench test {stem}"));
    params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    params.extended_key_usages = vec![match usage {
        Use::Server => ExtendedKeyUsagePurpose::ServerAuth,
        Use::Client => ExtendedKeyUsagePurpose::ClientAuth,
    }];
    tweak(&mut params);
    let key = KeyPair::generate().expect("leaf key");
    let (cert, mut pem) = match issuer {
        Some(ca) => {
            let cert = params.signed_by(&key, ca).expect("sign the leaf");
            let pem = cert.pem() + &ca.pem();
            (cert, pem)
        }
        None => {
            let cert = params.self_signed(&key).expect("self-sign the leaf");
            let pem = cert.pem();
            (cert, pem)
        }
    };
    let mut chain = vec![cert.der().clone()];
    if let Some(ca) = issuer {
        chain.push(ca.der().clone());
    }
    if !pem.ends_with('\n') {
        pem.push('\n');
    }
    Issued {
        chain,
        key_der: key.serialize_der(),
        cert: write(dir, &format!("{stem}.pem"), &pem),
        key: write(dir, &format!("{stem}-key.pem"), &key.serialize_pem()),
    }
}

fn write(dir: &Path, name: &str, contents: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, contents).expect("write a PEM file");
    path
}

/// How a [`TlsServer`] is set up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TlsOptions {
    /// The certificate it presents.
    pub identity: Identity,
    /// Requires a client certificate signed by the PKI's client CA (mutual TLS).
    pub client_auth: bool,
    /// Speaks TLS 1.2 only (else 1.2 and 1.3).
    pub tls12_only: bool,
    /// Answers `Connection: close` on every response, so every request needs a new connection
    /// (which a client with a session ticket resumes).
    pub close_every_response: bool,
}

impl Default for TlsOptions {
    fn default() -> Self {
        TlsOptions { identity: Identity::Localhost, client_auth: false, tls12_only: false, close_every_response: false }
    }
}

#[derive(Debug, Default)]
struct Counters {
    connections: AtomicU64,
    open: AtomicU64,
    peak_open: AtomicU64,
    handshakes: AtomicU64,
    resumed: AtomicU64,
    failed_handshakes: AtomicU64,
    requests: AtomicU64,
    alpn_http11: AtomicU64,
    /// Requests by their `Host` header.
    hosts: Mutex<BTreeMap<String, u64>>,
    /// Completed handshakes by the SNI the client sent (`None`: no SNI, as for an IP address).
    server_names: Mutex<BTreeMap<Option<String>, u64>>,
    /// Completed handshakes by protocol version (`TLSv1.3`).
    versions: Mutex<BTreeMap<String, u64>>,
    /// Why handshakes failed, as the server saw it: the first few.
    failures: Mutex<Vec<String>>,
}

/// Counts a TCP connection as open until its task ends, however it ends.
struct Open(Arc<Counters>);

impl Drop for Open {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Ordering::SeqCst);
    }
}

/// An HTTPS server on an ephemeral loopback port; stops when dropped.
#[derive(Debug)]
pub struct TlsServer {
    addr: SocketAddr,
    counters: Arc<Counters>,
    runtime: Option<tokio::runtime::Runtime>,
}

impl TlsServer {
    /// Starts a server with `options`, presenting a certificate of `pki`, on 127.0.0.1 and an
    /// ephemeral port. Callable from inside a Tokio runtime too (the server has its own).
    pub fn start(pki: &Pki, options: TlsOptions) -> TlsServer {
        let config = Arc::new(server_config(pki, options));
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
        let counters = Arc::new(Counters::default());
        let accept_counters = Arc::clone(&counters);
        let acceptor = TlsAcceptor::from(config);
        runtime.spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else { continue };
                let _ = stream.set_nodelay(true);
                let counters = Arc::clone(&accept_counters);
                counters.connections.fetch_add(1, Ordering::SeqCst);
                let now = counters.open.fetch_add(1, Ordering::SeqCst) + 1;
                counters.peak_open.fetch_max(now, Ordering::SeqCst);
                let acceptor = acceptor.clone();
                tokio::spawn(serve(stream, acceptor, counters, options.close_every_response));
            }
        });
        TlsServer { addr, counters, runtime: Some(runtime) }
    }

    /// `https://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("https://{}", self.addr)
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// TCP connections accepted so far.
    pub fn connections(&self) -> u64 {
        self.counters.connections.load(Ordering::SeqCst)
    }

    /// The most TCP connections that were open at the same moment.
    pub fn peak_open(&self) -> u64 {
        self.counters.peak_open.load(Ordering::SeqCst)
    }

    /// TLS handshakes completed (full and resumed).
    pub fn handshakes(&self) -> u64 {
        self.counters.handshakes.load(Ordering::SeqCst)
    }

    /// Of [`TlsServer::handshakes`], those that resumed a session.
    pub fn resumed(&self) -> u64 {
        self.counters.resumed.load(Ordering::SeqCst)
    }

    /// TLS handshakes that failed, once every connection accepted so far has finished its
    /// handshake one way or the other (waiting up to 5 s for that).
    ///
    /// The wait is what makes the figure exact: a client sees the server's alert as soon as it
    /// is sent, before the server's task has come back to count the failure.
    pub fn failed_handshakes(&self) -> u64 {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let failed = self.counters.failed_handshakes.load(Ordering::SeqCst);
            let ended = failed + self.counters.handshakes.load(Ordering::SeqCst);
            if ended >= self.counters.connections.load(Ordering::SeqCst) || Instant::now() >= deadline {
                return failed;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Why the first handshakes failed, as the server saw it.
    pub fn failures(&self) -> Vec<String> {
        self.counters.failures.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Requests answered so far.
    pub fn requests(&self) -> u64 {
        self.counters.requests.load(Ordering::SeqCst)
    }

    /// Requests by their `Host` header (empty: none).
    pub fn hosts(&self) -> BTreeMap<String, u64> {
        self.counters.hosts.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Completed handshakes that agreed on ALPN `http/1.1`.
    pub fn alpn_http11(&self) -> u64 {
        self.counters.alpn_http11.load(Ordering::SeqCst)
    }

    /// Completed handshakes by the SNI the client sent (`None`: none sent).
    pub fn server_names(&self) -> BTreeMap<Option<String>, u64> {
        self.counters.server_names.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Completed handshakes by protocol version, named as in the JSON (`TLSv1.3`).
    pub fn versions(&self) -> BTreeMap<String, u64> {
        self.counters.versions.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl Drop for TlsServer {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

fn server_config(pki: &Pki, options: TlsOptions) -> ServerConfig {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let versions: &[&rustls::SupportedProtocolVersion] = if options.tls12_only {
        &[&rustls::version::TLS12]
    } else {
        &[&rustls::version::TLS13, &rustls::version::TLS12]
    };
    let builder = ServerConfig::builder_with_provider(Arc::clone(&provider))
        .with_protocol_versions(versions)
        .expect("protocol versions of the ring provider");
    let builder = if options.client_auth {
        let mut roots = RootCertStore::empty();
        roots.add(pki.client_ca_der.clone()).expect("client CA into the root store");
        let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
            .build()
            .expect("client certificate verifier");
        builder.with_client_cert_verifier(verifier)
    } else {
        builder.with_no_client_auth()
    };
    let identity = pki.server(options.identity);
    let mut config =
        builder.with_single_cert(identity.chain.clone(), identity.private_key()).expect("server certificate and key");
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    // The default cache holds 256 sessions; a run with a reconnect per request makes more than
    // that, and a session evicted before its client came back would make a resumption fail for
    // a reason of the server's. (TLS 1.3 tickets are then stateful: ids into this cache.)
    config.session_storage = ServerSessionMemoryCache::new(65_536);
    config
}

/// The TLS handshake and then HTTP/1.1 on one accepted connection.
async fn serve(stream: tokio::net::TcpStream, acceptor: TlsAcceptor, counters: Arc<Counters>, close: bool) {
    let _open = Open(Arc::clone(&counters));
    let tls = match acceptor.accept(stream).await {
        Ok(tls) => tls,
        Err(e) => {
            counters.failed_handshakes.fetch_add(1, Ordering::SeqCst);
            let mut failures = counters.failures.lock().unwrap_or_else(|e| e.into_inner());
            if failures.len() < 10 {
                failures.push(e.to_string());
            }
            return;
        }
    };
    {
        let (_, connection) = tls.get_ref();
        if connection.handshake_kind() == Some(HandshakeKind::Resumed) {
            counters.resumed.fetch_add(1, Ordering::SeqCst);
        }
        if connection.alpn_protocol() == Some(b"http/1.1") {
            counters.alpn_http11.fetch_add(1, Ordering::SeqCst);
        }
        let sni = connection.server_name().map(str::to_owned);
        *counters.server_names.lock().unwrap_or_else(|e| e.into_inner()).entry(sni).or_default() += 1;
        let version = match connection.protocol_version() {
            Some(ProtocolVersion::TLSv1_3) => "TLSv1.3".to_owned(),
            Some(ProtocolVersion::TLSv1_2) => "TLSv1.2".to_owned(),
            other => format!("{other:?}"),
        };
        *counters.versions.lock().unwrap_or_else(|e| e.into_inner()).entry(version).or_default() += 1;
        // Counted last: a test that sees the handshake counted sees its details too.
        counters.handshakes.fetch_add(1, Ordering::SeqCst);
    }
    let service = service_fn(move |request| handle(request, Arc::clone(&counters), close));
    let _ = http1::Builder::new().serve_connection(TokioIo::new(tls), service).await;
}

async fn handle(
    request: Request<Incoming>,
    counters: Arc<Counters>,
    close: bool,
) -> Result<Response<Full<Bytes>>, std::io::Error> {
    let host = request.headers().get("host").map(|h| String::from_utf8_lossy(h.as_bytes()).into_owned());
    *counters.hosts.lock().unwrap_or_else(|e| e.into_inner()).entry(host.unwrap_or_default()).or_default() += 1;
    // Read the whole request: a body left unread would cost the connection its keep-alive.
    let _ = request.into_body().collect().await;
    counters.requests.fetch_add(1, Ordering::SeqCst);
    let mut response = Response::builder().status(200).header("content-type", "text/html");
    if close {
        response = response.header("connection", "close");
    }
    Ok(response.body(Full::new(Bytes::from_static(BODY.as_bytes()))).expect("static response parts are valid"))
}
