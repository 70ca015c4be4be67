//! WebSocket scenarios against a real echo server on 127.0.0.1 (`loadbench_tests::websocket`),
//! with tokio-tungstenite as the client: each virtual user connects once, in its `setup`, and
//! each round trip (a message sent, its echo received) is one run of `ctx.measure("ws echo", …)`.
//! The `ws echo` row counts exactly the messages the server received; beside an HTTP request and
//! another measured operation, each name is one row with the count its server saw; a connection
//! the server closes fails the echoes after it, counted as `custom` with their messages.
//!
//! One run at a time, as in `names_and_checks.rs`.

use std::sync::Mutex;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use loadbench::report::{ScenarioReport, StepReport};
use loadbench_tests::request_row as request;
use loadbench_tests::websocket::{EchoBehavior, EchoServer};
use loadbench_tests::{Behavior, TestServer};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::{Message, Utf8Bytes};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Where the mixed scenario's users connect their WebSocket: its target is the HTTP server, so
/// the test puts the echo server's URL here before it runs (under [`ONE_AT_A_TIME`]).
static ECHO_URL: Mutex<String> = Mutex::new(String::new());

/// Messages each iteration sends, one measured round trip each.
const MESSAGES: u64 = 5;

fn run(scenario: &str, target: &str) -> ScenarioReport {
    loadbench_tests::run_scenario(scenario, target)
}

/// A row's latency histogram: present, its percentiles above zero and in order.
#[track_caller]
fn assert_latencies(row: &StepReport) {
    let latency = row.latency_us.as_ref().unwrap_or_else(|| panic!("{}: no latency: {row:?}", row.name));
    assert!(
        latency.min > 0.0 && latency.min <= latency.p50 && latency.p50 <= latency.p99 && latency.p99 <= latency.max,
        "{}: {latency:?}",
        row.name
    );
}

// ---- The pattern a scenario author copies ----

/// A virtual user's WebSocket (no TLS: `wss://` needs one of tokio-tungstenite's TLS features).
type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// A failed round trip, counted as `custom` with `why` as its message: tungstenite's errors and
/// our own. (Tungstenite's are `custom` through a plain `?` inside the measured operation too.)
fn failed(why: impl std::fmt::Display) -> loadbench::Error {
    loadbench::Error::new(loadbench::ErrorKind::Custom, why.to_string())
}

/// The user's setup: one WebSocket connection for its whole run, kept in its user data. The
/// target is `http://host:port`; the WebSocket is `ws://` on the same host (`https` gives `wss`).
async fn connect(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    let url = ctx.target().replacen("http", "ws", 1) + "/echo";
    let (ws, _response) = tokio_tungstenite::connect_async(url.as_str()).await?;
    *ctx.user_data::<Option<Ws>>() = Some(ws);
    Ok(())
}

/// The user's teardown: the connection closed as the protocol asks.
async fn disconnect(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    if let Some(mut ws) = ctx.user_data::<Option<Ws>>().take() {
        ws.close(None).await?;
    }
    Ok(())
}

/// One round trip: `text` sent, and its echo received. Pings and pongs on the way are skipped
/// (tungstenite answers pings by itself); anything else is an error.
async fn echo(ws: &mut Ws, text: String) -> loadbench::Result<()> {
    let sent = Utf8Bytes::from(text);
    ws.send(Message::Text(sent.clone())).await.map_err(failed)?;
    loop {
        match ws.next().await {
            Some(Ok(Message::Text(echoed))) if echoed == sent => return Ok(()),
            Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
            Some(Ok(Message::Close(frame))) => {
                let why = frame.map(|f| format!(": {} {}", f.code, f.reason)).unwrap_or_default();
                return Err(failed(format!("the server closed the connection{why}")));
            }
            Some(Ok(other)) => return Err(failed(format!("`{sent}` came back as {other:?}"))),
            Some(Err(e)) => return Err(failed(e)),
            None => return Err(failed("the connection ended before the echo")),
        }
    }
}

/// `text`'s round trip, measured as `ws echo`. `measure` borrows the `Ctx` mutably, so the
/// WebSocket is taken out of the user data for the measured operation and put back after it,
/// whatever its outcome (a connection that failed stays failed: the user's later echoes fail
/// too, and are counted).
async fn measured_echo(ctx: &mut loadbench::Ctx, text: String) -> loadbench::Result<()> {
    let mut ws =
        ctx.user_data::<Option<Ws>>().take().ok_or_else(|| loadbench::Error::msg("no WebSocket: did setup run?"))?;
    let result = ctx.measure("ws echo", echo(&mut ws, text)).await;
    *ctx.user_data::<Option<Ws>>() = Some(ws);
    result
}

/// This user's iterations so far, this one included.
fn next(ctx: &mut loadbench::Ctx) -> u64 {
    let n = ctx.user_data::<u64>();
    *n += 1;
    *n
}

/// Each iteration sends [`MESSAGES`] messages and awaits each echo.
#[loadbench::scenario(name = "ws_echo", concurrency = 4, count = 60, setup = connect, teardown = disconnect)]
#[loadbench::scenario(name = "ws_closed", concurrency = 1, count = 10, setup = connect, teardown = disconnect)]
async fn ws_echo(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    let iteration = next(ctx);
    for i in 0..MESSAGES {
        let text = format!("user {} iteration {iteration} message {i}", ctx.user());
        measured_echo(ctx, text).await?;
    }
    Ok(())
}

#[test]
fn each_echo_is_one_measured_request_and_the_server_saw_each_message() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let server = EchoServer::start(EchoBehavior::default());
    let report = run("ws_echo", &server.target());

    assert_eq!(server.connections(), 4, "one WebSocket per user, opened in its setup");
    assert_eq!(server.messages(), 60 * MESSAGES, "iterations × messages");
    assert_eq!((report.iterations, report.ok, report.failed), (60, 60, 0), "{:?}", report.causes);
    assert_eq!(report.requests.len(), 1, "{:?}", report.requests);
    let row = request(&report, "ws echo");
    assert_eq!((row.iterations, row.ok, row.failed), (60 * MESSAGES, 60 * MESSAGES, 0), "{row:?}");
    assert_latencies(row);
    let setups = report.user_setup.as_ref().map(|h| (h.runs, h.failed));
    assert_eq!(setups, Some((4, 0)), "{:?}", report.user_setup);
    let teardowns = report.user_teardown.as_ref().map(|h| (h.runs, h.failed));
    assert_eq!(teardowns, Some((4, 0)), "{:?}", report.user_teardown);
    assert_eq!(report.http.responses, 0, "no HTTP exchange");
    assert!(report.warnings.is_empty(), "measured round trips are not an empty loop: {:?}", report.warnings);

    let mut run = loadbench::report::RunReport::new(std::time::SystemTime::now());
    run.scenarios.push(report.clone());
    let table = loadbench::report::table::render(&run);
    assert!(table.contains("|   ↳ ws echo "), "{table}");
}

#[test]
fn echoes_after_the_server_closed_fail_as_custom_and_still_add_up() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let server = EchoServer::start(EchoBehavior { close_after: Some(7) });
    let report = run("ws_closed", &server.target());

    // One user, 10 iterations of 5 echoes: iteration 1's five and iteration 2's first two
    // succeed; the third of iteration 2 meets the close and fails its iteration, as does the first
    // echo of each of the 8 iterations after it.
    let (ok, failed) = (7, 1 + 8);
    assert_eq!((server.connections(), server.messages()), (1, ok), "what the server echoed before it closed");
    assert_eq!((report.iterations, report.ok, report.failed), (10, 1, 9), "{:?}", report.causes);
    assert_eq!(report.errors.custom, 9, "{:?}", report.errors);
    let row = request(&report, "ws echo");
    assert_eq!((row.iterations, row.ok, row.failed), (ok + failed, ok, failed), "ok + failed = attempts: {row:?}");
    assert_eq!((row.errors.custom, row.errors.total()), (failed, failed), "{:?}", row.errors);
    assert_latencies(row);

    // The first failure says the server closed; the later ones are tungstenite's own refusal to
    // send on a closed connection. Every failure is described, under its kind.
    let causes: Vec<(&str, &str, u64)> =
        row.causes.top.iter().map(|c| (c.kind.as_str(), c.message.as_str(), c.count)).collect();
    assert_eq!(row.causes.total(), failed, "{causes:?}");
    assert!(causes.iter().all(|(kind, _, _)| *kind == "custom"), "{causes:?}");
    assert!(
        causes.iter().any(|(_, message, count)| message.contains("the server closed the connection") && *count == 1),
        "{causes:?}"
    );
    assert!(causes.iter().any(|(_, message, count)| message.contains("after closing") && *count == 8), "{causes:?}");
}

// ---- Three kinds of operation in one scenario ----

/// A named HTTP request, a measured sleep and a measured WebSocket echo, each once per
/// iteration. The target is the HTTP server; the WebSocket goes to [`ECHO_URL`].
#[loadbench::scenario(name = "mixed", concurrency = 3, count = 45, setup = connect_to_echo, teardown = disconnect)]
async fn mixed(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").name("GET /").send().await?.expect_status(200)?;
    ctx.measure("sleep 1ms", async {
        tokio::time::sleep(Duration::from_millis(1)).await;
        Ok::<(), std::io::Error>(())
    })
    .await?;
    let text = format!("user {} iteration {}", ctx.user(), next(ctx));
    measured_echo(ctx, text).await
}

/// [`connect`], to the echo server the test named rather than the target.
async fn connect_to_echo(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    let url = ECHO_URL.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone();
    let (ws, _response) = tokio_tungstenite::connect_async(url.as_str()).await?;
    *ctx.user_data::<Option<Ws>>() = Some(ws);
    Ok(())
}

#[test]
fn http_a_measured_operation_and_websocket_are_one_row_per_name() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let http = TestServer::start(Behavior::default());
    let echo = EchoServer::start(EchoBehavior::default());
    *ECHO_URL.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = echo.ws_url();
    let report = run("mixed", &http.url());

    assert_eq!((report.iterations, report.ok, report.failed), (45, 45, 0), "{:?}", report.causes);
    let rows: Vec<(&str, u64, u64, u64)> =
        report.requests.iter().map(|r| (r.name.as_str(), r.iterations, r.ok, r.failed)).collect();
    assert_eq!(rows.len(), 3, "one row per name: {rows:?}");
    for (name, seen) in [("GET /", http.requests()), ("sleep 1ms", 45), ("ws echo", echo.messages())] {
        let row = request(&report, name);
        assert_eq!((row.iterations, row.ok, row.failed), (seen, seen, 0), "{name}: as its server saw it");
        assert_latencies(row);
    }
    assert_eq!((http.requests(), echo.messages(), echo.connections()), (45, 45, 3));
    // The sleep's row is at least its millisecond: measured from the call to its completion.
    let sleep = request(&report, "sleep 1ms").latency_us.as_ref().map(|l| l.min);
    assert!(sleep.is_some_and(|min| min >= 990.0), "{sleep:?}");
    assert_eq!(report.http.responses, 45, "only the HTTP request is an HTTP exchange");
}
