//! The fault table, row by row: each row a misbehaving server run as a user would meet it, with
//! the behaviour loadbench owes that user.

use super::*;

/// Row 1: a port out of range (or any malformed target) is one `error:` line and exit 2,
/// before any load; nothing is sent to port 80.
#[test]
fn row1_malformed_targets_are_refused_before_any_load() {
    let _serial = serial();
    for target in ["http://127.0.0.1:99999/", "http://127.0.0.1:65536/", "ftp://127.0.0.1:8080/", "http:///"] {
        let run = url(&[target, "-c", "2", "-n", "100", "--quiet"]);
        assert_eq!(run.out.code, Some(2), "{target}: {:#?}", run.out);
        let errors: Vec<&str> = run.out.stderr.lines().filter(|l| l.starts_with("error")).collect();
        assert_eq!(errors.len(), 1, "{target}: one error line: {}", run.out.stderr);
        assert!(run.json.is_none(), "{target}: no results for a run that did not happen");
        assert!(run.out.wall < QUICK, "{target}: took {:?}", run.out.wall);
    }
    // Side by side, one bad target stops the run before the good one gets anything.
    let good = TestServer::start(Behavior::default());
    let good_target = format!("a={}/", good.url());
    let run = url(&["/", "--target", &good_target, "--target", "b=http://127.0.0.1:99999/", "-n", "10", "--quiet"]);
    assert_eq!(run.out.code, Some(2), "{:#?}", run.out);
    assert_eq!(good.requests(), 0, "no load before the targets are checked");
}

/// Row 4: `-d 2s` against a server that never answers, with the default 30 s timeout, ends at
/// the duration plus the default grace period (5 s); the requests in flight then are cancelled,
/// not failed.
#[test]
fn row4_a_duration_run_ends_after_its_grace_period() {
    let _serial = serial();
    let server = HostileServer::start(Fault::Silence);
    let run = url(&[&server.url(), "-c", "2", "-d", "2s", "--quiet"]);
    assert_eq!(run.out.code, Some(0), "{:#?}", run.out);
    // 2 s + 5 s, and the binary's start and exit on a busy machine; far from 30 s.
    assert!(run.out.wall < Duration::from_secs(12), "took {:?}", run.out.wall);
    let s = run.scenario();
    assert_eq!(account(s, Some(2)), outcomes(&[("cancelled", 2)]));
    assert_eq!(n(s, "config.grace_ms"), 5_000);
    assert_eq!(s["interrupted"], Value::Bool(false));

    let run = url(&[&server.url(), "-c", "2", "-d", "1s", "--grace", "1s", "--quiet"]);
    assert_eq!(run.out.code, Some(0), "{:#?}", run.out);
    assert!(run.out.wall < Duration::from_secs(6), "took {:?}", run.out.wall);
    let s = run.scenario();
    assert_eq!(account(s, Some(2)), outcomes(&[("cancelled", 2)]));
    assert_eq!(n(s, "config.grace_ms"), 1_000);
}

/// Row 4: a first Ctrl-C stops new iterations and cancels those in flight after the grace period;
/// the results are written, marked interrupted, and the exit code is 130.
#[test]
fn row4_a_first_ctrl_c_cancels_after_the_grace_period() {
    let _serial = serial();
    let server = HostileServer::start(Fault::Silence);
    let dir = tempfile::tempdir().expect("tempdir");
    let mut running = start_url(dir.path(), None, &[&server.url(), "-c", "2", "-d", "60s", "--grace", "1s", "--quiet"]);
    wait_for_connections(&mut running, &server, 2);
    running.signal("INT");
    let signalled = Instant::now();
    let run = finish(running, dir.path());
    let after = signalled.elapsed();
    assert_eq!(run.out.code, Some(130), "{:#?}", run.out);
    // The 1 s grace period, and a busy machine's slack.
    assert!(after < Duration::from_secs(5), "exited {after:?} after the signal");
    let s = run.scenario();
    assert_eq!(s["interrupted"], Value::Bool(true), "{s:#}");
    assert_eq!(account(s, Some(2)), outcomes(&[("cancelled", 2)]));
}

/// Row 4: a second Ctrl-C writes what was gathered so far within a second, marked interrupted.
#[test]
fn row4_a_second_ctrl_c_writes_the_results_at_once() {
    let _serial = serial();
    let server = HostileServer::start(Fault::Silence);
    let dir = tempfile::tempdir().expect("tempdir");
    let mut running = start_url(dir.path(), None, &[&server.url(), "-c", "2", "-d", "60s", "--quiet"]);
    wait_for_connections(&mut running, &server, 2);
    running.signal("INT");
    std::thread::sleep(Duration::from_millis(300));
    running.signal("INT");
    let signalled = Instant::now();
    let run = finish(running, dir.path());
    let after = signalled.elapsed();
    assert_eq!(run.out.code, Some(130), "{:#?}", run.out);
    // "Within a second", with room for a busy machine; the default grace period is 5 s.
    assert!(after < Duration::from_secs(3), "exited {after:?} after the second signal");
    let s = run.scenario();
    assert_eq!(s["interrupted"], Value::Bool(true), "{s:#}");
    account(s, Some(2));
}

/// Row 5: SIGTERM to `cargo loadbench url` is an interruption too: exit 143, `interrupted: true`.
#[test]
fn row5_sigterm_interrupts_with_exit_143() {
    let _serial = serial();
    let server = HostileServer::start(Fault::Silence);
    let dir = tempfile::tempdir().expect("tempdir");
    let mut running = start_url(dir.path(), None, &[&server.url(), "-c", "2", "-d", "60s", "--grace", "1s", "--quiet"]);
    wait_for_connections(&mut running, &server, 2);
    running.signal("TERM");
    let run = finish(running, dir.path());
    assert_eq!(run.out.code, Some(143), "{:#?}", run.out);
    assert!(run.out.wall < Duration::from_secs(8), "took {:?}", run.out.wall);
    let s = run.scenario();
    assert_eq!(s["interrupted"], Value::Bool(true), "{s:#}");
    account(s, Some(2));
}

/// Row 5: the bench binary of a workspace run never outlives `cargo loadbench`, whether it is
/// stopped with SIGTERM, with SIGINT to it alone (as CI runners send), or killed with SIGKILL.
#[test]
fn row5_the_bench_binary_never_outlives_cargo_loadbench() {
    let _serial = serial();
    let manifest = fixture("basic");
    let manifest = manifest.to_str().expect("UTF-8 path");
    // Builds the fixture first (shared with the other end-to-end tests, kept between runs), so
    // the runs below start at once.
    let healthy = TestServer::start(Behavior::default());
    let out = run_fixture("basic", &["hello", "--target", &healthy.url(), "--quiet"]);
    assert_eq!(out.code, Some(0), "{out:#?}");
    for (signal, code) in [("TERM", Some(143)), ("INT", Some(130)), ("KILL", None)] {
        let server = HostileServer::start(Fault::Silence);
        let dir = tempfile::tempdir().expect("tempdir");
        let json = json_path(dir.path());
        let target = server.url();
        // The default grace period: its users' requests never end, so each stop takes 5 s.
        let args = ["--manifest-path", manifest, "--target", &target, "--quiet", "--json"];
        let mut all = args.to_vec();
        all.extend_from_slice(&[json.to_str().expect("UTF-8 path"), "hello"]);
        // Built where the other end-to-end tests build the fixtures, once for all.
        let target_dir = fixture_target_dir();
        let mut running =
            Running::start_with_env(dir.path(), None, &all, &[("CARGO_TARGET_DIR", target_dir.as_os_str())]);
        if !running.wait_for(Duration::from_secs(60), || server.connections() >= 20) {
            panic!("{signal}: the bench binary's 20 users did not connect: {:#?}", running.stop());
        }
        assert_eq!(server.connections(), 20, "{signal}: one connection per user");
        running.signal(signal);
        let out = running.finish(Duration::from_secs(30));
        // Its users' connections close when the bench binary exits (when the server is dropped
        // at the end of a failed test, an orphan's requests fail at once and it ends).
        let gone = Instant::now();
        while server.open() > 0 && gone.elapsed() < QUICK {
            std::thread::sleep(Duration::from_millis(50));
        }
        assert_eq!(server.open(), 0, "{signal}: the bench binary outlived cargo loadbench: {out:#?}");
        assert_eq!(out.code, code, "{signal}: {out:#?}");
        if code.is_some() {
            let json = read_json(dir.path()).unwrap_or_else(|| panic!("{signal}: no JSON: {out:#?}"));
            assert_eq!(json["scenarios"][0]["interrupted"], Value::Bool(true), "{signal}: {json:#}");
        }
    }
}

/// Row 6: a baseline with no successful iteration is refused (exit 2, not saved); `rps` counts
/// successful iterations and the attempt rate is its own figure; baselines with impossible
/// figures are refused before any load.
#[test]
fn row6_throughput_and_baselines_count_successes() {
    let _serial = serial();
    let dir = tempfile::tempdir().expect("tempdir");
    let baselines = dir.path().join("target/loadbench/baselines");

    let run =
        url_in(dir.path(), None, &[&closed_port_url(), "-c", "2", "-n", "50", "--save-baseline", "dead", "--quiet"]);
    assert_eq!(run.out.code, Some(2), "{:#?}", run.out);
    // Says why: the success rate against the documented floor.
    assert!(run.out.stderr.contains("50%"), "says why: {}", run.out.stderr);
    assert!(!baselines.join("dead").exists(), "the baseline was not saved");

    // A quarter of the requests fail: `rps` counts the three quarters that succeed. (Each takes
    // 10 ms, so that the healthy run below is faster beyond any noise of a busy machine.)
    let server =
        TestServer::start(Behavior { fail_every: Some(4), delay: Duration::from_millis(10), ..Behavior::default() });
    let target = server.url();
    let run = url_in(dir.path(), None, &[&target, "-c", "4", "-n", "400", "--quiet", "--save-baseline", "most"]);
    let s = run.scenario();
    assert_eq!(account(s, Some(400)), outcomes(&[("ok", 300), ("status", 100)]));
    let seconds = n(s, "duration_us") as f64 / 1e6;
    let (rps, attempts) = (f(s, "rps"), f(s, "attempts_per_sec"));
    assert!((rps - 300.0 / seconds).abs() <= 0.01 * rps, "rps {rps} is ok / duration ({seconds} s)");
    assert!((attempts - 400.0 / seconds).abs() <= 0.01 * attempts, "attempts_per_sec {attempts}");
    // 75 % success is above the floor: saved.
    assert_eq!(run.out.code, Some(0), "{:#?}", run.out);

    // A healthy run against that baseline (all succeed, faster) has not regressed.
    let healthy = TestServer::start(Behavior::default());
    let run = url_in(
        dir.path(),
        None,
        &[&healthy.url(), "-c", "4", "-n", "400", "--quiet", "--baseline", "most", "--fail-on-regression"],
    );
    assert_eq!(run.out.code, Some(0), "{:#?}", run.out);

    // Impossible figures in a saved baseline: refused, before any request.
    let saved: Value = loadbench_tests::cli::read_json(&baselines.join("most/report.json"));
    type Edit = fn(&mut Value);
    let edits: [(&str, Edit); 2] = [
        ("zero rps with successes", |d| d["scenarios"][0]["rps"] = 0.0.into()),
        ("negative rps", |d| d["scenarios"][0]["rps"] = (-5.0).into()),
    ];
    for (what, edit) in edits {
        let mut bad = saved.clone();
        edit(&mut bad);
        let path = baselines.join("bad/report.json");
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(&path, serde_json::to_string(&bad).expect("JSON")).expect("write");
        let before = healthy.requests();
        let run = url_in(dir.path(), None, &[&healthy.url(), "-n", "10", "--quiet", "--baseline", "bad"]);
        assert_eq!(run.out.code, Some(2), "{what}: {:#?}", run.out);
        assert_eq!(healthy.requests(), before, "{what}: refused before any load");
    }
    // A baseline without any scenario is what `--allow-no-scenarios` saves for a base that had
    // none: it is read, and there is nothing to compare, which passes.
    let mut empty = saved.clone();
    empty["scenarios"] = Value::Array(vec![]);
    let path = baselines.join("empty/report.json");
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
    std::fs::write(&path, serde_json::to_string(&empty).expect("JSON")).expect("write");
    let run = url_in(dir.path(), None, &[&healthy.url(), "-n", "10", "--quiet", "--baseline", "empty"]);
    assert_eq!(run.out.code, Some(0), "{:#?}", run.out);
    assert!(
        run.out.stdout.contains("no baseline: nothing to compare (baseline `empty` holds no scenario)"),
        "{:#?}",
        run.out
    );
}

/// Row 7: a server that closes each keep-alive connection after its response, without saying
/// `Connection: close`: every request that meets the closed connection is retried once on a new
/// one, and counted as a retry, not an error.
#[test]
fn row7_keep_alive_races_are_retried_not_failed() {
    let _serial = serial();
    let server = HostileServer::start(Fault::CloseWithoutNotice);
    let run = url(&[&server.url(), "-c", "50", "-n", "5000", "--timeout", "5s", "--quiet"]);
    assert_eq!(run.out.code, Some(0), "{:#?}", run.out);
    let s = run.scenario();
    assert_eq!(account(s, Some(5000)), outcomes(&[("ok", 5000)]));
    let retries = n(s, "http.retries");
    assert!(retries > 0 && retries <= 5000, "http.retries = {retries}");
    assert_eq!(server.requests(), 5000, "each request answered once");
}

/// Row 8: under `ulimit -n 256`, 150 connections fit: the estimate counts what the generator
/// itself needs.
#[test]
fn row8_150_users_fit_in_256_open_files() {
    let _serial = serial();
    let server = TestServer::start(Behavior { delay: Duration::from_millis(5), ..Behavior::default() });
    let dir = tempfile::tempdir().expect("tempdir");
    let run = url_in(dir.path(), Some("ulimit -n 256"), &[&server.url(), "-c", "150", "-n", "600", "--quiet"]);
    assert_eq!(run.out.code, Some(0), "{:#?}", run.out);
    assert_eq!(account(run.scenario(), Some(600)), outcomes(&[("ok", 600)]));
    assert_eq!(server.connections(), 150);
}

/// Row 9: an io error keeps its OS cause, in the JSON's causes and in the table under `--quiet`.
#[test]
fn row9_a_reset_names_its_os_cause() {
    let _serial = serial();
    let server = HostileServer::start(Fault::ResetMidBody);
    let run = url(&[&server.url(), "-c", "1", "-n", "3", "--quiet"]);
    assert_eq!(run.out.code, Some(0), "{:#?}", run.out);
    assert_eq!(account(run.scenario(), Some(3)), outcomes(&[("io", 3)]));
    let causes = &run.scenario()["causes"];
    let count = causes.pointer("/top/0/count").and_then(Value::as_u64);
    assert_eq!((causes["top"][0]["kind"].as_str(), count), (Some("io"), Some(3)), "{causes:#}");
    let message = causes["top"][0]["message"].as_str().unwrap_or_default();
    assert!(message.contains("Connection reset by peer (os error 104)"), "{causes:#}");
    assert_eq!((causes["top"].as_array().map(Vec::len), n(causes, "others")), (Some(1), 0), "{causes:#}");
    let line = format!("GET /: causes: 3 × io: {message}");
    assert!(run.out.stdout.lines().any(|l| l == line), "no {line:?} in\n{}", run.out.stdout);
    assert!(!run.out.stderr.contains("first io error"), "{}", run.out.stderr);
}

/// Row 10: progress lines in CI show the counts as of each line.
#[test]
fn row10_progress_lines_show_the_counts_of_their_step() {
    let _serial = serial();
    // Failures fast and all along: a server that answers 500 (a closed port would stop the run
    // after a few hundred refused connections).
    let server = HostileServer::start(Fault::ServerErrors);
    let run = url(&[&server.url(), "-c", "2", "-n", "2000"]);
    assert_eq!(run.out.code, Some(0), "{:#?}", run.out);
    let mut steps = 0;
    for line in run.out.stderr.lines().filter(|l| l.contains("% (")) {
        // `GET /: 10% (200 of 2000 iterations, 200 failed, 0.1s)`
        let numbers: Vec<u64> = line
            .split(|c: char| !c.is_ascii_digit())
            .filter(|w| !w.is_empty())
            .filter_map(|w| w.parse().ok())
            .collect();
        let [_percent, done, _total, failed, ..] = numbers[..] else { panic!("{line}") };
        assert!(failed <= done, "a line counts no more failures than iterations done: {line}");
        steps += 1;
    }
    assert_eq!(steps, 9, "one line per 10 % step: {}", run.out.stderr);
}

/// Row 10: result and baseline files are created with the umask's mode.
#[test]
fn row10_files_follow_the_umask() {
    use std::os::unix::fs::PermissionsExt;
    let _serial = serial();
    let server = TestServer::start(Behavior::default());
    let dir = tempfile::tempdir().expect("tempdir");
    let run = url_in(dir.path(), Some("umask 022"), &[&server.url(), "-n", "10", "--quiet", "--save-baseline", "main"]);
    assert_eq!(run.out.code, Some(0), "{:#?}", run.out);
    let baseline = dir.path().join("target/loadbench/baselines/main/report.json");
    for file in [json_path(dir.path()), baseline] {
        let mode = std::fs::metadata(&file).expect("written").permissions().mode() & 0o777;
        assert_eq!(mode, 0o644, "{}: mode {mode:o}", file.display());
    }
}

/// Row 10: an output path that cannot be written fails before the run, and a duration under
/// 1 ms is refused; neither sends a request.
#[test]
fn row10_bad_outputs_and_durations_fail_before_any_load() {
    let _serial = serial();
    let server = TestServer::start(Behavior::default());
    let target = server.url();
    let cases: [&[&str]; 4] = [
        &[&target, "-n", "1000", "--json", "/proc/x.json"],
        &[&target, "-d", "1ns"],
        &[&target, "-d", "999us"],
        &[&target, "-n", "10", "--timeout", "1ns"],
    ];
    for args in cases {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut all = vec!["url"];
        all.extend_from_slice(args);
        all.push("--quiet");
        let out = Running::start(dir.path(), None, &all).finish(DEADLINE);
        assert_eq!(out.code, Some(2), "{args:?}: {out:#?}");
        assert_eq!(out.stderr.lines().filter(|l| l.starts_with("error")).count(), 1, "{args:?}: {}", out.stderr);
        assert_eq!(server.requests(), 0, "{args:?}: no load");
    }
}

/// Waits until `server` has accepted `count` connections (the generator's users are on); fails
/// with what the child printed if it ended first.
#[track_caller]
fn wait_for_connections(running: &mut Running, server: &HostileServer, count: u64) {
    if !running.wait_for(QUICK, || server.connections() >= count) {
        panic!("the generator's {count} users did not connect: {:#?}", running.stop());
    }
}
