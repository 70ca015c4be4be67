//! Signals and the grace period, end to end: `cargo loadbench` (and the bench binary it starts)
//! against a server on 127.0.0.1 that accepts connections and never answers, so that every
//! iteration is in flight when the signal comes.
//!
//! Each test sends its signal once the server has seen the scenario's connections (the bench
//! binary is loading it), and asserts what a user sees: the exit code, the JSON, how long it
//! took (generous bounds: the machine may be slow and busy), and that no bench binary is left.
//! Signals are sent with `nix::sys::signal::kill`.

// A failed expectation is a failed test; `expect` says which.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::io::{ErrorKind, Read};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use loadbench_tests::child::Running;
use loadbench_tests::cli::{cargo_loadbench_path, fixture, fixture_target_dir, read_report, scenario};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

/// `hello` in the `basic` fixture: its virtual users, so its connections.
const HELLO_USERS: usize = 20;

/// The bound on anything that should be quick: generous, for a slow and busy machine.
const PATIENCE: Duration = Duration::from_secs(20);

/// A server that accepts every connection and never answers; it keeps them open to tell when
/// the client closes them.
struct Silent {
    url: String,
    connections: Arc<Mutex<Vec<TcpStream>>>,
}

impl Silent {
    fn start() -> Silent {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("address"));
        let connections = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&connections);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let _ = stream.set_nonblocking(true);
                kept.lock().unwrap().push(stream);
            }
        });
        Silent { url, connections }
    }

    fn accepted(&self) -> usize {
        self.connections.lock().unwrap().len()
    }

    /// Connections the client still holds open: reading what it sent finds neither EOF nor a
    /// reset.
    fn open(&self) -> usize {
        let mut buf = [0; 4096];
        let still_open = |s: &mut TcpStream| loop {
            match s.read(&mut buf) {
                Ok(0) => return false,
                Ok(_) => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        };
        self.connections.lock().unwrap().iter_mut().map(still_open).filter(|open| *open).count()
    }
}

/// Waits until `done` holds, checking every 20 ms, for at most `limit`; whether it did.
fn wait_for(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    done()
}

/// `cargo loadbench ARGS…` started (not waited for), as `tests/src/cli.rs` runs it.
fn spawn(args: &[&str]) -> Child {
    Command::new(cargo_loadbench_path())
        .arg("loadbench")
        .args(args)
        .env("CARGO_TARGET_DIR", fixture_target_dir())
        .env_remove(loadbench::cli::TARGET_ENV)
        .env_remove(loadbench::cli::OUTPUT_ENV)
        .env_remove("GITHUB_STEP_SUMMARY")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start cargo-loadbench")
}

/// `cargo loadbench` on the `basic` fixture's `hello` (20 users, 500 requests) against `server`,
/// writing `json`, with `extra` flags; returned once the bench binary has opened its 20
/// connections, with the bench binary's pid.
fn start_hello(server: &Silent, json: &Path, extra: &[&str]) -> (Child, u32) {
    let manifest = fixture("basic");
    let mut args = vec![
        "--manifest-path",
        manifest.to_str().unwrap(),
        "--exact",
        "hello",
        "--target",
        &server.url,
        "--quiet",
        "--json",
        json.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let mut parent = spawn(&args);
    // The first run builds the fixture in release mode: minutes on a slow machine.
    let loading = wait_for(Duration::from_secs(600), || {
        server.accepted() >= HELLO_USERS || parent.try_wait().ok().flatten().is_some()
    });
    assert!(loading && server.accepted() >= HELLO_USERS, "the bench binary never loaded the server: {}", {
        let _ = parent.kill();
        stderr_of(parent)
    });
    let child = children_of(parent.id());
    assert_eq!(child.len(), 1, "one bench binary under cargo loadbench: {child:?}");
    (parent, child[0])
}

/// The processes whose parent is `pid`, from /proc.
fn children_of(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Some(id) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        if let Some((_, state_ppid)) = stat(id)
            && state_ppid.1 == pid
        {
            found.push(id);
        }
    }
    found
}

/// Process `pid`'s state letter and parent, from /proc/PID/stat; `None` once it is gone.
fn stat(pid: u32) -> Option<(u32, (char, u32))> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid …`; comm may hold spaces and parentheses: split after the last `)`.
    let rest = &text[text.rfind(')')? + 2..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let ppid = fields.next()?.parse().ok()?;
    Some((pid, (state, ppid)))
}

/// Whether process `pid` has exited (gone, or a zombie waiting to be reaped).
fn gone(pid: u32) -> bool {
    stat(pid).is_none_or(|(_, (state, _))| state == 'Z' || state == 'X')
}

fn signal(pid: u32, signal: Signal) {
    kill(Pid::from_raw(i32::try_from(pid).unwrap()), signal).expect("send the signal");
}

/// Waits for `child` to exit within `limit`; its exit code (`None`: killed) and stderr.
fn finish(mut child: Child, limit: Duration) -> (Option<i32>, String) {
    let exited = wait_for(limit, || child.try_wait().ok().flatten().is_some());
    if !exited {
        let _ = child.kill();
        panic!("cargo loadbench did not exit within {limit:?}: {}", stderr_of(child));
    }
    let status = child.wait().expect("exit status");
    (status.code(), stderr_of(child))
}

fn stderr_of(child: Child) -> String {
    child.wait_with_output().map(|o| String::from_utf8_lossy(&o.stderr).into_owned()).unwrap_or_default()
}

/// SIGINT, SIGTERM or SIGHUP to `cargo loadbench` alone (as CI runners and `timeout` send it, not to
/// the process group): the bench binary stops, the in-flight requests are cancelled after the
/// grace period, the results say `interrupted: true`, and the exit code names the signal.
fn a_signal_to_the_parent_alone(sent: Signal, code: i32) {
    let server = Silent::start();
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("results.json");
    let (parent, bench) = start_hello(&server, &json, &["--grace", "1s"]);
    let sent_at = Instant::now();
    signal(parent.id(), sent);
    let (exit, stderr) = finish(parent, PATIENCE);
    let took = sent_at.elapsed();
    assert_eq!(exit, Some(code), "{stderr}");
    assert!(took >= Duration::from_secs(1), "the grace period was not given: {took:?}");
    assert!(gone(bench), "the bench binary {bench} outlived cargo loadbench");
    assert!(wait_for(PATIENCE, || server.open() == 0), "{} connections left open", server.open());

    let report = read_report(&json);
    assert!(report.interrupted);
    let hello = scenario(&report, "hello");
    assert!(hello.interrupted, "{hello:#?}");
    // Every user was waiting for an answer: each request was cancelled, none failed.
    assert_eq!((hello.ok, hello.failed, hello.cancelled), (0, 0, HELLO_USERS as u64), "{hello:#?}");
    assert_eq!(hello.iterations, hello.ok + hello.failed + hello.cancelled);
    assert_eq!(hello.config.grace_ms, 1_000);
}

#[test]
fn sigterm_to_cargo_loadbench_stops_its_bench_binary_and_exits_143() {
    a_signal_to_the_parent_alone(Signal::SIGTERM, 143);
}

#[test]
fn sigint_to_cargo_loadbench_alone_marks_the_results_interrupted_and_exits_130() {
    a_signal_to_the_parent_alone(Signal::SIGINT, 130);
}

/// A closed terminal or ssh session sends SIGHUP: handled as SIGTERM (the results are written,
/// marked interrupted, with what was gathered), and the exit code is 129 (128 + SIGHUP).
#[test]
fn sighup_to_cargo_loadbench_keeps_the_partial_results_and_exits_129() {
    a_signal_to_the_parent_alone(Signal::SIGHUP, 129);
}

/// `text` quoted for `sh`.
fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// The terminal itself closing, as an ssh session's end closes it: `cargo loadbench` runs, its
/// progress on a pseudo-terminal (`script`), under a shell that leads the terminal's session and
/// passes SIGHUP on to its job, as a login shell does. Killing `script` closes the terminal: the
/// kernel hangs it up (every later write to it fails, EIO) and sends SIGHUP to the shell. The
/// results are still written, marked interrupted, with what was gathered, and the exit code is 129.
/// (Through the shell, a death by SIGHUP reads as 129 too: the JSON, which only a handled
/// SIGHUP writes, is what tells them apart.)
#[test]
fn a_closed_terminal_keeps_the_partial_results_and_exits_129() {
    let server = Silent::start();
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("results.json");
    let exit = dir.path().join("exit");
    let shell = dir.path().join("login.sh");
    // The session's shell: passes SIGHUP on to its job, then records how the job ended.
    std::fs::write(
        &shell,
        "\"$@\" & job=$!\ntrap 'kill -HUP $job' HUP\nwhile kill -0 $job 2>/dev/null; do wait $job; code=$?; done\n\
         echo $code > \"$EXIT\"\n",
    )
    .expect("write the shell script");
    let manifest = fixture("basic");
    let command = [
        "sh",
        shell.to_str().unwrap(),
        cargo_loadbench_path().to_str().unwrap(),
        "loadbench",
        "--manifest-path",
        manifest.to_str().unwrap(),
        "--exact",
        "hello",
        "--target",
        &server.url,
        "--grace",
        "1s",
        "--json",
        json.to_str().unwrap(),
    ]
    .map(quoted)
    .join(" ");
    let mut terminal = Command::new("script")
        .args(["--quiet", "--flush", "--return", "--command", &command])
        .arg(dir.path().join("typescript"))
        .env("CARGO_TARGET_DIR", fixture_target_dir())
        .env("EXIT", &exit)
        .env_remove(loadbench::cli::TARGET_ENV)
        .env_remove(loadbench::cli::OUTPUT_ENV)
        .env_remove("GITHUB_STEP_SUMMARY")
        .env_remove("CI")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start script (util-linux)");
    let loading = wait_for(Duration::from_secs(600), || {
        server.accepted() >= HELLO_USERS || terminal.try_wait().ok().flatten().is_some()
    });
    assert!(loading && server.accepted() >= HELLO_USERS, "the bench binary never loaded the server");
    // The terminal's end.
    terminal.kill().expect("kill script");
    let _ = terminal.wait();
    let code = || std::fs::read_to_string(&exit).unwrap_or_default().trim().to_owned();
    assert!(wait_for(PATIENCE, || !code().is_empty()), "the shell never saw cargo loadbench end");
    assert_eq!(code(), "129");
    assert!(json.exists(), "no results written after the terminal closed");
    let report = read_report(&json);
    assert!(report.interrupted);
    let hello = scenario(&report, "hello");
    assert!(hello.interrupted, "{hello:#?}");
    assert_eq!((hello.ok, hello.failed, hello.cancelled), (0, 0, HELLO_USERS as u64), "{hello:#?}");
    assert!(wait_for(PATIENCE, || server.open() == 0), "{} connections left open", server.open());
}

/// Under `nohup` (SIGHUP ignored from the start) SIGHUP is left ignored: the run goes on to its
/// end, not interrupted, and exits 0.
#[test]
fn a_run_started_with_sighup_ignored_goes_on_after_it() {
    let server = Silent::start();
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("results.json");
    let url = format!("{}/", server.url);
    let mut run = Running::start(
        dir.path(),
        Some("trap '' HUP"),
        &[
            "url",
            &url,
            "-c",
            "2",
            "-d",
            "2s",
            "--grace",
            "200ms",
            "--quiet",
            "--allow-failures",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    assert!(run.wait_for(PATIENCE, || server.accepted() >= 2), "the run never loaded the server");
    run.signal("HUP");
    let finished = run.finish(PATIENCE);
    assert_eq!(finished.code, Some(0), "{finished:#?}");
    let report = read_report(&json);
    assert!(!report.interrupted);
    // Its duration, then the grace period: not cut short by the signal.
    let ran = Duration::from_micros(report.scenarios[0].duration_us);
    assert!(ran >= Duration::from_millis(2_000), "{ran:?}");
    assert_eq!(report.scenarios[0].cancelled, 2, "{:#?}", report.scenarios[0]);
}

#[test]
fn a_second_signal_reports_what_was_gathered_within_a_second() {
    let server = Silent::start();
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("results.json");
    // A grace period far longer than the test: only the second signal can end the run.
    let (parent, bench) = start_hello(&server, &json, &["--grace", "10m"]);
    signal(parent.id(), Signal::SIGINT);
    std::thread::sleep(Duration::from_millis(300));
    let second = Instant::now();
    signal(parent.id(), Signal::SIGINT);
    let (exit, stderr) = finish(parent, PATIENCE);
    // About a second; a busy machine gets some slack.
    assert!(second.elapsed() < Duration::from_secs(5), "{:?} after the second signal", second.elapsed());
    assert_eq!(exit, Some(130), "{stderr}");
    assert!(gone(bench));
    let report = read_report(&json);
    let hello = scenario(&report, "hello");
    assert!(hello.interrupted);
    assert_eq!((hello.ok, hello.failed, hello.cancelled), (0, 0, HELLO_USERS as u64), "{hello:#?}");
}

#[test]
fn a_bench_binary_dies_with_cargo_loadbench_killed_outright() {
    let server = Silent::start();
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("results.json");
    let (mut parent, bench) = start_hello(&server, &json, &[]);
    signal(parent.id(), Signal::SIGKILL);
    let _ = parent.wait();
    let killed = Instant::now();
    assert!(wait_for(PATIENCE, || gone(bench)), "the bench binary {bench} outlived cargo loadbench");
    // Within about 2 s; a busy machine gets some slack.
    assert!(killed.elapsed() < Duration::from_secs(10), "{:?}", killed.elapsed());
    assert!(wait_for(PATIENCE, || server.open() == 0), "{} connections left open", server.open());
}

#[test]
fn a_duration_run_ends_at_its_duration_plus_the_grace_period() {
    let server = Silent::start();
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("results.json");
    let start = Instant::now();
    let child = spawn(&[
        "url",
        &format!("{}/", server.url),
        "-c",
        "4",
        "-d",
        "1s",
        "--grace",
        "500ms",
        "--quiet",
        // Nothing answers, so nothing succeeds: the run's end is judged here, not its verdict.
        "--allow-failures",
        "--json",
        json.to_str().unwrap(),
    ]);
    // Without the grace period it would wait for the 30 s timeout; the process's own start and
    // end get slack on a busy machine.
    let (exit, stderr) = finish(child, Duration::from_secs(25));
    let took = start.elapsed();
    assert_eq!(exit, Some(0), "{stderr}");
    assert!(took >= Duration::from_millis(1_500), "{took:?}");
    let report = read_report(&json);
    assert!(!report.interrupted);
    let run = &report.scenarios[0];
    // The run itself: its duration, then the grace period, then the cancel.
    let ran = Duration::from_micros(run.duration_us);
    assert!(ran >= Duration::from_millis(1_500) && ran < Duration::from_secs(6), "{ran:?}");
    assert!(!run.interrupted);
    assert_eq!((run.ok, run.failed, run.cancelled, run.iterations), (0, 0, 4, 4), "{run:#?}");
    assert_eq!(run.config.grace_ms, 500);
    assert!(run.latency_us.is_none(), "a cancelled request has no latency");
}

/// In the open model the scheduler sleeps until the next arrival is due: a stop must end that
/// sleep at once, and the arrival in flight is cancelled after the grace period (here, in this
/// process, through the flag a first Ctrl-C sets).
#[test]
fn a_stop_ends_a_slow_schedule_at_once_and_cancels_what_is_in_flight() {
    use loadbench::Method;
    use loadbench::load::Load;
    use loadbench::oneshot::{OneShot, Request};
    use std::sync::atomic::{AtomicBool, Ordering};

    let server = Silent::start();
    let stop = Arc::new(AtomicBool::new(false));
    let run = OneShot::new(Request::new(Method::GET, &format!("{}/", server.url)).expect("request"), Load::Count(5))
        .concurrency(2)
        // One arrival now, the next in a minute.
        .rate(Some("1/m".parse().expect("rate")))
        .grace(Duration::from_millis(300))
        .progress(false)
        .stop_flag(Arc::clone(&stop));
    let flag = Arc::clone(&stop);
    let accepted = Arc::clone(&server.connections);
    std::thread::spawn(move || {
        // Once the first arrival reached the server.
        let _ = wait_for(PATIENCE, || !accepted.lock().unwrap().is_empty());
        flag.store(true, Ordering::SeqCst);
    });
    let start = Instant::now();
    let report = run.run();
    assert!(start.elapsed() < Duration::from_secs(10), "{:?}", start.elapsed());
    assert!(report.interrupted);
    assert_eq!((report.ok, report.failed, report.cancelled, report.iterations), (0, 0, 1, 1), "{report:#?}");
}
