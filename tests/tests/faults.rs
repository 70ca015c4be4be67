//! The fault suite: loadbench against servers that misbehave on purpose
//! ([`HostileServer`]), against signals and against bad input. One test per row of the fault
//! table (`faults/rows.rs`) and per fault class; each asserts what a user would notice: every iteration asked for
//! accounted for by kind, the exit code, a bounded wall time and, where a server can make the
//! generator grow, its peak resident memory.
//!
//! The results are read as plain JSON by field name, so each count is the document's own; a kind
//! the document does not have reads 0.
//!
//! Every test takes the same lock: the bounds on time and memory hold for a run that has the
//! machine's two CPUs to itself (minus whatever else the machine runs).

// A broken test environment (the binary does not build, a file cannot be written) should fail
// loudly.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use loadbench_tests::child::{Finished, Running};
use loadbench_tests::cli::{fixture, fixture_target_dir, run_fixture};
use loadbench_tests::hostile::{Fault, HostileServer};
use loadbench_tests::outcomes::{account, n, outcomes};
use loadbench_tests::{Behavior, TestServer, closed_port_url, run_scenario};
use serde_json::Value;

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Generous for a one-second fault run on a slow, busy machine; far below a run that waits out
/// its request timeouts, which is the failure this bounds.
const QUICK: Duration = Duration::from_secs(10);
/// What a child may take before the test kills it and fails.
const DEADLINE: Duration = Duration::from_secs(60);
/// The memory bound for a generator that a server sends gigabytes: what it keeps is bounded, not
/// what the server sends.
const RSS_LIMIT_KIB: u64 = 64 * 1024;

/// One finished `cargo loadbench url … --json FILE` and the document it wrote, if any.
struct Run {
    out: Finished,
    json: Option<Value>,
}

impl Run {
    /// The one scenario of the document.
    fn scenario(&self) -> &Value {
        let json = self.json.as_ref().unwrap_or_else(|| panic!("no JSON written: {:#?}", self.out));
        let scenarios = json["scenarios"].as_array().expect("scenarios");
        assert_eq!(scenarios.len(), 1, "{json:#}");
        &scenarios[0]
    }
}

/// Starts `cargo loadbench url ARGS… --json DIR/out.json` in `dir` (after `shell`, if given).
fn start_url(dir: &Path, shell: Option<&str>, args: &[&str]) -> Running {
    let json = json_path(dir);
    let _ = std::fs::remove_file(&json);
    // A hostile server fails every request by design: a chaos test, which `--allow-failures`
    // is for, so that the exit code says whether the run held, not whether the server answered.
    let mut all = vec!["url", "--allow-failures"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--json", json.to_str().expect("UTF-8 path")]);
    Running::start(dir, shell, &all)
}

fn json_path(dir: &Path) -> PathBuf {
    dir.join("out.json")
}

fn read_json(dir: &Path) -> Option<Value> {
    let path = json_path(dir);
    let text = std::fs::read_to_string(&path).ok()?;
    Some(loadbench_tests::cli::results_json(&text, &path.display().to_string()))
}

/// Ends a started run.
fn finish(running: Running, dir: &Path) -> Run {
    let out = running.finish(DEADLINE);
    Run { out, json: read_json(dir) }
}

/// `cargo loadbench url ARGS…` in `dir`, to the end.
fn url_in(dir: &Path, shell: Option<&str>, args: &[&str]) -> Run {
    finish(start_url(dir, shell, args), dir)
}

/// `cargo loadbench url ARGS…` in a fresh directory, to the end.
fn url(args: &[&str]) -> Run {
    let dir = tempfile::tempdir().expect("tempdir");
    url_in(dir.path(), None, args)
}

fn f(v: &Value, key: &str) -> f64 {
    v.get(key).and_then(Value::as_f64).unwrap_or_else(|| panic!("no number `{key}` in {v:#}"))
}

/// A fault run of `cargo loadbench url`: `-c 2 -n REQUESTS --timeout 1s`; exit 0 (failed
/// requests are results, not a failed command), within [`QUICK`], and the outcomes.
#[track_caller]
fn fault_run(server: &HostileServer, requests: u64) -> (Run, BTreeMap<String, u64>) {
    let n = requests.to_string();
    let run = url(&[&server.url(), "-c", "2", "-n", &n, "--timeout", "1s", "--quiet"]);
    assert_eq!(run.out.code, Some(0), "{:#?}", run.out);
    assert!(run.out.wall < QUICK, "took {:?}", run.out.wall);
    let outcomes = account(run.scenario(), Some(requests));
    (run, outcomes)
}

// A test file is a crate root, whose modules would be looked for beside it.
#[path = "faults/classes.rs"]
mod classes;
#[path = "faults/rows.rs"]
mod rows;
