//! WebSocket echo round trips: 50 users each keep one WebSocket open for the whole run and send
//! 4 messages per iteration, 5,000 iterations in all; each round trip, from the send to the
//! echo's arrival, is measured as the row `ws echo` (its req/s are messages per second).
//!
//! Runs against the embedded echo server unless `--target URL` (or `LOADBENCH_TARGET`) names
//! another server: `--target http://host:port` connects to `ws://host:port/echo`.

use futures_util::{SinkExt, StreamExt};
use tokio_tungstenite::tungstenite::{Message, Utf8Bytes};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// A virtual user's WebSocket, kept in its user data from its setup to its teardown.
type Ws = WebSocketStream<MaybeTlsStream<tokio::net::TcpStream>>;

/// Messages each iteration sends, one at a time.
const MESSAGES: usize = 4;

/// Each user connects once, before the clock starts (its time is in no figure).
async fn connect(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    let url = ctx.target().replacen("http", "ws", 1) + "/echo";
    let (ws, _response) = tokio_tungstenite::connect_async(url.as_str()).await?;
    *ctx.user_data::<Option<Ws>>() = Some(ws);
    Ok(())
}

/// And closes its connection after its last iteration.
async fn disconnect(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    if let Some(mut ws) = ctx.user_data::<Option<Ws>>().take() {
        ws.close(None).await?;
    }
    Ok(())
}

/// A failed round trip of the echo's own making, counted as `custom` with `why` as its message
/// (tungstenite's errors are `custom` as they are, through `?`).
fn failed(why: impl std::fmt::Display) -> loadbench::Error {
    loadbench::Error::new(loadbench::ErrorKind::Custom, why.to_string())
}

/// One round trip: `text` sent, its echo received (pings and pongs on the way skipped).
async fn echo(ws: &mut Ws, text: Utf8Bytes) -> loadbench::Result<()> {
    ws.send(Message::Text(text.clone())).await?;
    loop {
        match ws.next().await {
            Some(Ok(Message::Text(echoed))) if echoed == text => return Ok(()),
            Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
            Some(Ok(Message::Close(_))) => return Err(failed("the server closed the connection")),
            Some(Ok(other)) => return Err(failed(format!("`{text}` came back as {other:?}"))),
            Some(Err(e)) => return Err(e.into()),
            None => return Err(failed("the connection ended before the echo")),
        }
    }
}

#[loadbench::scenario(concurrency = 50, count = 5_000, setup = connect, teardown = disconnect)]
async fn echoes(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    for i in 0..MESSAGES {
        let text = Utf8Bytes::from(format!("user {} message {i}", ctx.user()));
        // `measure` borrows the Ctx: the WebSocket leaves the user data for the round trip and
        // goes back after it, whatever its outcome.
        let mut ws = ctx.user_data::<Option<Ws>>().take().ok_or_else(|| loadbench::Error::msg("not connected"))?;
        let result = ctx.measure("ws echo", echo(&mut ws, text)).await;
        *ctx.user_data::<Option<Ws>>() = Some(ws);
        result?;
    }
    Ok(())
}

fn main() -> std::process::ExitCode {
    loadbench::Harness::new().default_target(loadbench_examples::websocket::start_echo_server).run()
}
