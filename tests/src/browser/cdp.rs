//! The DevTools protocol's transport: numbered commands and their answers, and events, on one
//! WebSocket to the browser. Pages share the connection through flattened sessions (a
//! `sessionId` on each message), so a page's events can arrive while another command waits;
//! they are recorded in their page's [`Journal`] whoever happens to read them.

use std::collections::HashMap;
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tungstenite::protocol::WebSocketConfig;
use tungstenite::{HandshakeError, Message, WebSocket};

use super::page::Journal;

/// The longest any command may take to be answered. Generous (a full-page screenshot of a long
/// report on a slow machine takes seconds), but finite: a stuck browser fails the test.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);

/// A full-page screenshot arrives as one base64 string: allow for a large one (tungstenite's
/// default frame limit is 16 MiB).
const MAX_MESSAGE: usize = 256 << 20;

/// What one message from the browser was.
pub(super) enum Incoming {
    /// The answer to command `id`: its result, or the protocol's error.
    Response { id: u64, result: Result<Value, String> },
    /// An event, recorded already; which session it was for (none for the browser's own).
    Event { session: Option<String> },
    /// A ping or another frame of the WebSocket itself.
    Other,
}

/// The WebSocket to the browser, and what each open page's session has recorded.
#[derive(Debug)]
pub(super) struct Connection {
    socket: WebSocket<TcpStream>,
    next_id: u64,
    journals: HashMap<String, Journal>,
}

impl Connection {
    /// Connects to the browser's endpoint (`ws://127.0.0.1:PORT/devtools/browser/…`) within
    /// `timeout`.
    pub(super) fn connect(endpoint: &str, timeout: Duration) -> Result<Connection, String> {
        let url = url::Url::parse(endpoint).map_err(|e| format!("not a URL: {e}"))?;
        let addr = url
            .socket_addrs(|| None)
            .map_err(|e| format!("no address: {e}"))?
            .into_iter()
            .next()
            .ok_or("no address")?;
        let stream = TcpStream::connect_timeout(&addr, timeout).map_err(|e| format!("connecting: {e}"))?;
        // Without these a browser that stops answering would block a read forever.
        stream.set_read_timeout(Some(timeout)).map_err(|e| format!("setting a read timeout: {e}"))?;
        stream.set_write_timeout(Some(timeout)).map_err(|e| format!("setting a write timeout: {e}"))?;
        stream.set_nodelay(true).map_err(|e| format!("setting TCP_NODELAY: {e}"))?;
        let config = WebSocketConfig::default().max_message_size(Some(MAX_MESSAGE)).max_frame_size(Some(MAX_MESSAGE));
        let (socket, _) =
            tungstenite::client::client_with_config(endpoint, stream, Some(config)).map_err(|e| match e {
                HandshakeError::Failure(e) => format!("WebSocket handshake: {e}"),
                HandshakeError::Interrupted(_) => format!("WebSocket handshake: no answer within {timeout:?}"),
            })?;
        Ok(Connection { socket, next_id: 0, journals: HashMap::new() })
    }

    /// Sends a command without waiting for its answer; returns its id.
    pub(super) fn send(&mut self, session: Option<&str>, method: &str, params: Value) -> Result<u64, String> {
        self.next_id += 1;
        let mut message = json!({ "id": self.next_id, "method": method, "params": params });
        if let Some(session) = session {
            message["sessionId"] = json!(session);
        }
        self.socket.send(Message::text(message.to_string())).map_err(|e| format!("sending {method}: {e}"))?;
        Ok(self.next_id)
    }

    /// Sends a command and waits (at most [`COMMAND_TIMEOUT`]) for its result, recording the
    /// events that arrive meanwhile.
    pub(super) fn call(&mut self, session: Option<&str>, method: &str, params: Value) -> Result<Value, String> {
        let id = self.send(session, method, params)?;
        let deadline = Instant::now() + COMMAND_TIMEOUT;
        loop {
            match self.next_message(deadline).map_err(|e| format!("{method}: {e}"))? {
                // A late answer to a command that timed out earlier has a smaller id: skipped.
                Some(Incoming::Response { id: answered, result }) if answered == id => {
                    return result.map_err(|e| format!("{method}: {e}"));
                }
                Some(_) => {}
                None => return Err(format!("{method}: no answer within {COMMAND_TIMEOUT:?}")),
            }
        }
    }

    /// Reads the next message, waiting until `deadline` at most (about a millisecond when it has
    /// passed: what has arrived already); `None` when nothing came. Events are recorded in their
    /// session's journal before this returns.
    pub(super) fn next_message(&mut self, deadline: Instant) -> Result<Option<Incoming>, String> {
        let wait = deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(1));
        self.socket.get_mut().set_read_timeout(Some(wait)).map_err(|e| format!("setting a read timeout: {e}"))?;
        let text = match self.socket.read() {
            Ok(Message::Text(text)) => text,
            // Pings are answered by tungstenite itself; the browser sends nothing else.
            Ok(_) => return Ok(Some(Incoming::Other)),
            Err(tungstenite::Error::Io(e))
                if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) =>
            {
                return Ok(None);
            }
            Err(e) => return Err(format!("the connection to the browser failed (did it crash?): {e}")),
        };
        let message: Value =
            serde_json::from_str(text.as_str()).map_err(|e| format!("the browser sent something not JSON: {e}"))?;
        if let Some(id) = message["id"].as_u64() {
            let result = match message.get("error") {
                Some(error) => Err(format!("{} ({})", error["message"], error.get("data").unwrap_or(&Value::Null))),
                None => Ok(message.get("result").cloned().unwrap_or_else(|| json!({}))),
            };
            return Ok(Some(Incoming::Response { id, result }));
        }
        let method = message["method"].as_str().unwrap_or_default();
        let session = message["sessionId"].as_str().map(str::to_owned);
        // A crashed or closed page is detached by the browser, in an event of its own.
        let about = session.clone().or_else(|| {
            (method == "Target.detachedFromTarget")
                .then(|| message["params"]["sessionId"].as_str().map(str::to_owned))?
        });
        if let Some(journal) = about.as_deref().and_then(|s| self.journals.get_mut(s)) {
            journal.record(method, &message["params"]);
        }
        Ok(Some(Incoming::Event { session }))
    }

    /// Starts recording the events of `session`.
    pub(super) fn add_session(&mut self, session: &str) {
        self.journals.insert(session.to_owned(), Journal::default());
    }

    /// Stops recording the events of `session`.
    pub(super) fn remove_session(&mut self, session: &str) {
        self.journals.remove(session);
    }

    /// What `session` has recorded, after reading whatever has arrived already (for a second at
    /// most: a page may log without end).
    pub(super) fn journal(&mut self, session: &str) -> Result<&Journal, String> {
        let end = Instant::now() + Duration::from_secs(1);
        while self.next_message(Instant::now())?.is_some() && Instant::now() < end {}
        self.journals.get(session).ok_or_else(|| format!("session {session} is not open"))
    }
}
