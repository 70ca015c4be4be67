//! A WebSocket echo server on 127.0.0.1 (tokio-tungstenite's server): every text or binary
//! message comes back as it was sent, and the server counts the handshakes it completed and the
//! messages it received, so that a test compares what loadbench reports with what the server saw.
//!
//! ```no_run
//! use loadbench_tests::websocket::{EchoBehavior, EchoServer};
//!
//! let server = EchoServer::start(EchoBehavior::default());
//! // Run a scenario against `server.target()`; its body connects to `ws://…` of the same host.
//! assert_eq!(server.connections(), 0);
//! ```

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use futures_util::{SinkExt, StreamExt};
use tokio::net::{TcpListener, TcpStream};

/// How the echo server answers.
#[derive(Debug, Clone, Copy, Default)]
pub struct EchoBehavior {
    /// Each connection closes after its Kth message: the server echoes it, sends a close frame
    /// and reads (without counting or echoing) until the client's reply ends the connection.
    pub close_after: Option<u64>,
}

#[derive(Debug, Default)]
struct Counters {
    connections: AtomicU64,
    messages: AtomicU64,
}

/// A WebSocket echo server on an ephemeral loopback port; stops when dropped.
#[derive(Debug)]
pub struct EchoServer {
    addr: SocketAddr,
    counters: Arc<Counters>,
    runtime: Option<tokio::runtime::Runtime>,
}

impl EchoServer {
    /// Starts an echo server with the given behaviour on 127.0.0.1 and an ephemeral port.
    pub fn start(behavior: EchoBehavior) -> EchoServer {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("echo server runtime");
        let listener = runtime.block_on(TcpListener::bind("127.0.0.1:0")).expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local addr");
        let counters = Arc::new(Counters::default());
        let accept_counters = Arc::clone(&counters);
        runtime.spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else { continue };
                let _ = stream.set_nodelay(true);
                tokio::spawn(echo(stream, Arc::clone(&accept_counters), behavior));
            }
        });
        EchoServer { addr, counters, runtime: Some(runtime) }
    }

    /// `http://127.0.0.1:PORT`: the target to run a scenario against (loadbench's targets are
    /// http:// URLs); its body makes the WebSocket URL of it, as [`EchoServer::ws_url`] is.
    pub fn target(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `ws://127.0.0.1:PORT`; the server answers on any path.
    pub fn ws_url(&self) -> String {
        format!("ws://{}", self.addr)
    }

    /// WebSocket handshakes completed so far (a TCP connection that never completed one is not
    /// counted).
    pub fn connections(&self) -> u64 {
        self.counters.connections.load(Ordering::SeqCst)
    }

    /// Text and binary messages received (and echoed) so far, on every connection; counted
    /// before the echo is sent, so a client that has its echo finds its message counted.
    pub fn messages(&self) -> u64 {
        self.counters.messages.load(Ordering::SeqCst)
    }
}

impl Drop for EchoServer {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// One connection: the handshake, then each text or binary message echoed until the client
/// closes (tungstenite answers pings and the client's close by itself).
async fn echo(stream: TcpStream, counters: Arc<Counters>, behavior: EchoBehavior) {
    let Ok(mut ws) = tokio_tungstenite::accept_async(stream).await else { return };
    counters.connections.fetch_add(1, Ordering::SeqCst);
    let mut received = 0;
    while let Some(Ok(message)) = ws.next().await {
        if !(message.is_text() || message.is_binary()) {
            continue;
        }
        counters.messages.fetch_add(1, Ordering::SeqCst);
        received += 1;
        if ws.send(message).await.is_err() {
            return;
        }
        if behavior.close_after == Some(received) {
            if ws.close(None).await.is_err() {
                return;
            }
            // What the client sent before it saw the close is read and dropped; its reply to
            // the close ends the stream.
            while let Some(Ok(_)) = ws.next().await {}
            return;
        }
    }
}
