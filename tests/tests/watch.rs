//! `cargo loadbench --watch NAME=PID` against a server process with a known cost: the CPU and
//! memory it reports are in range, and a process that does not exist is a note, not a failure.

// A broken test environment (a fixture that does not build) should fail loudly.
#![allow(clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use loadbench_tests::cli::{read_report, run_fixture, scenario};

/// `burn-server` as a child process, killed when dropped.
struct BurnServer {
    child: Child,
    url: String,
}

impl BurnServer {
    fn start(alloc_mb: u32, spin_ms: u32) -> BurnServer {
        let mut child = Command::new(env!("CARGO_BIN_EXE_burn-server"))
            .args(["--alloc-mb", &alloc_mb.to_string(), "--spin-ms", &spin_ms.to_string()])
            .stdout(Stdio::piped())
            .spawn()
            .expect("start burn-server");
        let mut url = String::new();
        BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut url).expect("its URL");
        BurnServer { child, url: url.trim().to_owned() }
    }

    fn pid(&self) -> String {
        self.child.id().to_string()
    }
}

impl Drop for BurnServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_busy_server_shows_its_cpu_and_memory() {
    // 64 MiB resident; 2 ms of CPU per request on one thread, and `hello` (500 requests from
    // 20 users) keeps it busy: about one core for about one second.
    let server = BurnServer::start(64, 2);
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("out.json");
    let watch = format!("app={}", server.pid());
    let out = run_fixture(
        "basic",
        &["hello", "--target", &server.url, "--watch", &watch, "--json", json.to_str().expect("UTF-8"), "-q"],
    );
    assert_eq!(out.code, Some(0), "{out:#?}");

    let report = read_report(&json);
    let hello = scenario(&report, "hello");
    assert_eq!(hello.ok, 500, "{hello:#?}");
    let [app] = hello.watched.as_slice() else { panic!("one watched process: {hello:#?}") };
    assert_eq!((app.name.as_str(), app.pid.to_string()), ("app", server.pid()));
    assert!(app.note.is_none(), "{app:?}");
    let cpu = app.cpu_avg_percent.expect("CPU average");
    assert!((50.0..=110.0).contains(&cpu), "one busy core is about 100%: {app:?}");
    assert!(app.cpu_peak_percent.is_some_and(|peak| peak >= cpu), "{app:?}");
    let mib = |b: Option<u64>| b.expect("RSS") as f64 / (1024.0 * 1024.0);
    assert!((64.0..200.0).contains(&mib(app.rss_peak_bytes)), "64 MiB held: {app:?}");
    assert!(mib(app.rss_start_bytes) >= 64.0 && mib(app.rss_end_bytes) >= 64.0, "{app:?}");

    assert!(out.stdout.contains(&format!("hello: app (pid {}): CPU avg", server.pid())), "{}", out.stdout);
}

#[test]
fn a_process_that_does_not_exist_is_a_note_and_the_run_goes_on() {
    let server = BurnServer::start(0, 0);
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("out.json");
    // Above the kernel's largest pid_max (2^22), so no process has it.
    let out = run_fixture(
        "basic",
        &["hello", "--target", &server.url, "--watch-pid", "4194305", "--json", json.to_str().expect("UTF-8"), "-q"],
    );
    assert_eq!(out.code, Some(0), "{out:#?}");
    let report = read_report(&json);
    let hello = scenario(&report, "hello");
    assert_eq!(hello.ok, 500);
    let [gone] = hello.watched.as_slice() else { panic!("{hello:#?}") };
    assert_eq!(gone.name, "server");
    assert!(gone.note.as_deref().is_some_and(|n| n.contains("no process with pid 4194305")), "{gone:?}");
    assert!(out.stdout.contains("no process with pid 4194305"), "{}", out.stdout);
}

#[test]
fn a_malformed_watch_is_a_usage_error() {
    let out = run_fixture("basic", &["--watch", "db=notapid"]);
    assert_eq!(out.code, Some(2), "{out:#?}");
    assert!(out.stderr.contains("`notapid` is not a process id"), "{out:#?}");
}
