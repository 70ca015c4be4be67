//! A programmable misbehaving HTTP/1.1 server on 127.0.0.1, for the fault suite
//! (`tests/faults.rs`): each connection it accepts gets the same [`Fault`], written on the raw
//! TCP stream, since a well-behaved server library cannot be made to send what a broken or
//! hostile server sends.
//!
//! Like [`crate::TestServer`] it counts what it sees (request heads, connections), so a test can
//! set what loadbench reports against what the server observed.

// A test server that cannot start is a broken test environment; failing loudly is right here.
#![allow(clippy::expect_used)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

/// What the server does on every connection it accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// No fault: `200 OK` with [`OK_BODY`], keep-alive (the state before a kill and after a
    /// restart).
    None,
    /// Resets the connection as soon as it is accepted (`SO_LINGER` 0, then close), before
    /// reading anything.
    ResetOnAccept,
    /// Announces a 1,000-byte body, sends 100 bytes of it, then resets the connection.
    ResetMidBody,
    /// Reads requests and never answers, until the client closes.
    Silence,
    /// Starts a response head and sends one more byte of it every period, forever: the head
    /// never ends, and the client always has something that just arrived.
    Trickle(Duration),
    /// Answers `103 Early Hints` interim responses, forever, as fast as the client reads.
    EndlessEarlyHints,
    /// A `200` with a chunked body whose chunks never end.
    EndlessChunked,
    /// A `200` announcing `Content-Length: 2147483648` (2 GiB), then streaming zeros.
    HugeContentLength,
    /// Announces a 100-byte body, sends 10 bytes of it, then closes the connection (FIN).
    ShortBody,
    /// Answers with bytes that are not an HTTP response, then closes.
    GarbageHead,
    /// A response head of more than 64 KiB (one header of 70 KiB).
    OversizedHead,
    /// `500 Internal Server Error` to every request, keep-alive.
    ServerErrors,
    /// A `200` that does not say `Connection: close`, then closes the connection right after it:
    /// a client reusing the connection meets a keep-alive race.
    CloseWithoutNotice,
    /// Reads what the client sends first (a TLS ClientHello) and answers a fatal TLS alert with
    /// this description (40: handshake_failure, 70: protocol_version), then closes: a TLS server
    /// that refuses the handshake, as one with no cipher suite or version in common does.
    TlsAlert(u8),
}

/// The body of a [`Fault::None`] or [`Fault::CloseWithoutNotice`] response.
pub const OK_BODY: &str = "<p>hello, world!</p>";

/// What [`Fault::HugeContentLength`] announces: 2 GiB, one more than `i32::MAX`.
pub const HUGE_LENGTH: u64 = 2_147_483_648;

#[derive(Debug, Default)]
struct Counters {
    requests: AtomicU64,
    connections: AtomicU64,
    open: AtomicU64,
}

/// Counts a connection as open until its task ends, however it ends (the client left, a fault
/// closed it, or the server was killed).
struct Open(Arc<Counters>);

impl Drop for Open {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A misbehaving server on an ephemeral loopback port; stops when dropped.
#[derive(Debug)]
pub struct HostileServer {
    addr: SocketAddr,
    fault: Fault,
    counters: Arc<Counters>,
    /// The running server: its listener and every connection live on this runtime, so shutting it
    /// down closes them all at once.
    runtime: Option<tokio::runtime::Runtime>,
}

impl HostileServer {
    /// Starts a server doing `fault` on 127.0.0.1 and an ephemeral port.
    pub fn start(fault: Fault) -> HostileServer {
        let mut server = HostileServer {
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            fault,
            counters: Arc::default(),
            runtime: None,
        };
        server.listen();
        server
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Request heads received so far (a request cut off before its head ended is not counted).
    pub fn requests(&self) -> u64 {
        self.counters.requests.load(Ordering::SeqCst)
    }

    /// TCP connections accepted so far.
    pub fn connections(&self) -> u64 {
        self.counters.connections.load(Ordering::SeqCst)
    }

    /// Connections open now: accepted and not yet closed by either side. A client still
    /// connected after its run should have ended is still running.
    pub fn open(&self) -> u64 {
        self.counters.open.load(Ordering::SeqCst)
    }

    /// Kills the server as a crash would: the listener and every open connection close at once,
    /// and the port refuses connections until [`HostileServer::restart`].
    pub fn kill(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            // Waits for the tasks to be dropped, so the port is free when this returns.
            runtime.shutdown_timeout(Duration::from_secs(5));
        }
    }

    /// Starts the server again on the same port, with the same fault and counters.
    pub fn restart(&mut self) {
        self.kill();
        self.listen();
    }

    fn listen(&mut self) {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("hostile server runtime");
        let listener = runtime
            .block_on(async {
                let socket = TcpSocket::new_v4()?;
                // Rebinding the port of a killed server, whose closed connections are in TIME_WAIT.
                socket.set_reuseaddr(true)?;
                socket.bind(self.addr)?;
                socket.listen(1024)
            })
            .unwrap_or_else(|e| panic!("bind {}: {e}", self.addr));
        self.addr = listener.local_addr().expect("local addr");
        let (fault, counters) = (self.fault, Arc::clone(&self.counters));
        runtime.spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else { continue };
                counters.connections.fetch_add(1, Ordering::SeqCst);
                counters.open.fetch_add(1, Ordering::SeqCst);
                let open = Open(Arc::clone(&counters));
                let _ = stream.set_nodelay(true);
                let counters = Arc::clone(&counters);
                tokio::spawn(async move {
                    // Errors are the client leaving, which is what most faults end with.
                    let _ = serve(stream, fault, counters).await;
                    drop(open);
                });
            }
        });
        self.runtime = Some(runtime);
    }
}

impl Drop for HostileServer {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// One connection: each request head read is answered as `fault` says.
async fn serve(mut stream: TcpStream, fault: Fault, counters: Arc<Counters>) -> std::io::Result<()> {
    if fault == Fault::ResetOnAccept {
        return stream.set_zero_linger();
    }
    if let Fault::TlsAlert(description) = fault {
        let mut hello = [0u8; 4096];
        let _ = stream.read(&mut hello).await?;
        // A TLS record: content type alert (21), TLS 1.2, 2 bytes: level fatal (2), description.
        stream.write_all(&[21, 3, 3, 0, 2, 2, description]).await?;
        return stream.shutdown().await;
    }
    let mut pending = Vec::with_capacity(4096);
    while read_head(&mut stream, &mut pending).await? {
        counters.requests.fetch_add(1, Ordering::SeqCst);
        match fault {
            Fault::None => stream.write_all(ok_response(true).as_bytes()).await?,
            Fault::ServerErrors => {
                stream.write_all(b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 5\r\n\r\noops!").await?;
            }
            Fault::CloseWithoutNotice => {
                stream.write_all(ok_response(false).as_bytes()).await?;
                return stream.shutdown().await;
            }
            Fault::ResetMidBody => {
                stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n").await?;
                stream.write_all(&[b'x'; 100]).await?;
                stream.flush().await?;
                // Lets the client read what was sent before the reset discards it.
                tokio::time::sleep(Duration::from_millis(20)).await;
                return stream.set_zero_linger();
            }
            Fault::ShortBody => {
                stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789").await?;
                return stream.shutdown().await;
            }
            Fault::GarbageHead => {
                stream.write_all(b"SSH-2.0-OpenSSH_9.6\r\nthis is not HTTP\r\n\r\n").await?;
                return stream.shutdown().await;
            }
            Fault::OversizedHead => {
                let mut head = b"HTTP/1.1 200 OK\r\nx-big: ".to_vec();
                head.resize(head.len() + 70 * 1024, b'a');
                head.extend_from_slice(b"\r\nContent-Length: 0\r\n\r\n");
                stream.write_all(&head).await?;
            }
            Fault::Silence => {}
            Fault::Trickle(period) => {
                stream.write_all(b"HTTP/1.1 200 OK\r\nx-trickle: ").await?;
                loop {
                    tokio::time::sleep(period).await;
                    stream.write_all(b"a").await?;
                }
            }
            Fault::EndlessEarlyHints => {
                let hints = b"HTTP/1.1 103 Early Hints\r\n\r\n".repeat(256);
                loop {
                    stream.write_all(&hints).await?;
                }
            }
            Fault::EndlessChunked => {
                stream.write_all(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n").await?;
                let mut chunk = b"4000\r\n".to_vec();
                chunk.resize(chunk.len() + 0x4000, b'0');
                chunk.extend_from_slice(b"\r\n");
                loop {
                    stream.write_all(&chunk).await?;
                }
            }
            Fault::HugeContentLength => {
                stream
                    .write_all(format!("HTTP/1.1 200 OK\r\nContent-Length: {HUGE_LENGTH}\r\n\r\n").as_bytes())
                    .await?;
                let zeros = vec![0u8; 64 * 1024];
                for _ in 0..HUGE_LENGTH / zeros.len() as u64 {
                    stream.write_all(&zeros).await?;
                }
            }
            Fault::ResetOnAccept | Fault::TlsAlert(_) => unreachable!("handled before reading"),
        }
    }
    Ok(())
}

fn ok_response(keep_alive_said: bool) -> String {
    let connection = if keep_alive_said { "Connection: keep-alive\r\n" } else { "" };
    format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n{connection}Content-Length: {}\r\n\r\n{OK_BODY}",
        OK_BODY.len()
    )
}

/// Reads until one request head (up to its blank line) has arrived, and removes it from
/// `pending`; `false` when the client closed first. Request bodies are not expected: the suite
/// sends GETs.
async fn read_head(stream: &mut TcpStream, pending: &mut Vec<u8>) -> std::io::Result<bool> {
    loop {
        if let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
            pending.drain(..end + 4);
            return Ok(true);
        }
        let mut buf = [0u8; 4096];
        let n = stream.read(&mut buf).await?;
        if n == 0 {
            return Ok(false);
        }
        pending.extend_from_slice(&buf[..n]);
    }
}
