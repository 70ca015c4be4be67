//! End-to-end tests of HTTPS targets: `cargo loadbench url https://…` and a scenario's
//! bench binary with `--target https://…`, against the hyper + rustls [`TlsServer`] on 127.0.0.1
//! with certificates made when the test starts ([`Pki`]). The tests compare what loadbench reports
//! (exact counts, handshakes and resumptions in the JSON, error kinds and their descriptions) with
//! what the server observed at the TLS layer.
//!
//! - `tls/server.rs`: the server and the PKI themselves, checked with a plain tokio-rustls
//!   client, so that a failure in the other files is loadbench's and not the test server's.
//! - `tls/accepted.rs`: runs that succeed (exact counts, one connection per user, resumption on
//!   reconnect, `--insecure`, `--connect-to`, TLS 1.2, http:// beside, a scenario's bench binary).
//! - `tls/refused.rs`: runs that are refused (unknown CA, another name, expired, mTLS, not TLS),
//!   and bad TLS flags as usage errors.
//!
//! Every test that runs `cargo loadbench` takes the same lock: counts are exact whatever the
//! machine, but on two busy cores two runs at once would only slow each other down.

// A broken test environment (the binary does not build, a file cannot be written) should fail
// loudly.
#![allow(clippy::expect_used)]

use std::path::Path;
use std::sync::{Mutex, MutexGuard, PoisonError};

use cargo_loadbench::{Results, ScenarioResult};
use loadbench_tests::cli::{Output, cargo_loadbench, read_report};
use serde_json::{Value, json};

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(PoisonError::into_inner)
}

#[path = "tls/accepted.rs"]
mod accepted;
#[path = "tls/refused.rs"]
mod refused;
#[path = "tls/server.rs"]
mod server;

/// A finished `cargo loadbench url` run: what it printed, and its JSON both as the contract types
/// and as raw JSON (for the TLS fields, checked by the names the JSON gives them).
struct Run {
    out: Output,
    report: Results,
    raw: Value,
}

impl Run {
    fn s(&self) -> &ScenarioResult {
        assert_eq!(self.report.scenarios.len(), 1, "{:#?}", self.report);
        &self.report.scenarios[0]
    }

    /// The value at JSON pointer `pointer` under the only scenario (`Null` when absent).
    fn at(&self, pointer: &str) -> &Value {
        self.raw.pointer(&format!("/scenarios/0{pointer}")).unwrap_or(&Value::Null)
    }

    /// The count at `pointer` under the only scenario.
    #[track_caller]
    fn count(&self, pointer: &str) -> u64 {
        self.at(pointer).as_u64().unwrap_or_else(|| panic!("no count at {pointer}: {:#}", self.raw["scenarios"][0]))
    }

    /// The line under the table with the connection figures (`connect …, TLS handshake …`).
    #[track_caller]
    fn connections_line(&self) -> &str {
        self.out.stdout.lines().find(|l| l.contains("TLS handshake")).unwrap_or_else(|| panic!("{}", self.out.stdout))
    }
}

fn path(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

/// `cargo loadbench url ARGS… --json FILE`, and the report it wrote.
fn url(args: &[&str]) -> Run {
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("out.json");
    // Handshakes that fail on purpose: these tests judge what TLS did, not the verdict.
    let mut all = vec!["url", "--allow-failures"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--json", path(&json)]);
    let out = cargo_loadbench(&all);
    assert!(json.exists(), "no JSON written: {out:#?}");
    let report = read_report(&json);
    let raw = loadbench_tests::cli::read_json(&json);
    Run { out, report, raw }
}

/// A run of `n` iterations that all succeeded, with exit code 0.
#[track_caller]
fn all_ok(run: &Run, n: u64) {
    assert_eq!(run.out.code, Some(0), "{:#?}", run.out);
    let s = run.s();
    assert_eq!((s.iterations, s.ok, s.failed), (n, n, 0), "{:#?}\n{}", s.errors, run.out.stderr);
    assert_eq!(s.http.status.get(&200), Some(&n), "{:?}", s.http.status);
}

/// A run of `n` iterations that all failed under `tls`, for one cause, `TLS handshake with
/// ADDR:PORT failed: …CAUSE…`, in the JSON's causes and in the table's line under it. TLS
/// failures are results: exit 0.
#[track_caller]
fn all_refused(run: &Run, n: u64, port: u16, cause: &str) {
    assert_eq!(run.out.code, Some(0), "{:#?}", run.out);
    let s = run.s();
    assert_eq!((s.iterations, s.ok, s.failed), (n, 0, n), "{:#?}", s.errors);
    assert_eq!(run.count("/errors/tls"), n, "{:#}\n{}", run.at("/errors"), run.out.stderr);
    assert_eq!((s.errors.tls, s.errors.total()), (n, n), "only tls errors, in the contract types too");
    assert_eq!((run.at("/causes/top/0/kind"), run.count("/causes/top/0/count")), (&json!("tls"), n), "{:#}", run.raw);
    assert_eq!((run.at("/causes/top/1"), run.at("/causes/others")), (&Value::Null, &json!(0)), "one cause");
    let message = run.at("/causes/top/0/message").as_str().unwrap_or_default();
    assert!(message.starts_with("TLS handshake with ") && message.contains(&format!(":{port} failed: ")), "{message}");
    assert!(message.contains(cause), "{message:?} should say {cause:?}");
    let line = format!("GET /: causes: {n} × tls: {}", loadbench::report::cause_lines::one_line(message));
    assert!(run.out.stdout.lines().any(|l| l == line), "no {line:?} in\n{}", run.out.stdout);
    assert!(!run.out.stderr.contains("first tls error"), "{}", run.out.stderr);
}

/// The hints after the table, on stderr, each whole: its first line (`hint: …`) and the lines
/// indented under it, joined by spaces. Every line fits the hint's width: wrapped, never cut.
#[track_caller]
fn hints(run: &Run) -> Vec<String> {
    let mut hints: Vec<String> = Vec::new();
    let mut inside = false;
    for line in run.out.stderr.lines() {
        if let Some(text) = line.strip_prefix("hint: ") {
            hints.push(text.to_owned());
            inside = true;
        } else if inside && let Some(more) = line.strip_prefix("      ") {
            hints.last_mut().expect("a hint").push_str(&format!(" {more}"));
        } else {
            inside = false;
            continue;
        }
        assert!(line.chars().count() <= loadbench::report::HINT_WIDTH, "a hint's line too wide: {line:?}");
    }
    hints
}

/// The one hint of a run every iteration of which failed for the server's certificate
/// (`tls.unverified`, a figure the core adds beside the contract's).
#[track_caller]
fn only_hint(run: &Run) -> String {
    let s = run.s();
    assert_eq!(s.tls.as_ref().map(|t| t.unverified), Some(s.iterations), "{:?}", s.tls);
    let mut hints = hints(run);
    assert_eq!(hints.len(), 1, "one hint: {hints:?}\n{}", run.out.stderr);
    hints.remove(0)
}

/// The hint for a certificate that could not be verified: trust its CA, or skip verification.
#[track_caller]
fn hint(run: &Run) -> String {
    let hint = only_hint(run);
    assert!(hint.contains("--cacert FILE") && hint.contains("--insecure"), "{hint}");
    hint
}

/// A latency summary (`connect_us`, `tls_handshake_us`) of plausible, ordered values.
#[track_caller]
fn summary(value: &Value, what: &str) {
    let field = |k: &str| value[k].as_f64().unwrap_or_else(|| panic!("{what}.{k} missing: {value:#}"));
    let ordered = ["min", "p50", "p90", "p99", "p99_9", "max"].map(field);
    assert!(ordered.windows(2).all(|w| w[0] <= w[1]), "{what} out of order: {value:#}");
    assert!(
        field("min") <= field("mean") && field("mean") <= field("max") && field("stdev") >= 0.0,
        "{what}: {value:#}"
    );
    // Generous: loopback on a busy 2-core machine, but not seconds.
    assert!(field("max") < 10_000_000.0, "{what}: {value:#}");
}

/// The TLS figures of a run that completed `handshakes` handshakes, `resumed` of them resumed,
/// all with `version`; the connection line under the table agrees.
#[track_caller]
fn tls_figures(run: &Run, handshakes: u64, resumed: u64, version: &str) {
    tls_counts(run.at("/tls"), handshakes, resumed, version);
    assert_eq!(run.s().http.connections, handshakes, "connections opened, all handshaken");
    summary(run.at("/connect_us"), "connect_us");
    summary(run.at("/tls_handshake_us"), "tls_handshake_us");
    let line = run.connections_line();
    assert!(
        line.contains("connect") && line.contains(&format!("{} full, {resumed} resumed", handshakes - resumed)),
        "{line}"
    );
}

/// `tls` of a scenario: `handshakes` completed, `resumed` of them resumed, all with `version`.
#[track_caller]
fn tls_counts(tls: &Value, handshakes: u64, resumed: u64, version: &str) {
    let figures = (&tls["handshakes"], &tls["resumed"], &tls["versions"]);
    assert_eq!(figures, (&json!(handshakes), &json!(resumed), &json!({version: handshakes})), "{tls:#}");
}
