//! `cargo loadbench --watch NAME=PID`, and a bench binary's own `Harness::default_target_process`,
//! against a server process with a known cost: the CPU and memory reported are in range, and a
//! process that does not exist is a note, not a failure.
//!
//! One test at a time: CPU figures are what is measured, and another test's load on the same two
//! cores would be part of them.

// A broken test environment (a fixture that does not build) should fail loudly.
#![allow(clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, MutexGuard};

use loadbench::HarnessError;
use loadbench_tests::cli::{read_report, run_fixture, scenario};
use loadbench_tests::{Behavior, TestServer};

fn one_at_a_time() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

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

/// CPU time (user + system) process `pid` has used, from its `/proc/PID/stat` (in clock ticks of
/// 1/100 s, as on every Linux the suite runs on).
fn cpu_seconds(pid: &str) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("the server's stat");
    // Fields after the command name, which is in parentheses and may hold spaces.
    let rest = &stat[stat.rfind(')').expect("a stat line") + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = fields[11].parse::<u64>().expect("utime") + fields[12].parse::<u64>().expect("stime");
    ticks as f64 / 100.0
}

impl Drop for BurnServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_busy_server_shows_its_cpu_and_memory() {
    let _alone = one_at_a_time();
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
    // One thread that spins: at most one core (exact, less sampling noise), and what the server
    // itself says it used over the run (the kernel's own count, which a busy machine lowers
    // along with the figure under test).
    assert!(cpu <= 110.0, "one thread is at most one core: {app:?}");
    let used = cpu_seconds(&server.pid());
    let watched = cpu / 100.0 * hello.duration_us as f64 / 1e6;
    assert!(
        watched >= used * 0.6 - 0.05 && watched <= used * 1.3 + 0.05,
        "watched {watched:.2} s of CPU, the server used {used:.2} s: {app:?}"
    );
    assert!(app.cpu_peak_percent.is_some_and(|peak| peak >= cpu), "{app:?}");
    let mib = |b: Option<u64>| b.expect("RSS") as f64 / (1024.0 * 1024.0);
    assert!((64.0..200.0).contains(&mib(app.rss_peak_bytes)), "64 MiB held: {app:?}");
    assert!(mib(app.rss_start_bytes) >= 64.0 && mib(app.rss_end_bytes) >= 64.0, "{app:?}");

    assert!(out.stdout.contains(&format!("hello: app (pid {}): CPU avg", server.pid())), "{}", out.stdout);
}

#[test]
fn a_process_that_does_not_exist_is_a_note_and_the_run_goes_on() {
    let _alone = one_at_a_time();
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

/// 500 GETs from 20 users, as the `basic` fixture's `hello`.
#[loadbench::scenario(name = "burn", concurrency = 20, count = 500)]
async fn burn(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?.expect_status(200)?;
    Ok(())
}

fn burn_server(alloc_mb: u32, spin_ms: u32) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_burn-server"));
    command.args(["--alloc-mb", &alloc_mb.to_string(), "--spin-ms", &spin_ms.to_string()]);
    command
}

#[test]
fn a_default_target_process_is_started_watched_and_stopped_by_the_bench() {
    let _alone = one_at_a_time();
    let report = loadbench::Harness::new()
        .default_target_process("app", burn_server(64, 2))
        .only("burn")
        .progress(false)
        .run_report()
        .expect("the run");
    loadbench_tests::schema::Schema::RunReport.assert_serializes_valid(&report, "burn, watched");

    let burn = &report.scenarios[0];
    assert_eq!((burn.ok, burn.failed), (500, 0), "{burn:#?}");
    let [app] = burn.watched.as_slice() else { panic!("one watched process: {burn:#?}") };
    assert_eq!(app.name, "app");
    assert!(burn.config.target.as_deref().is_some_and(|t| t.starts_with("http://127.0.0.1:")), "{burn:#?}");
    assert!(app.note.is_none(), "{app:?}");
    // 2 ms of spinning per request, 500 requests: about a second of one core over a run of a few
    // seconds, which a busy machine stretches; a process not measured at all would show 0.
    assert!(app.cpu_avg_percent.is_some_and(|cpu| cpu > 10.0), "{app:?}");
    let mib = app.rss_peak_bytes.expect("RSS") as f64 / (1024.0 * 1024.0);
    assert!((64.0..200.0).contains(&mib), "64 MiB held: {app:?}");
    assert!(!Path::new(&format!("/proc/{}", app.pid)).exists(), "the server outlived the run: {app:?}");

    let table = loadbench::report::table::render(&report);
    assert!(table.contains(&format!("burn: app (pid {}): CPU avg", app.pid)), "{table}");
}

#[test]
fn a_default_target_process_is_not_started_when_another_target_is_given() {
    let _alone = one_at_a_time();
    let server = TestServer::start(Behavior::default());
    let report = loadbench::Harness::new()
        .default_target_process("app", Command::new("/nonexistent/server"))
        .target(server.url())
        .only("burn")
        .progress(false)
        .run_report()
        .expect("the run");
    assert_eq!(report.scenarios[0].ok, 500);
    assert!(report.scenarios[0].watched.is_empty(), "{:?}", report.scenarios[0].watched);
    assert_eq!(server.requests(), 500);
}

#[test]
fn a_default_target_process_that_prints_no_url_is_a_setup_error() {
    let _alone = one_at_a_time();
    let err = loadbench::Harness::new()
        .default_target_process("app", Command::new("true"))
        .only("burn")
        .progress(false)
        .run_report()
        .expect_err("no URL, no run");
    assert!(matches!(err, HarnessError::DefaultTarget(_)), "{err:?}");
    assert_eq!(err.to_string(), "the default target failed to start: `true` exited without printing its URL");
}
