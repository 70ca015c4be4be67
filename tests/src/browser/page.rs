//! A page open in the browser, and what it did: the events of its session, recorded as they
//! arrive, so a test can ask afterwards whether the page logged an error or tried the network.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Value, json};

use super::cdp::{Connection, Incoming};

/// How long a page gets to fire its `load` event (scripts, images and styles of a local file).
const LOAD_TIMEOUT: Duration = Duration::from_secs(30);

/// After `load`: the page is taken as settled once no event came for this long…
const SETTLE_QUIET: Duration = Duration::from_millis(300);
/// …or after this long, if it keeps logging.
const SETTLE_LIMIT: Duration = Duration::from_secs(5);

/// The largest full-page screenshot, in CSS pixels: a runaway page must not exhaust memory.
const MAX_SCREENSHOT: (f64, f64) = (1280.0, 8000.0);

/// Every URL a page may not load: all but `file:` and the inline schemes (`data:`, `blob:`).
const BLOCKED: [&str; 6] = ["http://*", "https://*", "ws://*", "wss://*", "ftp://*", "chrome-extension://*"];

/// What a page's session has reported.
#[derive(Debug, Default, Clone)]
pub(super) struct Journal {
    /// Events received, of any kind: a page is settled when this stops growing.
    events: u64,
    /// `Page.loadEventFired` events received.
    loads: u64,
    console: Vec<String>,
    errors: Vec<String>,
    requests: Vec<String>,
    /// The URL of each request, by the protocol's request id, for its failure.
    request_urls: HashMap<String, String>,
    /// URL and reason of each failed request.
    failed: Vec<(String, String)>,
}

impl Journal {
    /// Records one event of the page's session.
    pub(super) fn record(&mut self, method: &str, params: &Value) {
        self.events += 1;
        match method {
            "Page.loadEventFired" => self.loads += 1,
            "Runtime.consoleAPICalled" => {
                let kind = params["type"].as_str().unwrap_or("log");
                let text: Vec<String> = params["args"].as_array().into_iter().flatten().map(remote_text).collect();
                let message = format!("console.{kind}: {}", text.join(" "));
                if matches!(kind, "error" | "assert") {
                    self.errors.push(message.clone());
                }
                self.console.push(message);
            }
            "Runtime.exceptionThrown" => {
                let details = &params["exceptionDetails"];
                let what = details["exception"]["description"].as_str().or(details["text"].as_str()).unwrap_or("?");
                let line = details["lineNumber"].as_u64().map_or(0, |l| l + 1);
                self.errors
                    .push(format!("uncaught exception: {what} ({}:{line})", details["url"].as_str().unwrap_or("")));
            }
            "Log.entryAdded" => {
                let entry = &params["entry"];
                if entry["level"] == "error" {
                    self.errors.push(format!(
                        "log error [{}]: {} ({})",
                        entry["source"].as_str().unwrap_or("?"),
                        entry["text"].as_str().unwrap_or(""),
                        entry["url"].as_str().unwrap_or("")
                    ));
                }
            }
            "Network.requestWillBeSent" => {
                let url = params["request"]["url"].as_str().unwrap_or("").to_owned();
                self.request_urls.insert(params["requestId"].as_str().unwrap_or("").to_owned(), url.clone());
                self.requests.push(url);
            }
            "Network.loadingFailed" => {
                let id = params["requestId"].as_str().unwrap_or("");
                let url = self.request_urls.get(id).cloned().unwrap_or_else(|| format!("request {id}"));
                // `inspector` is the block list of `navigate`; other reasons are the page's own
                // (its Content Security Policy, say).
                let reason = match params["blockedReason"].as_str() {
                    Some(blocked) => format!("blocked: {blocked}"),
                    None => params["errorText"].as_str().unwrap_or("?").to_owned(),
                };
                self.failed.push((url, reason));
            }
            "Inspector.targetCrashed" => self.errors.push("the page crashed".to_owned()),
            "Target.detachedFromTarget" => self.errors.push("the page was detached (crashed or closed)".to_owned()),
            _ => {}
        }
    }
}

/// A console argument as the console would show it.
fn remote_text(object: &Value) -> String {
    match &object["value"] {
        Value::String(text) => text.clone(),
        Value::Null => {
            let shown = object["unserializableValue"].as_str().or(object["description"].as_str());
            shown.or(object["type"].as_str()).unwrap_or("?").to_owned()
        }
        other => other.to_string(),
    }
}

/// A tab of a [`super::Browser`], opened from a file with the network cut off. Closed when
/// dropped. It must not outlive its browser (its calls then fail: the browser is gone).
#[derive(Debug)]
pub struct Page {
    connection: Arc<Mutex<Connection>>,
    session: String,
    target: String,
    url: String,
}

impl Page {
    pub(super) fn new(connection: Arc<Mutex<Connection>>, session: String, target: String, url: String) -> Page {
        connection.lock().unwrap_or_else(|e| e.into_inner()).add_session(&session);
        Page { connection, session, target, url }
    }

    fn connection(&self) -> MutexGuard<'_, Connection> {
        self.connection.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn call(&self, method: &str, params: Value) -> Result<Value, String> {
        self.connection().call(Some(&self.session), method, params)
    }

    /// Cuts the network off, loads the page's URL and waits for it to settle.
    pub(super) fn navigate(&self, viewport: (u32, u32)) -> Result<(), String> {
        let (width, height) = viewport;
        let setup = [
            ("Runtime.enable", json!({})),
            ("Log.enable", json!({})),
            ("Page.enable", json!({})),
            ("Network.enable", json!({})),
            (
                "Network.emulateNetworkConditions",
                json!({
                    "offline": true, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1,
                }),
            ),
            ("Network.setBlockedURLs", json!({ "urls": BLOCKED })),
            (
                "Emulation.setDeviceMetricsOverride",
                json!({
                    "width": width, "height": height, "deviceScaleFactor": 1, "mobile": false,
                }),
            ),
        ];
        for (method, params) in setup {
            self.call(method, params)?;
        }
        let loads = self.journal(|j| j.loads)?;
        let navigated = self.call("Page.navigate", json!({ "url": self.url }))?;
        if let Some(error) = navigated["errorText"].as_str() {
            return Err(format!("loading {}: {error}", self.url));
        }
        let deadline = Instant::now() + LOAD_TIMEOUT;
        // A `load` of the blank page the tab started on could arrive late: only the file's counts.
        while self.journal(|j| j.loads)? == loads || self.eval_json("location.protocol")? != "file:" {
            if Instant::now() >= deadline {
                return Err(format!("{}: no load event within {LOAD_TIMEOUT:?}", self.url));
            }
            self.connection().next_message(deadline)?;
        }
        self.wait_quiet(SETTLE_QUIET, SETTLE_LIMIT)
    }

    /// Waits until the page has sent no event for `quiet` (its timers and handlers have run
    /// their course), or for `limit` at most; for after a click dispatched with
    /// [`Page::eval_json`].
    pub fn wait_quiet(&self, quiet: Duration, limit: Duration) -> Result<(), String> {
        let end = Instant::now() + limit;
        let mut quiet_until = Instant::now() + quiet;
        while Instant::now() < quiet_until.min(end) {
            let message = self.connection().next_message(quiet_until.min(end))?;
            if let Some(Incoming::Event { session: Some(session) }) = message
                && session == self.session
            {
                quiet_until = Instant::now() + quiet;
            }
        }
        Ok(())
    }

    /// Reads the journal, after whatever events have arrived already.
    fn journal<T>(&self, read: impl FnOnce(&Journal) -> T) -> Result<T, String> {
        self.connection().journal(&self.session).map(read)
    }

    /// A journal's list, with the reason it may be incomplete when the browser is unreachable.
    fn list(&self, read: impl FnOnce(&Journal) -> &Vec<String>) -> Vec<String> {
        self.journal(|j| read(j).clone()).unwrap_or_else(|e| vec![format!("cannot read the page's events: {e}")])
    }

    /// The `file://` URL the page was opened at.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Everything that went wrong, in order: `console.error` and failed `console.assert` calls,
    /// uncaught exceptions, and the browser's own error log (Content Security Policy violations,
    /// resources that failed to load), each with where it came from.
    pub fn errors(&self) -> Vec<String> {
        self.list(|j| &j.errors)
    }

    /// Every console message, of any level, as `console.TYPE: TEXT`.
    pub fn console(&self) -> Vec<String> {
        self.list(|j| &j.console)
    }

    /// The URL of every request the page made, the page's own file included, in order.
    pub fn requests(&self) -> Vec<String> {
        self.list(|j| &j.requests)
    }

    /// The URL of every request that failed (blocked, offline, missing file).
    pub fn failed_requests(&self) -> Vec<String> {
        self.failures().into_iter().map(|(url, _)| url).collect()
    }

    /// Every failed request as its URL and why: `blocked: inspector` for a URL this driver
    /// blocks (every non-file one), `blocked: csp` for one the page's policy refused, else the
    /// network error (`net::ERR_FILE_NOT_FOUND`).
    pub fn failures(&self) -> Vec<(String, String)> {
        self.journal(|j| j.failed.clone())
            .unwrap_or_else(|e| vec![(String::new(), format!("cannot read the page's events: {e}"))])
    }

    /// The value of a JavaScript expression, awaited if a promise, as JSON (`undefined` as
    /// `null`). An exception it throws, or a value JSON cannot carry, is the error.
    pub fn eval_json(&self, expression: &str) -> Result<Value, String> {
        let answer = self.call(
            "Runtime.evaluate",
            json!({ "expression": expression, "returnByValue": true, "awaitPromise": true, "userGesture": true }),
        )?;
        if let Some(details) = answer.get("exceptionDetails") {
            let what = details["exception"]["description"].as_str().or(details["text"].as_str()).unwrap_or("?");
            return Err(format!("evaluating `{expression}`: {what}"));
        }
        let result = &answer["result"];
        if let Some(value) = result["unserializableValue"].as_str() {
            return Err(format!("evaluating `{expression}`: {value} is not JSON"));
        }
        Ok(result.get("value").cloned().unwrap_or(Value::Null))
    }

    /// A PNG of the viewport, or of the whole page (up to 1280×8000 CSS pixels) when `full_page`.
    pub fn screenshot_png(&self, full_page: bool) -> Result<Vec<u8>, String> {
        let mut params = json!({ "format": "png" });
        if full_page {
            let metrics = self.call("Page.getLayoutMetrics", json!({}))?;
            // `cssContentSize` is in CSS pixels; older browsers only have `contentSize`.
            let size = metrics.get("cssContentSize").unwrap_or(&metrics["contentSize"]);
            let side = |key: &str, max: f64| size[key].as_f64().unwrap_or(1.0).ceil().clamp(1.0, max);
            let (width, height) = (side("width", MAX_SCREENSHOT.0), side("height", MAX_SCREENSHOT.1));
            params["captureBeyondViewport"] = json!(true);
            params["clip"] = json!({ "x": 0, "y": 0, "width": width, "height": height, "scale": 1 });
        }
        let shot = self.call("Page.captureScreenshot", params)?;
        let data = shot["data"].as_str().ok_or("Page.captureScreenshot answered no data")?;
        base64::engine::general_purpose::STANDARD
            .decode(data)
            .map_err(|e| format!("Page.captureScreenshot answered data that is not base64: {e}"))
    }
}

impl Drop for Page {
    fn drop(&mut self) {
        let mut connection = self.connection();
        connection.remove_session(&self.session);
        // Not waited for: the browser may be gone, and nothing depends on it.
        let _ = connection.send(None, "Target.closeTarget", json!({ "targetId": self.target }));
    }
}
