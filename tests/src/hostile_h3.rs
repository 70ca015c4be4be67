//! A hostile HTTP/3 server on 127.0.0.1 for `tests/http3_faults.rs`: QUIC from quinn, but its
//! HTTP/3 frames written by hand, since h3's server cannot be made to send what a hostile one
//! sends. It opens its control stream with an empty SETTINGS frame, then does what its
//! [`H3Fault`] says, and counts the bytes the client let it write past each frame's head: what
//! the client would have had to keep.

// A test server that cannot start is a broken test environment; failing loudly is right here.
#![allow(clippy::expect_used)]

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use quinn::crypto::rustls::QuicServerConfig;

use crate::tls::{Identity, Pki};

/// What the server sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum H3Fault {
    /// Answers each request with a HEADERS frame announcing a gigabyte, then sends its payload
    /// for as long as the client reads.
    EndlessHeaders,
    /// Sends, on its control stream after SETTINGS, a frame of a reserved type announcing a
    /// gigabyte, then its payload for as long as the client reads.
    EndlessUnknownFrame,
}

/// The most the server writes of an endless frame: 64 MiB, far past any limit of the client.
const ENDLESS: u64 = 64 << 20;

/// A hostile HTTP/3 server on an ephemeral loopback UDP port; stops when dropped.
#[derive(Debug)]
pub struct HostileH3 {
    addr: SocketAddr,
    written: Arc<AtomicU64>,
    runtime: Option<tokio::runtime::Runtime>,
}

impl HostileH3 {
    /// Starts a server with `pki`'s `localhost` certificate that sends what `fault` says.
    pub fn start(pki: &Pki, fault: H3Fault) -> HostileH3 {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("test server runtime");
        let identity = pki.server(Identity::Localhost);
        let mut tls = rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_protocol_versions(&[&rustls::version::TLS13])
            .expect("TLS 1.3")
            .with_no_client_auth()
            .with_single_cert(identity.chain(), identity.private_key())
            .expect("server certificate and key");
        tls.alpn_protocols = vec![b"h3".to_vec()];
        let crypto = QuicServerConfig::try_from(tls).expect("a TLS 1.3 configuration for QUIC");
        let config = quinn::ServerConfig::with_crypto(Arc::new(crypto));
        let endpoint = {
            let _inside = runtime.enter();
            quinn::Endpoint::server(config, (Ipv4Addr::LOCALHOST, 0).into()).expect("bind UDP 127.0.0.1:0")
        };
        let addr = endpoint.local_addr().expect("local addr");
        let written = Arc::new(AtomicU64::new(0));
        let counted = Arc::clone(&written);
        runtime.spawn(async move {
            while let Some(incoming) = endpoint.accept().await {
                let written = Arc::clone(&counted);
                tokio::spawn(async move {
                    if let Ok(connection) = incoming.await {
                        serve(connection, fault, written).await;
                    }
                });
            }
        });
        HostileH3 { addr, written, runtime: Some(runtime) }
    }

    /// `https://localhost:PORT/`.
    pub fn url(&self) -> String {
        format!("https://localhost:{}/", self.addr.port())
    }

    /// The bytes of endless frames the clients let the server write, in all.
    pub fn written(&self) -> u64 {
        self.written.load(Ordering::SeqCst)
    }
}

impl Drop for HostileH3 {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// A frame's head: its type and its length, as variable-length integers of 1 and 8 bytes.
fn frame_head(frame_type: u8, length: u64) -> Vec<u8> {
    let mut head = vec![frame_type];
    head.extend_from_slice(&(length | 0xc000_0000_0000_0000).to_be_bytes());
    head
}

/// Writes up to [`ENDLESS`] bytes of payload on `send`, counting them in `written`, until the
/// client stops the stream or the connection ends.
async fn endless(send: &mut quinn::SendStream, written: &AtomicU64) {
    let chunk = vec![0u8; 16 * 1024];
    let mut sent = 0;
    while sent < ENDLESS {
        match tokio::time::timeout(Duration::from_secs(5), send.write(&chunk)).await {
            Ok(Ok(n)) => {
                sent += n as u64;
                written.fetch_add(n as u64, Ordering::SeqCst);
            }
            _ => return,
        }
    }
}

async fn serve(connection: quinn::Connection, fault: H3Fault, written: Arc<AtomicU64>) {
    let Ok(mut control) = connection.open_uni().await else { return };
    // The control stream's type, then an empty SETTINGS frame.
    if control.write_all(&[0x00, 0x04, 0x00]).await.is_err() {
        return;
    }
    if fault == H3Fault::EndlessUnknownFrame {
        // 0x21 is a reserved type (0x1f * N + 0x21), which a client must skip.
        if control.write_all(&frame_head(0x21, 1 << 30)).await.is_ok() {
            endless(&mut control, &written).await;
        }
    }
    while let Ok((mut send, mut recv)) = connection.accept_bi().await {
        let written = Arc::clone(&written);
        tokio::spawn(async move {
            let _ = recv.read_to_end(64 * 1024).await;
            if send.write_all(&frame_head(0x01, 1 << 30)).await.is_ok() {
                endless(&mut send, &written).await;
            }
        });
    }
    // Held open until the client leaves, so that the control stream stays open too.
    drop(control);
}
