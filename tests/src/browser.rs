//! Headless Chromium for tests of what loadbench writes for a browser (the self-contained HTML
//! report): open a file as a user would, then ask what the page did — console errors, uncaught
//! exceptions, violations of its Content Security Policy, every request it tried — evaluate
//! JavaScript in it and take screenshots.
//!
//! The browser is driven over the Chrome DevTools Protocol (CDP), JSON on a WebSocket on loopback,
//! with the synchronous `tungstenite`: one connection to the browser, one flattened session per
//! page. Pages are opened with the network cut off (offline, and every non-file URL blocked), so a
//! report that tries to fetch anything fails visibly instead of quietly depending on the
//! Internet. Every wait is bounded: a broken browser fails a test, it never hangs it.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::json;

mod cdp;
mod page;

use cdp::Connection;
pub use page::Page;

/// The environment variable naming the browser binary to use, ahead of the ones on `PATH`.
pub const CHROMIUM_ENV: &str = "LOADBENCH_CHROMIUM";

/// Looked for on `PATH`, in order, when [`CHROMIUM_ENV`] is unset.
const CANDIDATES: [&str; 3] = ["chromium", "chromium-browser", "google-chrome"];

/// How long one start may take to open its DevTools endpoint. A cold start on a loaded CI machine
/// (the first run after installing: a 200 MB binary and its libraries read from disk, caches
/// built) has taken more than 30 s; a warm one takes about one.
const LAUNCH_TIMEOUT: Duration = Duration::from_secs(90);

/// Starts tried before a launch fails: a start that timed out has still warmed the machine's
/// caches, and the next one is usually quick. More would only make a broken browser slower to
/// report.
const LAUNCH_ATTEMPTS: u32 = 2;

/// Held while a browser starts: tests run in parallel, and on a small machine two cold starts at
/// once take longer than the two one after the other.
static LAUNCHING: Mutex<()> = Mutex::new(());

/// How long the browser gets to close on its own before it is killed.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(3);

/// Lines of the browser's stderr kept to explain a failure.
const STDERR_TAIL: usize = 40;

/// The viewport every page gets, so screenshots have the same width on every machine.
const VIEWPORT: (u32, u32) = (1280, 800);

/// A running headless Chromium with a fresh profile. Dropping it closes the browser (killing it
/// if it does not close in time) and deletes the profile.
#[derive(Debug)]
pub struct Browser {
    connection: Arc<Mutex<Connection>>,
    // Declared (so dropped) after the connection's last use in `drop`.
    process: Process,
}

/// The browser's process and profile, on their own so that a launch failing halfway still cleans
/// up.
struct Process {
    child: Child,
    binary: PathBuf,
    stderr: Arc<Mutex<Stderr>>,
    profile: Option<tempfile::TempDir>,
    /// Whether the browser was asked to close, so is worth waiting for before killing it.
    closing: bool,
}

/// Why one start failed, and whether another is worth trying.
enum Start {
    /// Too slow (a cold machine), worth one more try.
    Retry(String),
    /// The browser cannot run here (it exited, or cannot be started at all): trying again would
    /// fail the same way.
    Fatal(String),
}

/// The end of the browser's stderr, kept to explain a failure.
#[derive(Default)]
struct Stderr {
    tail: VecDeque<String>,
    /// Lines about the D-Bus a container lacks, which Chromium prints at every turn: counted, not
    /// kept, so that they do not push the telling lines out of the tail.
    dbus: usize,
}

impl Stderr {
    fn push(&mut self, line: String) {
        if line.contains(":ERROR:dbus/") {
            self.dbus += 1;
            return;
        }
        if self.tail.len() == STDERR_TAIL {
            self.tail.pop_front();
        }
        self.tail.push_back(line);
    }
}

impl std::fmt::Debug for Process {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Process").field("pid", &self.child.id()).field("binary", &self.binary).finish_non_exhaustive()
    }
}

/// The browser binary to use: the one [`CHROMIUM_ENV`] names, else the first of `chromium`,
/// `chromium-browser` and `google-chrome` on `PATH`. `None` when there is none (tests decide
/// whether that skips or fails them).
pub fn find_chromium() -> Option<PathBuf> {
    if let Some(named) = std::env::var_os(CHROMIUM_ENV).filter(|v| !v.is_empty()) {
        let named = PathBuf::from(named);
        // A bare name is looked up on PATH, as a shell would.
        return if named.components().count() == 1 { on_path(&named) } else { named.is_file().then_some(named) };
    }
    CANDIDATES.iter().find_map(|name| on_path(Path::new(name)))
}

fn on_path(name: &Path) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(name)).find(|candidate| candidate.is_file())
}

impl Browser {
    /// Starts the browser found by [`find_chromium`], headless, on a fresh profile, and connects
    /// to its DevTools endpoint.
    pub fn launch() -> Result<Browser, String> {
        let binary = find_chromium().ok_or_else(|| {
            format!(
                "no Chromium found: set {CHROMIUM_ENV} to a Chromium or Chrome binary, or install one \
                 (Debian/Ubuntu: `apt-get install chromium`) so that one of {CANDIDATES:?} is on PATH"
            )
        })?;
        let _one_at_a_time = LAUNCHING.lock().unwrap_or_else(|e| e.into_inner());
        let mut failures = Vec::new();
        for attempt in 1..=LAUNCH_ATTEMPTS {
            match Browser::start(&binary) {
                Ok(browser) => return Ok(browser),
                Err(Start::Retry(failure)) if attempt < LAUNCH_ATTEMPTS => failures.push(failure),
                Err(Start::Retry(failure) | Start::Fatal(failure)) => {
                    failures.push(failure);
                    break;
                }
            }
        }
        Err(failures.join("\n-- then --\n"))
    }

    /// One start: the browser on a fresh profile, up to its DevTools connection.
    fn start(binary: &Path) -> Result<Browser, Start> {
        let began = Instant::now();
        let profile = tempfile::Builder::new()
            .prefix("loadbench-chromium-")
            .tempdir()
            .map_err(|e| Start::Fatal(format!("creating a profile directory for {}: {e}", binary.display())))?;
        let mut child = Command::new(binary)
            .args(flags(profile.path()))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| Start::Fatal(format!("starting {}: {e}", binary.display())))?;
        let stderr = Arc::new(Mutex::new(Stderr::default()));
        let (endpoint_tx, endpoint_rx) = mpsc::channel();
        if let Some(pipe) = child.stderr.take() {
            let tail = Arc::clone(&stderr);
            // Keeps reading after the endpoint is known: a full pipe would block the browser.
            thread::spawn(move || {
                for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                    if let Some(url) = line.strip_prefix("DevTools listening on ") {
                        let _ = endpoint_tx.send(url.trim().to_owned());
                    }
                    tail.lock().unwrap_or_else(|e| e.into_inner()).push(line);
                }
            });
        }
        let mut process = Process { child, binary: binary.to_owned(), stderr, profile: Some(profile), closing: false };
        let endpoint = match endpoint_rx.recv_timeout(LAUNCH_TIMEOUT) {
            Ok(endpoint) => endpoint,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                return Err(Start::Retry(process.failure(&format!("no DevTools endpoint within {LAUNCH_TIMEOUT:?}"))));
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                // The pipe closed: the browser exited; give it a moment to be reaped for its status.
                thread::sleep(Duration::from_millis(100));
                let status = process.child.try_wait().ok().flatten();
                let failure = process.failure(&format!(
                    "exited after {:.1?} before listening for DevTools ({status:?})",
                    began.elapsed()
                ));
                return Err(Start::Fatal(failure));
            }
        };
        let connection = Connection::connect(&endpoint, LAUNCH_TIMEOUT)
            .map_err(|e| Start::Retry(process.failure(&format!("connecting to {endpoint}: {e}"))))?;
        Ok(Browser { connection: Arc::new(Mutex::new(connection)), process })
    }

    /// Opens `path` (an HTML file) in a new tab with the network cut off, waits for its `load`
    /// event and for its events to settle, and returns the page with everything it did so far.
    pub fn open(&self, path: &Path) -> Result<Page, String> {
        let absolute = std::path::absolute(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let url = url::Url::from_file_path(&absolute)
            .map_err(|()| format!("{} cannot be a file:// URL", absolute.display()))?
            .to_string();
        let created = self
            .call(None, "Target.createTarget", json!({ "url": "about:blank" }))
            .map_err(|e| self.failure(&format!("opening a tab for {url}: {e}")))?;
        let target = created["targetId"].as_str().ok_or("Target.createTarget answered no targetId")?.to_owned();
        let attached = self.call(None, "Target.attachToTarget", json!({ "targetId": target, "flatten": true }))?;
        let session = attached["sessionId"].as_str().ok_or("Target.attachToTarget answered no sessionId")?.to_owned();
        let page = Page::new(Arc::clone(&self.connection), session, target, url);
        page.navigate(VIEWPORT).map_err(|e| self.failure(&format!("opening {}: {e}", absolute.display())))?;
        Ok(page)
    }

    fn call(
        &self,
        session: Option<&str>,
        method: &str,
        params: serde_json::Value,
    ) -> Result<serde_json::Value, String> {
        self.connection.lock().unwrap_or_else(|e| e.into_inner()).call(session, method, params)
    }

    fn failure(&self, what: &str) -> String {
        self.process.failure(what)
    }
}

impl Process {
    /// `what` went wrong, with which binary and the end of its stderr (crashes, missing libraries).
    fn failure(&self, what: &str) -> String {
        let stderr = self.stderr.lock().unwrap_or_else(|e| e.into_inner());
        let tail: Vec<&str> = stderr.tail.iter().map(String::as_str).collect();
        format!(
            "{}: {what}; its stderr ended with ({} D-Bus lines left out):\n{}",
            self.binary.display(),
            stderr.dbus,
            tail.join("\n")
        )
    }
}

/// The command line: headless, isolated from the machine (a fresh profile, no extensions, sync or
/// background fetches) and quiet, with a DevTools endpoint on a port the OS picks.
fn flags(profile: &Path) -> Vec<String> {
    let mut flags: Vec<String> = [
        "--headless",
        "--remote-debugging-port=0",
        // Tests run as root in CI containers, where Chromium's sandbox cannot start.
        "--no-sandbox",
        "--disable-gpu",
        // /dev/shm is 64 MB in a default container: too small for a large page's rendering.
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-extensions",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
        "--mute-audio",
        // Belt and braces with the per-page offline mode: no host name resolves, so nothing the
        // browser itself might start (outside any page) reaches the Internet either.
        "--host-resolver-rules=MAP * ~NOTFOUND",
    ]
    .map(String::from)
    .into();
    flags.push(format!("--window-size={},{}", VIEWPORT.0, VIEWPORT.1));
    flags.push(format!("--user-data-dir={}", profile.display()));
    flags.push("about:blank".to_owned());
    flags
}

impl Drop for Browser {
    fn drop(&mut self) {
        // A clean close first: the browser's helper processes exit with it and stop writing into
        // the profile before it is deleted. `Process::drop` waits for it, or kills it.
        let mut connection = self.connection.lock().unwrap_or_else(|e| e.into_inner());
        self.process.closing = connection.send(None, "Browser.close", json!({})).is_ok();
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let deadline = Instant::now() + if self.closing { CLOSE_TIMEOUT } else { Duration::ZERO };
        while matches!(self.child.try_wait(), Ok(None)) && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(20));
        }
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        if let Some(profile) = self.profile.take() {
            let path = profile.path().to_owned();
            if profile.close().is_err() {
                // A helper process may have written a last file meanwhile.
                thread::sleep(Duration::from_millis(200));
                let _ = std::fs::remove_dir_all(path);
            }
        }
    }
}
