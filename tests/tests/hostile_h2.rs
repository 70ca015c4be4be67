//! HTTP/2 against a hostile server (`loadbench_tests::hostile_h2`), one test per fault class:
//! `cargo loadbench url --http2` to `http://127.0.0.1:PORT/` with prior knowledge, each run
//! checked for what a user would notice: every request accounted for by kind, a run that ends
//! within a few seconds of its own bound, and a peak resident memory at most 64 MiB above a
//! normal run's (the same load against the same server in good mode, measured in the same test).
//!
//! Every test takes the same lock: the bounds on time and memory hold for a run that has the
//! machine's two CPUs to itself (minus whatever else the machine runs).

// A broken test environment (the binary does not build, a file cannot be written) should fail
// loudly.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use loadbench_tests::child::{Finished, Running};
use loadbench_tests::hostile_h2::{Fault, HostileH2, MANY_HEADERS};
use loadbench_tests::outcomes::{account, outcomes};
use serde_json::Value;

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What a hostile run may take above a normal run's peak resident memory.
const RSS_ABOVE_NORMAL_KIB: u64 = 64 * 1024;

/// What a child may take before the test kills it and fails.
const DEADLINE: Duration = Duration::from_secs(60);

/// What a busy machine may add to a run's own bound (its timeout, its rounds).
const SLACK: Duration = Duration::from_secs(5);

/// Run before the generator, in the same process: 8 GiB of address space, far above what a run
/// needs, so that a client that a server makes grow fails an allocation and stops rather than
/// take the machine's memory.
const ADDRESS_SPACE: &str = "ulimit -v 8388608";

/// The kind the requests of a connection closed for a flood of control frames fail with.
const FLOOD_KIND: &str = "protocol";

/// One finished `cargo loadbench url … --json FILE` and the document it wrote, if any.
struct Run {
    out: Finished,
    json: Option<Value>,
}

impl Run {
    /// The one scenario of the document.
    fn scenario(&self) -> &Value {
        let json = self.json.as_ref().unwrap_or_else(|| panic!("no JSON written: {:#?}", self.out));
        &json["scenarios"][0]
    }

    /// The messages of the failures, as the document's causes list them.
    fn messages(&self) -> Vec<String> {
        let top = self.scenario()["causes"]["top"].as_array().cloned().unwrap_or_default();
        top.iter().filter_map(|c| c["message"].as_str().map(str::to_owned)).collect()
    }
}

/// `cargo loadbench url URL --http2 ARGS… --json FILE`, to the end.
fn url(server: &HostileH2, args: &[&str]) -> Run {
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("out.json");
    let url = server.url();
    let mut all = vec!["url", "--allow-failures", &url, "--http2", "--quiet"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--json", json.to_str().expect("UTF-8 path")]);
    let out = Running::start(dir.path(), Some(ADDRESS_SPACE), &all).finish(DEADLINE);
    Run { json: read_json(&json), out }
}

fn read_json(path: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(path).ok()?;
    Some(loadbench_tests::cli::results_json(&text, &path.display().to_string()))
}

/// The peak resident memory of a normal run: `args` against the server in good mode, every
/// request answered.
#[track_caller]
fn normal_peak_kib(args: &[&str], requests: u64) -> u64 {
    let server = HostileH2::start(Fault::None);
    let run = url(&server, args);
    assert_eq!(run.out.code, Some(0), "{:#?}", run.out);
    assert_eq!(account(run.scenario(), Some(requests)), outcomes(&[("ok", requests)]), "the normal run");
    run.out.peak_rss_kib
}

/// `args` (with `-n requests`) against `fault`: exit 0, within `bound` and [`SLACK`], and in
/// at most 64 MiB above the same run against the server in good mode; the server and the run.
#[track_caller]
fn hostile_run(fault: Fault, args: &[&str], requests: u64, bound: Duration) -> (HostileH2, Run, BTreeMap<String, u64>) {
    let count = requests.to_string();
    let mut args = args.to_vec();
    args.extend_from_slice(&["-n", &count]);
    let normal = normal_peak_kib(&args, requests);
    let server = HostileH2::start(fault);
    let run = url(&server, &args);
    let seen = format!(
        "{fault:?}: exit {:?} in {:?} (bound {bound:?}), peak RSS {} KiB (a normal run's {normal} KiB), {:?}",
        run.out.code,
        run.out.wall,
        run.out.peak_rss_kib,
        run.json.as_ref().map(|_| account(run.scenario(), Some(requests))),
    );
    // Shown with `--nocapture`: the figures of a run that passed.
    println!("{seen}, {} connections", server.connections());
    assert_eq!(run.out.code, Some(0), "{seen}: {:#?}", run.out);
    assert!(run.out.wall < bound + SLACK, "{seen}");
    assert!(run.out.peak_rss_kib < normal + RSS_ABOVE_NORMAL_KIB, "{seen}");
    let got = account(run.scenario(), Some(requests));
    (server, run, got)
}

/// Each request is one of the server's protocol violations: `-c 50 -n 200 --timeout 2s`,
/// every request fails `protocol`, none at its timeout.
#[track_caller]
fn every_request_is_a_protocol_error(fault: Fault) {
    let (_, run, got) = hostile_run(fault, &["-c", "50", "--timeout", "2s"], 200, Duration::from_secs(2));
    assert_eq!(got, outcomes(&[("protocol", 200)]), "{fault:?}: {:?}", run.messages());
}

#[test]
fn an_hpack_bomb_is_a_protocol_error_in_bounded_memory() {
    let _serial = serial();
    every_request_is_a_protocol_error(Fault::HpackBomb);
}

#[test]
fn a_header_block_of_1_mib_is_a_protocol_error() {
    let _serial = serial();
    every_request_is_a_protocol_error(Fault::HugeHeaderBlock);
}

#[test]
fn a_continuation_flood_is_a_protocol_error_in_bounded_memory() {
    let _serial = serial();
    every_request_is_a_protocol_error(Fault::ContinuationFlood);
}

#[test]
fn malformed_responses_are_protocol_errors_never_ok() {
    let _serial = serial();
    let faults =
        [Fault::DuplicateStatus, Fault::UppercaseName, Fault::PseudoAfterRegular, Fault::ContentLengthMismatch];
    let args = ["-c", "50", "--timeout", "2s"];
    let got: Vec<_> =
        faults.iter().map(|&fault| (fault, hostile_run(fault, &args, 200, Duration::from_secs(2)).2)).collect();
    let expected: Vec<_> = faults.iter().map(|&fault| (fault, outcomes(&[("protocol", 200)]))).collect();
    assert_eq!(got, expected);
}

#[test]
fn a_server_that_never_sends_settings_is_refused() {
    let _serial = serial();
    every_request_is_a_protocol_error(Fault::NoSettings);
}

/// A server that sends control frames and never reads: the client closes the connection with
/// `ENHANCE_YOUR_CALM` once too many acknowledgements wait, and its requests fail at once (none
/// waits for its timeout), in bounded memory.
#[track_caller]
fn a_control_frame_flood_is_answered_with_enhance_your_calm(fault: Fault) {
    let args = ["-c", "50", "--connections", "4", "--timeout", "2s"];
    let (server, run, got) = hostile_run(fault, &args, 200, Duration::from_secs(2));
    assert_eq!(got, outcomes(&[(FLOOD_KIND, 200)]), "{fault:?}: {:?}", run.messages());
    let messages = run.messages();
    assert!(messages.iter().all(|m| m.contains("ENHANCE_YOUR_CALM")), "{fault:?}: {messages:?}");
    // Each connection's requests fail together; the next ones open another.
    assert!(server.connections() >= 4, "{fault:?}: {} connections", server.connections());
}

#[test]
fn a_ping_flood_without_reading_is_closed_with_enhance_your_calm() {
    let _serial = serial();
    a_control_frame_flood_is_answered_with_enhance_your_calm(Fault::PingFlood);
}

#[test]
fn a_settings_flood_without_reading_is_closed_with_enhance_your_calm() {
    let _serial = serial();
    a_control_frame_flood_is_answered_with_enhance_your_calm(Fault::SettingsFlood);
}

/// 50 users on one connection that stops answering: their requests on it fail `timeout`, and
/// the connection is replaced, so the 150 after them succeed on a new one.
#[test]
fn a_stalled_connection_is_replaced() {
    let _serial = serial();
    let args = ["-c", "50", "--connections", "1", "--timeout", "1s"];
    let (server, run, got) = hostile_run(Fault::StallFirstConnection, &args, 200, Duration::from_secs(1));
    assert_eq!(got, outcomes(&[("timeout", 50), ("ok", 150)]), "{:?}", run.messages());
    assert_eq!(server.connections(), 2, "the stalled connection and its replacement");
    assert_eq!(server.streams(), 200, "every request reached the server once");
}

// A response's headers, all of them, checked by name and value.
#[loadbench::scenario(name = "h2_many_headers", concurrency = 10, count = 200, http2 = true, timeout = "5s")]
async fn many_headers(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    let response = ctx.get("/").send().await?;
    let headers = response.headers();
    let whole = (1..=MANY_HEADERS)
        .all(|i| headers.get(format!("x-h{i}")).and_then(|v| v.to_str().ok()) == Some(format!("v{i}").as_str()));
    if !whole {
        return Err(loadbench::Error::msg(format!("{} headers of {MANY_HEADERS} arrived", headers.len())));
    }
    Ok(())
}

/// More than 100 headers in a valid response: every one arrives, by name and value.
#[test]
fn a_response_with_150_headers_arrives_whole() {
    let _serial = serial();
    let server = HostileH2::start(Fault::ManyHeaders);
    let started = Instant::now();
    let report = loadbench_tests::run_scenario("h2_many_headers", &server.url());
    assert!(started.elapsed() < SLACK, "took {:?}", started.elapsed());
    let report = serde_json::to_value(&report).expect("the report serializes");
    assert_eq!(account(&report, Some(200)), outcomes(&[("ok", 200)]), "{:#}", report["causes"]);
    assert_eq!(server.streams(), 200);
}
