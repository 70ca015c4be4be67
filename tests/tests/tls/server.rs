//! The test server and PKI themselves, checked with a plain tokio-rustls client, so that a failure
//! of the tests beside is loadbench's and not the test server's.

use std::collections::BTreeMap;
use std::sync::Arc;

use loadbench_tests::hostile::{Fault, HostileServer};
use loadbench_tests::tls::{BODY, Identity, Issued, OTHER_NAME, Pki, TlsOptions, TlsServer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// One HTTPS exchange with a plain tokio-rustls client: `GET /` with `Connection: close`, read to
/// the end; the whole response, or why it failed.
async fn fetch(server: &TlsServer, config: &Arc<rustls::ClientConfig>, name: &str) -> Result<String, String> {
    fetch_from(&server.addr().to_string(), config, name).await
}

async fn fetch_from(addr: &str, config: &Arc<rustls::ClientConfig>, name: &str) -> Result<String, String> {
    let connector = tokio_rustls::TlsConnector::from(Arc::clone(config));
    let stream = tokio::net::TcpStream::connect(addr).await.map_err(|e| format!("connect: {e}"))?;
    let server_name = rustls::pki_types::ServerName::try_from(name.to_owned()).map_err(|e| e.to_string())?;
    let mut tls = connector.connect(server_name, stream).await.map_err(|e| format!("handshake: {e}"))?;
    let request = format!("GET / HTTP/1.1\r\nHost: {name}\r\nConnection: close\r\n\r\n");
    tls.write_all(request.as_bytes()).await.map_err(|e| format!("write: {e}"))?;
    let mut response = String::new();
    tls.read_to_string(&mut response).await.map_err(|e| format!("read: {e}"))?;
    Ok(response)
}

/// A client trusting the test CA, offering `http/1.1`, with a client certificate if given.
fn client(pki: &Pki, client_cert: Option<&Issued>) -> Arc<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(pki.ca_der()).expect("test CA into the root store");
    let builder = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .expect("default protocol versions")
        .with_root_certificates(roots);
    let mut config = match client_cert {
        Some(issued) => builder.with_client_auth_cert(issued.chain(), issued.private_key()).expect("client cert"),
        None => builder.with_no_client_auth(),
    };
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Arc::new(config)
}

#[tokio::test]
async fn the_test_server_counts_handshakes_and_resumptions() {
    let pki = Pki::new();
    let server = TlsServer::start(&pki, TlsOptions::default());
    let config = client(&pki, None);
    for _ in 0..3 {
        let response = fetch(&server, &config, "localhost").await.expect("a CA-signed localhost certificate");
        assert!(response.starts_with("HTTP/1.1 200 OK") && response.ends_with(BODY), "{response}");
    }
    assert_eq!(server.connections(), 3);
    assert_eq!(
        (server.handshakes(), server.resumed(), server.failed_handshakes()),
        (3, 2, 0),
        "{:?}",
        server.failures()
    );
    assert_eq!(server.requests(), 3);
    assert_eq!(server.alpn_http11(), 3, "ALPN http/1.1 agreed");
    assert_eq!(server.versions(), BTreeMap::from([("TLSv1.3".to_owned(), 3)]));
    assert_eq!(server.server_names(), BTreeMap::from([(Some("localhost".to_owned()), 3)]));
    assert_eq!(server.hosts(), BTreeMap::from([("localhost".to_owned(), 3)]));
    // The certificate is for the IP address too.
    assert!(fetch(&server, &config, "127.0.0.1").await.is_ok());
}

#[tokio::test]
async fn the_test_pki_makes_the_certificates_it_says() {
    let pki = Pki::new();
    let config = client(&pki, None);
    for (identity, name, cause) in [
        (Identity::Expired, "localhost", "expired"),
        (Identity::OtherName, "localhost", "not valid for name"),
        (Identity::SelfSigned, "localhost", "UnknownIssuer"),
        (Identity::SelfSignedCa, "localhost", "CaUsedAsEndEntity"),
    ] {
        let server = TlsServer::start(&pki, TlsOptions { identity, ..TlsOptions::default() });
        let error = fetch(&server, &config, name).await.expect_err("refused");
        assert!(error.contains(cause), "{identity:?}: {error}");
        assert_eq!(server.handshakes(), 0, "{identity:?}");
    }
    let server = TlsServer::start(&pki, TlsOptions { identity: Identity::OtherName, ..TlsOptions::default() });
    assert!(fetch(&server, &config, OTHER_NAME).await.is_ok(), "valid for {OTHER_NAME}");
    assert_eq!(server.server_names(), BTreeMap::from([(Some(OTHER_NAME.to_owned()), 1)]));

    // TLS 1.2 only, resumed by session id.
    let server = TlsServer::start(&pki, TlsOptions { tls12_only: true, ..TlsOptions::default() });
    for _ in 0..2 {
        fetch(&server, &config, "localhost").await.expect("TLS 1.2");
    }
    assert_eq!((server.handshakes(), server.resumed()), (2, 1));
    assert_eq!(server.versions(), BTreeMap::from([("TLSv1.2".to_owned(), 2)]));

    // Mutual TLS: the client CA's certificate in, none or another CA's out.
    let server = TlsServer::start(&pki, TlsOptions { client_auth: true, ..TlsOptions::default() });
    fetch(&server, &client(&pki, Some(&pki.client)), "localhost").await.expect("a client certificate of the client CA");
    assert!(fetch(&server, &config, "localhost").await.is_err(), "no client certificate");
    assert!(fetch(&server, &client(&pki, Some(&pki.foreign_client)), "localhost").await.is_err(), "another CA's");
    assert_eq!((server.handshakes(), server.failed_handshakes()), (1, 2), "{:?}", server.failures());
}

#[test]
fn the_test_pki_writes_pem_files() {
    let pki = Pki::new();
    for path in [&pki.ca, &pki.client_ca, &pki.client.cert, &pki.client.key, &pki.server(Identity::Expired).cert] {
        let text = std::fs::read_to_string(path).expect("PEM file written");
        assert!(text.starts_with("-----BEGIN "), "{}: {text}", path.display());
        assert!(path.starts_with(pki.dir()));
    }
    let chain = std::fs::read_to_string(&pki.server(Identity::Localhost).cert).expect("chain");
    assert_eq!(chain.matches("BEGIN CERTIFICATE").count(), 2, "leaf and CA");
}

#[test]
fn the_hostile_server_refuses_tls_handshakes_with_an_alert() {
    // A runtime of the test's own: the hostile server starts with `block_on`, outside any runtime.
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let config = client(&Pki::new(), None);
    for (alert, received) in [(40, "HandshakeFailure"), (70, "ProtocolVersion")] {
        let server = HostileServer::start(Fault::TlsAlert(alert));
        let addr = server.url().replace("http://", "");
        let error = runtime.block_on(fetch_from(&addr, &config, "localhost")).expect_err("an alert");
        assert!(error.contains("handshake: ") && error.contains(received), "{error}");
        assert_eq!(server.requests(), 0);
    }
}
