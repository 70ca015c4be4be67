//! The WebSocket echo server the `websocket` bench runs against (tokio-tungstenite's server):
//! every text or binary message comes back as it was sent, on any path.

use futures_util::{SinkExt, StreamExt};
use tokio::net::TcpStream;

/// Starts the echo server on 127.0.0.1 and an ephemeral port, on a background thread that lives
/// as long as the process, and returns its base URL as `http://127.0.0.1:PORT` (loadbench's
/// targets are http:// URLs; the scenario connects to `ws://` on the same host).
///
/// ```no_run
/// let url = loadbench_examples::websocket::start_echo_server().unwrap();
/// assert!(url.starts_with("http://127.0.0.1:"));
/// ```
pub fn start_echo_server() -> std::io::Result<String> {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let listener = runtime.block_on(super::listen())?;
    let addr = listener.local_addr()?;
    std::thread::Builder::new().name("echo-server".into()).spawn(move || {
        runtime.block_on(async move {
            loop {
                // Accept errors (e.g. out of file descriptors) are transient for a demo server.
                let Ok((stream, _)) = listener.accept().await else { continue };
                let _ = stream.set_nodelay(true);
                tokio::spawn(echo(stream));
            }
        })
    })?;
    Ok(format!("http://{addr}"))
}

/// One connection: the handshake, then each text or binary message sent back until the client
/// closes (tungstenite answers pings and the client's close by itself). A connection that fails
/// ends; the others go on.
async fn echo(stream: TcpStream) {
    let Ok(mut ws) = tokio_tungstenite::accept_async(stream).await else { return };
    while let Some(Ok(message)) = ws.next().await {
        if (message.is_text() || message.is_binary()) && ws.send(message).await.is_err() {
            return;
        }
    }
}
