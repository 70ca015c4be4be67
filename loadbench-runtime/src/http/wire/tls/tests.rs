//! The TLS client against small rustls servers on 127.0.0.1, as a scenario sees it (through
//! [`Ctx`]): an idle close noticed before the next request, a plain HTTP server behind
//! `https://`, a handshake that never completes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::{ServerConfig, ServerConnection, StreamOwned};

use super::{TlsClient, TlsOptions};
use crate::error::ErrorKind;
use crate::http::{Ctx, Target};

/// A rustls server configuration with a self-signed certificate for 127.0.0.1.
fn server_config() -> Arc<ServerConfig> {
    let certified = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap();
    let cert = CertificateDer::from(certified.cert.der().to_vec());
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(certified.signing_key.serialize_der()));
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![cert], key)
        .unwrap();
    Arc::new(config)
}

/// Serves each accepted connection with `serve` on a thread of its own; the server's address.
fn server(serve: impl Fn(TcpStream) + Send + Sync + Clone + 'static) -> String {
    crate::http::tests::server_at("https", serve)
}

fn insecure_ctx(url: &str, timeout: Duration) -> Ctx {
    let client = Arc::new(TlsClient::new(&TlsOptions::default().insecure(true)).unwrap());
    Ctx::new(Rc::new(Target::resolve_with(url, &[], Some(&client)).unwrap()), timeout, 0, None)
}

#[tokio::test]
async fn an_idle_close_is_noticed_and_the_session_resumed() {
    let config = server_config();
    let url = server(move |tcp| {
        let mut tls = StreamOwned::new(ServerConnection::new(Arc::clone(&config)).unwrap(), tcp);
        let mut buf = [0u8; 4096];
        if matches!(tls.read(&mut buf), Ok(n) if n > 0) {
            let _ = tls.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok");
            let _ = tls.flush();
        }
        // Closes as a server's idle timeout does: close_notify, then the socket, while the
        // client is between requests.
        std::thread::sleep(Duration::from_millis(20));
        tls.conn.send_close_notify();
        let _ = tls.flush();
    });
    let mut ctx = insecure_ctx(&url, Duration::from_secs(10));
    for _ in 0..3 {
        let response = ctx.get("/").send().await.unwrap();
        assert_eq!(response.text().unwrap(), "ok");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let counters = &ctx.counters;
    assert_eq!((counters.connections, counters.retries, counters.responses), (3, 0, 3));
    assert_eq!((counters.tls.handshakes, counters.tls.resumed), (3, 2), "each reconnect resumes");
}

#[tokio::test]
async fn plain_http_behind_https_is_a_tls_error_that_says_so() {
    let url = server(|mut tcp| {
        let mut buf = [0u8; 4096];
        let _ = tcp.read(&mut buf);
        let _ = tcp.write_all(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n");
    });
    let err = insecure_ctx(&url, Duration::from_secs(10)).get("/").send().await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Tls, "{err}");
    assert!(err.to_string().contains("is not TLS"), "{err}");
}

#[tokio::test]
async fn a_handshake_that_never_completes_times_out() {
    let url = server(|tcp| {
        std::thread::sleep(Duration::from_secs(5));
        drop(tcp);
    });
    let timeout = Duration::from_millis(300);
    let began = Instant::now();
    let err = insecure_ctx(&url, timeout).get("/").send().await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Timeout, "{err}");
    assert!(began.elapsed() < timeout + Duration::from_secs(2), "{:?}", began.elapsed());
}
