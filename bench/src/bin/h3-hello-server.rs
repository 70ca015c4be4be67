//! The HTTP/3 twin of `hello-server`: quinn and h3 on one UDP port, answering every request `200`
//! with `<p>hello, world!</p>` as text/html. One thread (the benchmark pins it to one core), no
//! logging.
//!
//! Usage: `h3-hello-server [ADDR] --stats ADDR` (default 127.0.0.1:8443 for QUIC). Prints
//! `listening on ADDR (UDP, …), stats on ADDR (TCP)` when both sockets are bound; the QUIC endpoint is
//! bound first, so a client that finds the stats port open finds the QUIC port ready too.
//!
//! At start it makes a self-signed ECDSA P-256 certificate for `localhost` and `127.0.0.1`
//! (rcgen), kept in memory: the generators connect with `--insecure`. TLS 1.3 only with ALPN `h3`,
//! as QUIC asks; rustls's default session resumption. The UDP socket's buffers are as large as
//! the kernel allows, as oha makes its own. Each connection allows 256 concurrent
//! bidirectional streams, above the 100 a connection of the benchmark opens, so that the server's
//! limit never shapes the load.
//!
//! `GET /stats` over plain HTTP/1.1 on the stats address answers the counts since start as one
//! JSON line, as `hello-server`'s `/stats` does: `connections`, the QUIC connections whose
//! handshake completed, and `requests`, the requests whose head arrived. The stats request
//! travels over TCP and is counted in neither.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use quinn::crypto::rustls::QuicServerConfig;
use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const BODY: &[u8] = b"<p>hello, world!</p>";
const USAGE: &str = "usage: h3-hello-server [ADDR] --stats ADDR";
/// Above the 100 streams a connection of the HTTP/3 benchmark opens (oha's `-p 100`).
const MAX_CONCURRENT_STREAMS: u32 = 256;
/// The UDP socket's receive and send buffers asked for (the kernel caps them at its
/// `net.core.rmem_max` and `wmem_max`): a thousand streams' packets arrive in bursts, and a datagram
/// the socket has no room for is lost and sent again, which the generator would pay for.
const UDP_BUFFER: usize = 8 * 1024 * 1024;
/// The most of a stats request that is read: its head is one line and a few headers.
const STATS_REQUEST_LIMIT: usize = 8 * 1024;

static REQUESTS: AtomicU64 = AtomicU64::new(0);
static CONNECTIONS: AtomicU64 = AtomicU64::new(0);

fn main() -> std::io::Result<()> {
    let mut addr = SocketAddr::from(([127, 0, 0, 1], 8443));
    let mut stats_addr = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--stats" {
            let value = args.next().ok_or_else(|| std::io::Error::other(USAGE))?;
            stats_addr = Some(parse_addr(&value)?);
        } else if arg.starts_with('-') {
            return Err(std::io::Error::other(format!("unknown option `{arg}`; {USAGE}")));
        } else {
            addr = parse_addr(&arg)?;
        }
    }
    let stats_addr = stats_addr.ok_or_else(|| std::io::Error::other(format!("--stats is required; {USAGE}")))?;
    let config = server_config()?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(serve(addr, stats_addr, config))
}

fn parse_addr(text: &str) -> std::io::Result<SocketAddr> {
    text.parse().map_err(|e| std::io::Error::other(format!("bad address `{text}`: {e}")))
}

/// QUIC with a self-signed certificate for `localhost` and `127.0.0.1`, TLS 1.3 and ALPN `h3`,
/// and room for [`MAX_CONCURRENT_STREAMS`] request streams a connection.
fn server_config() -> std::io::Result<quinn::ServerConfig> {
    let certified = rcgen::generate_simple_self_signed(vec!["localhost".to_string(), "127.0.0.1".to_string()])
        .map_err(|e| std::io::Error::other(format!("certificate generation failed: {e}")))?;
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(certified.signing_key.serialize_der()));
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut tls = rustls::ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(std::io::Error::other)?
        .with_no_client_auth()
        .with_single_cert(vec![certified.cert.der().clone()], key)
        .map_err(std::io::Error::other)?;
    tls.alpn_protocols = vec![b"h3".to_vec()];
    let crypto = QuicServerConfig::try_from(tls).map_err(std::io::Error::other)?;
    let mut config = quinn::ServerConfig::with_crypto(Arc::new(crypto));
    let mut transport = quinn::TransportConfig::default();
    transport.max_concurrent_bidi_streams(MAX_CONCURRENT_STREAMS.into());
    config.transport_config(Arc::new(transport));
    Ok(config)
}

async fn serve(addr: SocketAddr, stats_addr: SocketAddr, config: quinn::ServerConfig) -> std::io::Result<()> {
    let socket = std::net::UdpSocket::bind(addr)?;
    let udp = quinn::udp::UdpSocketState::new((&socket).into())?;
    udp.set_recv_buffer_size((&socket).into(), UDP_BUFFER)?;
    udp.set_send_buffer_size((&socket).into(), UDP_BUFFER)?;
    let receive_buffer = udp.recv_buffer_size((&socket).into())?;
    let endpoint =
        quinn::Endpoint::new(quinn::EndpointConfig::default(), Some(config), socket, Arc::new(quinn::TokioRuntime))?;
    let stats = TcpListener::bind(stats_addr).await?;
    println!(
        "listening on {} (UDP, receive buffer {receive_buffer} bytes), stats on {} (TCP)",
        endpoint.local_addr()?,
        stats.local_addr()?
    );
    tokio::spawn(serve_stats(stats));
    while let Some(incoming) = endpoint.accept().await {
        tokio::spawn(serve_connection(incoming));
    }
    Ok(())
}

/// HTTP/3 on one connection, until the client closes it. A handshake that fails is no connection:
/// only established ones are counted.
async fn serve_connection(incoming: quinn::Incoming) {
    let Ok(connecting) = incoming.accept() else { return };
    let Ok(connection) = connecting.await else { return };
    CONNECTIONS.fetch_add(1, Ordering::Relaxed);
    let Ok(mut h3) = h3::server::Connection::<_, Bytes>::new(h3_quinn::Connection::new(connection)).await else {
        return;
    };
    // `Ok(None)` and errors both end the connection (a client's close is an error to h3).
    while let Ok(Some(resolver)) = h3.accept().await {
        tokio::spawn(async move {
            let Ok((_request, mut stream)) = resolver.resolve_request().await else { return };
            REQUESTS.fetch_add(1, Ordering::Relaxed);
            let Ok(response) = http::Response::builder().status(200).header("content-type", "text/html").body(())
            else {
                return;
            };
            if stream.send_response(response).await.is_ok() && stream.send_data(Bytes::from_static(BODY)).await.is_ok()
            {
                let _ = stream.finish().await;
            }
        });
    }
}

/// Plain HTTP/1.1 for the counts: each connection's request is read up to the end of its head
/// (or [`STATS_REQUEST_LIMIT`]), answered with the JSON line, and closed. Whatever the request
/// says, the answer is the counts.
async fn serve_stats(listener: TcpListener) {
    loop {
        let Ok((stream, _)) = listener.accept().await else { continue };
        tokio::spawn(answer_stats(stream));
    }
}

async fn answer_stats(mut stream: TcpStream) {
    let mut head = Vec::with_capacity(1024);
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < STATS_REQUEST_LIMIT {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    let body = format!(
        "{{\"connections\":{},\"requests\":{}}}\n",
        CONNECTIONS.load(Ordering::Relaxed),
        REQUESTS.load(Ordering::Relaxed)
    );
    let response = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    if stream.write_all(response.as_bytes()).await.is_ok() {
        let _ = stream.shutdown().await;
    }
}
