// Over 500 lines because each test is a whole run of a fixture crate, sharing these helpers.
//! End-to-end tests of `cargo loadbench`: the real binary builds the fixture crates in
//! `fixtures/` (each a user's crate with its own workspace) and runs their scenarios against a
//! `TestServer`, and the tests compare its table and JSON with what the server saw.
//!
//! - `fixtures/basic`: one bench target with two scenarios.
//! - `fixtures/mixed`: a working bench target, one that dies mid-run, one that is not a
//!   loadbench bench, and a minute-long one for the Ctrl-C test.
//! - `fixtures/no-loadbench`: no loadbench bench target at all (never built).
//! - `fixtures/broken`: a bench target with a type error.
//! - `fixtures/mistakes`: scenarios in a bench target without `harness = false`, and in one
//!   without `loadbench::main!()`.
//!
//! The fixtures are built in release mode into `target/fixtures`, shared by every test and kept
//! between runs; the first run of this file therefore takes about a minute. Baselines,
//! thresholds and output formats are tested in `gate.rs`.

// A broken test environment (cargo missing, a fixture that does not build) should fail loudly.
#![allow(clippy::expect_used)]

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use loadbench_tests::cli::{
    Output, cargo_loadbench, cargo_loadbench_in, cargo_loadbench_path, cargo_loadbench_with_env, fixture,
    fixture_target_dir, read_report, row, run_fixture, scenario,
};
use loadbench_tests::{Behavior, TestServer, closed_port_url};

/// `cargo loadbench --manifest-path fixtures/basic/Cargo.toml ARGS…`.
fn run_basic(args: &[&str]) -> Output {
    run_fixture("basic", args)
}

#[test]
fn runs_every_scenario_and_writes_json() {
    let server = TestServer::start(Behavior::default());
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("out.json");
    let out = run_basic(&["--target", &server.url(), "--json", json.to_str().expect("UTF-8 path"), "--quiet"]);

    assert_eq!(out.code, Some(0), "{out:#?}");
    assert_eq!(row(&out.stdout, "hello")[1..3], ["500", "0"], "{}", out.stdout);
    assert_eq!(row(&out.stdout, "status_check")[1..3], ["100", "0"], "{}", out.stdout);

    let report = read_report(&json);
    assert_eq!(report.scenarios.len(), 2);
    for (name, count) in [("hello", 500), ("status_check", 100)] {
        let s = scenario(&report, name);
        assert_eq!((s.iterations, s.ok, s.failed), (count, count, 0), "{s:#?}");
        assert_eq!(s.package.as_deref(), Some("basic"));
        assert_eq!(s.bench.as_deref(), Some("api"));
        assert_eq!(s.config.target.as_deref(), Some(server.url().as_str()));
        assert_eq!(s.config.count, Some(count));
        assert!(s.setup_error.is_none() && !s.interrupted, "{s:#?}");
    }
    assert_eq!(server.requests(), 600, "requests the server received");
}

#[test]
fn a_filter_runs_only_matching_scenarios() {
    let server = TestServer::start(Behavior::default());
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("out.json");
    let out = run_basic(&["hello", "--target", &server.url(), "--json", json.to_str().expect("UTF-8 path")]);

    assert_eq!(out.code, Some(0), "{out:#?}");
    assert_eq!(row(&out.stdout, "hello")[1], "500");
    // stderr is not a terminal here, so progress comes as one plain line per 10 %, then a total.
    let progress: Vec<&str> = out.stderr.lines().filter(|l| l.starts_with("hello: ")).collect();
    assert_eq!(progress.len(), 10, "{}", out.stderr);
    for (step, line) in (1..10).zip(&progress) {
        let expected = format!("hello: {}% ({} of 500 iterations, 0 failed, ", step * 10, step * 50);
        assert!(line.starts_with(&expected), "{line:?} should start with {expected:?}");
    }
    assert!(progress[9].starts_with("hello: done (500 iterations, 0 failed, "), "{}", progress[9]);
    assert!(!out.stdout.contains("status_check"), "{}", out.stdout);
    let report = read_report(&json);
    let names: Vec<&str> = report.scenarios.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["hello"]);
    assert_eq!(server.requests(), 500);
}

#[test]
fn list_shows_scenarios_without_sending_requests() {
    let server = TestServer::start(Behavior::default());
    let out = run_basic(&["--list", "--target", &server.url()]);

    assert_eq!(out.code, Some(0), "{out:#?}");
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{}", out.stdout);
    assert!(lines[0].starts_with("basic/api: hello — concurrency 20, count 500"), "{}", out.stdout);
    assert!(lines[1].starts_with("basic/api: status_check — concurrency 5, count 100"), "{}", out.stdout);
    assert!(lines.iter().all(|l| l.ends_with(&format!("target {}", server.url()))), "{}", out.stdout);
    assert_eq!(server.requests(), 0);
}

#[test]
fn loadbench_scale_reduces_every_scenario_and_says_so() {
    let server = TestServer::start(Behavior::default());
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("out.json");
    let manifest = fixture("basic");
    let args = [
        "--manifest-path",
        manifest.to_str().expect("UTF-8 path"),
        "--target",
        &server.url(),
        "--json",
        json.to_str().expect("UTF-8 path"),
        "--quiet",
    ];
    let out = cargo_loadbench_with_env(&args, &[(loadbench::cli::SCALE_ENV, "0.1".as_ref())]);

    assert_eq!(out.code, Some(0), "{out:#?}");
    let report = read_report(&json);
    // hello: 20 users, 500 iterations; status_check: 5 users (0.5, rounded up), 100 iterations.
    for (name, users, count) in [("hello", 2, 50), ("status_check", 1, 10)] {
        let s = scenario(&report, name);
        assert_eq!((s.config.concurrency, s.config.count, s.config.scale), (users, Some(count), Some(0.1)), "{s:#?}");
        assert_eq!((s.iterations, s.ok), (count, count), "{s:#?}");
        assert!(out.stdout.contains(&format!("{name}: reduced to 0.1 of its declared load")), "{}", out.stdout);
    }
    assert_eq!(server.requests(), 60, "requests the server received");
}

#[test]
fn a_bad_loadbench_scale_is_a_usage_error() {
    let server = TestServer::start(Behavior::default());
    let manifest = fixture("basic");
    let args = ["--manifest-path", manifest.to_str().expect("UTF-8 path"), "--target", &server.url()];
    let out = cargo_loadbench_with_env(&args, &[(loadbench::cli::SCALE_ENV, "2".as_ref())]);

    assert_eq!(out.code, Some(2), "{out:#?}");
    assert!(
        out.errors()
            .contains(&"error: LOADBENCH_SCALE: `2` is not a scale: give a number above 0 and at most 1, such as 0.01"),
        "{out:#?}"
    );
    assert_eq!(server.requests(), 0);
}

#[test]
fn a_filter_matching_nothing_is_a_usage_error() {
    let server = TestServer::start(Behavior::default());
    let out = run_basic(&["nomatch", "--target", &server.url()]);

    assert_eq!(out.code, Some(2), "{out:#?}");
    assert_eq!(out.errors(), ["error: no scenario matches `nomatch`; available: hello, status_check"], "{out:#?}");
    assert_eq!(out.stdout, "");
    assert_eq!(server.requests(), 0);
}

#[test]
fn an_unknown_flag_is_a_usage_error() {
    let out = cargo_loadbench(&["--frobnicate"]);
    assert_eq!(out.code, Some(2), "{out:#?}");
    assert_eq!(out.stderr.lines().count(), 1, "one line: {out:#?}");
    assert!(out.errors().first().is_some_and(|l| l.contains("'--frobnicate'")), "{out:#?}");
}

#[test]
fn format_flags_that_do_not_exist_name_the_ones_that_do() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (args, hint) in [
        (&["--markdown"][..], "error: there is no `--markdown` flag: write the results to a file with `-o results.md`"),
        (&["--junit"], "error: there is no `--junit` flag: write the results to a file with `-o report.xml`"),
        (
            &["url", "http://127.0.0.1:1/", "--html"],
            "error: there is no `--html` flag: write the results to a file with `-o report.html`",
        ),
    ] {
        let out = cargo_loadbench_in(dir.path(), args);
        assert_eq!(out.code, Some(2), "{args:?}: {out:#?}");
        assert_eq!(out.stderr.lines().count(), 1, "{args:?}: one line: {out:#?}");
        assert!(out.stderr.starts_with(hint), "{args:?}: {out:#?}");
        let format = args.iter().find_map(|a| a.strip_prefix("--")).unwrap_or_default();
        assert!(out.stderr.contains(&format!("or print them with `--format {format}`")), "{args:?}: {out:#?}");
    }
}

#[test]
fn a_bad_format_lists_the_formats() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = cargo_loadbench_in(dir.path(), &["--format", "bogus"]);
    assert_eq!(out.code, Some(2), "{out:#?}");
    assert_eq!(
        out.stderr,
        "error: invalid value 'bogus' for '--format <FORMAT>': expected one of table, json, csv, markdown, junit, \
         html (see --help)\n",
        "{out:#?}"
    );
}

#[test]
fn help_is_a_command() {
    // Outside a workspace: were `help` a filter, it would be refused for want of a Cargo.toml.
    let dir = tempfile::tempdir().expect("tempdir");
    let out = cargo_loadbench_in(dir.path(), &["help"]);
    assert_eq!((out.code, out.stderr.as_str()), (Some(0), ""), "{out:#?}");
    assert!(out.stdout.contains("Usage: cargo loadbench [OPTIONS] [FILTER]... [COMMAND]"), "{out:#?}");
    assert!(out.stdout.contains("Exit codes:"), "{out:#?}");

    let out = cargo_loadbench_in(dir.path(), &["help", "url"]);
    assert_eq!((out.code, out.stderr.as_str()), (Some(0), ""), "{out:#?}");
    assert!(out.stdout.contains("Usage: cargo loadbench url [OPTIONS] <URL>"), "{out:#?}");
    assert!(out.stdout.contains("(http:// or https://)") && !out.stdout.contains("http:// only"), "{out:#?}");
}

#[test]
fn a_missing_manifest_is_named() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("nowhere").join("Cargo.toml");
    let out = cargo_loadbench(&["--manifest-path", missing.to_str().expect("UTF-8 path")]);
    assert_eq!(out.code, Some(2), "{out:#?}");
    assert_eq!(out.errors(), [format!("error: manifest not found: {}", missing.display())], "{out:#?}");
}

#[test]
fn a_workspace_without_loadbench_benches_is_a_usage_error() {
    let manifest = fixture("no-loadbench");
    let out = cargo_loadbench(&["--manifest-path", manifest.to_str().expect("UTF-8 path")]);
    assert_eq!(out.code, Some(2), "{out:#?}");
    let root = manifest.parent().expect("fixture dir").canonicalize().expect("fixture exists");
    assert_eq!(
        out.errors(),
        [format!("error: no bench targets that depend on loadbench-runtime in {}", root.display())],
        "{out:#?}"
    );
}

#[test]
fn an_unreachable_target_fails_every_iteration_with_connect_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("out.json");
    let out = run_basic(&["--target", &closed_port_url(), "--json", json.to_str().expect("UTF-8 path"), "--quiet"]);

    // Request errors are results, but a run none of whose iterations succeeded measured nothing:
    // it fails, one line per scenario.
    assert_eq!(out.code, Some(1), "{out:#?}");
    let report = read_report(&json);
    for (name, count) in [("hello", 500), ("status_check", 100)] {
        let s = scenario(&report, name);
        // Nothing listens: a run stops after a few hundred refused connects; every iteration
        // asked for is either failed or not started.
        let run = s.iterations;
        assert_eq!((s.ok, s.failed, run + s.not_started), (0, run, count), "{s:#?}");
        assert_eq!(s.errors.connect, run, "{s:#?}");
        assert_eq!(s.errors.total(), run, "only connect errors: {s:#?}");
        assert!(s.latency_us.is_none(), "no latency without a success");
        let failed = loadbench::report::units::thousands(run);
        assert!(
            out.stdout.contains(&format!("{name}: {failed} of {failed} iterations failed: {failed} × connect;")),
            "{}",
            out.stdout
        );
        assert!(
            out.errors().iter().any(|l| l.starts_with(&format!("error: {name}: no iteration succeeded"))),
            "{out:#?}"
        );
    }
}

#[test]
fn a_dying_binary_costs_only_its_own_scenarios() {
    let server = TestServer::start(Behavior::default());
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("out.json");
    let manifest = fixture("mixed");
    let out = cargo_loadbench(&[
        "--manifest-path",
        manifest.to_str().expect("UTF-8 path"),
        "--target",
        &server.url(),
        "--json",
        json.to_str().expect("UTF-8 path"),
        "--quiet",
        // Everything but the minute-long `soak`.
        "ping",
        "boom",
    ]);

    assert_eq!(out.code, Some(3), "{out:#?}");
    // The foreign bench target is noted once and otherwise left alone.
    let skipped: Vec<&str> = out.stderr.lines().filter(|l| l.contains("skipped")).collect();
    assert_eq!(skipped, ["note: mixed/plain: skipped: not a loadbench target"], "{out:#?}");
    assert!(!out.stdout.contains("nothing to see here"), "{}", out.stdout);

    // Several bench targets ran, so the table names each scenario with its target.
    assert_eq!(row(&out.stdout, "api/ping")[1..3], ["10", "0"], "{}", out.stdout);
    assert_eq!(row(&out.stdout, "crash/boom")[1], "did not run", "{}", out.stdout);
    assert!(
        out.stdout.contains("crash/boom: did not run: its bench binary failed (exit status: 70)"),
        "{}",
        out.stdout
    );

    let report = read_report(&json);
    let ping = scenario(&report, "ping");
    assert_eq!((ping.iterations, ping.ok), (10, 10), "{ping:#?}");
    let boom = scenario(&report, "boom");
    assert_eq!((boom.package.as_deref(), boom.bench.as_deref()), (Some("mixed"), Some("crash")));
    assert!(boom.setup_error.as_deref().is_some_and(|e| e.contains("70")), "{boom:#?}");
    assert_eq!(boom.config.target.as_deref(), Some(server.url().as_str()));
    assert_eq!(server.requests(), 10);
}

#[test]
fn progress_numbers_the_scenarios_of_the_whole_run_across_bench_binaries() {
    let server = TestServer::start(Behavior::default());
    let manifest = fixture("mixed");
    // Two bench binaries, one scenario each; not --quiet, and stderr is a pipe: plain lines.
    let out = cargo_loadbench(&[
        "--manifest-path",
        manifest.to_str().expect("UTF-8 path"),
        "--target",
        &server.url(),
        "ping",
        "boom",
    ]);
    assert_eq!(out.code, Some(3), "{out:#?}");
    // `ping` runs alone in its binary, and still says it is one of the run's two.
    let start = out.stderr.lines().find(|l| l.ends_with("] ping: running (10 iterations, 2 users)"));
    assert!(
        start.is_some_and(|l| l == "[1/2] ping: running (10 iterations, 2 users)"
            || l == "[2/2] ping: running (10 iterations, 2 users)"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("ping: done (10 iterations, 0 failed, "), "{}", out.stderr);
}

#[cfg(unix)]
#[test]
fn ctrl_c_keeps_the_partial_results_and_marks_them() {
    use std::os::unix::process::CommandExt;

    let server = TestServer::start(Behavior { delay: Duration::from_millis(1), ..Behavior::default() });
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("out.json");
    let manifest = fixture("mixed");
    let child = Command::new(cargo_loadbench_path())
        .arg("loadbench")
        .args(["--manifest-path", manifest.to_str().expect("UTF-8 path"), "--target", &server.url()])
        .args(["--json", json.to_str().expect("UTF-8 path"), "soak"])
        .env("CARGO_TARGET_DIR", fixture_target_dir())
        // Its own process group, as a shell gives a foreground job, so that SIGINT reaches
        // cargo-loadbench and the bench binary together, as Ctrl-C in a terminal does.
        .process_group(0)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start cargo-loadbench");

    // Wait until the run is under way (the fixture may need building first).
    let deadline = Instant::now() + Duration::from_secs(300);
    while server.requests() < 200 {
        assert!(Instant::now() < deadline, "the soak scenario never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    let started = Instant::now();
    let sent = Command::new("kill").args(["-s", "INT", "--", &format!("-{}", child.id())]).status().expect("kill");
    assert!(sent.success());
    let output = child.wait_with_output().expect("cargo-loadbench ends");
    let stdout = String::from_utf8_lossy(&output.stdout);

    assert!(started.elapsed() < Duration::from_secs(10), "stopped promptly, not after the full minute");
    assert_eq!(output.status.code(), Some(130), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    let row = row(&stdout, "soak (interrupted)");
    let report = read_report(&json);
    let soak = scenario(&report, "soak");
    assert!(soak.interrupted, "{soak:#?}");
    assert!(soak.setup_error.is_none(), "{soak:#?}");
    assert!(soak.duration_us < 60_000_000, "{soak:#?}");
    assert_eq!(soak.failed, 0, "{soak:#?}");
    // Requests in flight at Ctrl-C were finished and counted, none was lost.
    assert_eq!(soak.iterations, server.requests(), "{soak:#?}");
    assert_eq!(row[1].replace(',', ""), soak.iterations.to_string(), "the table shows the partial count");
}

#[test]
fn a_build_error_is_shown_as_cargo_shows_it() {
    let manifest = fixture("broken");
    let out = cargo_loadbench(&["--manifest-path", manifest.to_str().expect("UTF-8 path")]);

    assert_eq!(out.code, Some(2), "{out:#?}");
    // cargo's own rendered diagnostic, with its code and location…
    assert!(out.stderr.contains("error[E0308]"), "{}", out.stderr);
    assert!(out.stderr.contains("benches/api.rs:5:"), "{}", out.stderr);
    // …then our one line.
    assert_eq!(out.errors().last(), Some(&"error: build failed"), "{}", out.stderr);
    assert_eq!(out.stdout, "");
}

#[test]
fn a_bench_target_without_main_is_named_with_the_fix() {
    let out = run_fixture("mistakes", &["--bench", "no_main"]);

    assert_eq!(out.code, Some(2), "{out:#?}");
    assert!(out.stderr.contains("error[E0601]"), "{}", out.stderr);
    let hints: Vec<&str> = out.stderr.lines().filter(|l| l.starts_with("hint: ")).collect();
    assert_eq!(
        hints,
        ["hint: benches/no_main.rs declares scenarios but has no `main`: add `loadbench::main!();` at the end of \
          the file (a bench target with `harness = false` needs it to run them)"],
        "{}",
        out.stderr
    );
    assert_eq!(out.errors().last(), Some(&"error: build failed"), "{}", out.stderr);
}

#[test]
fn scenarios_under_libtest_s_harness_are_named_with_the_fix() {
    let server = TestServer::start(Behavior::default());
    let out = run_fixture("mistakes", &["--bench", "no_harness", "--target", &server.url()]);

    let manifest = fixture("mistakes");
    let warnings: Vec<&str> = out.stderr.lines().filter(|l| l.starts_with("warning: ")).collect();
    assert_eq!(
        warnings,
        [format!(
            "warning: mistakes/no_harness: benches/no_harness.rs declares scenarios, but bench target `no_harness` \
             runs libtest's harness: add `harness = false` to its [[bench]] section in {} \
             (`[[bench]] name = \"no_harness\" harness = false`)",
            manifest.canonicalize().expect("fixture exists").display()
        )],
        "{}",
        out.stderr
    );
    // It was the only target selected: nothing is left to run.
    assert_eq!(out.code, Some(2), "{out:#?}");
    assert_eq!(out.errors().last(), Some(&"error: no #[loadbench::scenario] functions in any bench target"));
    assert_eq!(server.requests(), 0);
}

/// `cargo loadbench ARGS…` run by `sh -c "SETUP && exec cargo-loadbench loadbench ARGS…"` in
/// `dir`, for what only a shell sets up: `ulimit -n`, `umask`.
#[cfg(unix)]
fn under_shell(setup: &str, dir: &std::path::Path, args: &[&str]) -> Output {
    let output = Command::new("sh")
        .arg("-c")
        .arg(format!("{setup} && exec \"$0\" loadbench \"$@\""))
        .arg(cargo_loadbench_path())
        .args(loadbench_tests::cli::judged_args(args, false))
        .current_dir(dir)
        .env_remove(loadbench::cli::TARGET_ENV)
        .env_remove(loadbench::cli::OUTPUT_ENV)
        .env_remove("GITHUB_STEP_SUMMARY")
        .output()
        .expect("run cargo-loadbench under sh");
    Output {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

#[test]
fn a_port_out_of_range_is_refused_before_any_load() {
    for (args, message) in [
        (
            &["url", "http://127.0.0.1:99999/", "-c", "2", "-n", "100"][..],
            "port 99999 is out of range; give one from 1 to 65535",
        ),
        (&["url", "http://127.0.0.1:0/", "-n", "1"], "port 0 is not a port a server listens on"),
        (&["url", "http://:8080/", "-n", "1"], "it has no host"),
        (&["url", "ftp://127.0.0.1/", "-n", "1"], "the scheme must be http://"),
        (&["--target", "http://127.0.0.1:65536"], "port 65536 is out of range"),
        (&["--target", "fast=http://127.0.0.1:70000/api"], "port 70000 is out of range"),
    ] {
        let started = Instant::now();
        let out = cargo_loadbench(args);
        assert_eq!(out.code, Some(2), "{args:?}: {out:#?}");
        let errors = out.errors();
        assert_eq!(errors.len(), 1, "{args:?}: {out:#?}");
        assert!(errors[0].contains(message), "{args:?}: {}", errors[0]);
        assert_eq!(out.stdout, "", "{args:?}: no table, nothing ran");
        // Refused while parsing the command line: no build, no run.
        assert!(started.elapsed() < Duration::from_secs(30), "{args:?} took {:?}", started.elapsed());
    }
}

#[test]
fn an_unwritable_output_path_is_refused_before_any_load() {
    let server = TestServer::start(Behavior::default());
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("a-file");
    std::fs::write(&file, "x").expect("write");
    let under_file = file.join("out.csv");
    let under_file = under_file.to_str().expect("UTF-8 path");
    let url = server.url();
    for (args, message) in [
        (
            vec!["url", &url, "-n", "50", "--json", "/proc/x.json"],
            "error: cannot write /proc/x.json: cannot create files in /proc: ".to_owned(),
        ),
        (
            vec!["url", &url, "-n", "50", "--output", under_file],
            format!("error: cannot write {under_file}: {} is not a directory", file.display()),
        ),
        (
            vec!["url", &url, "-n", "50", "--save-baseline", "main", "--baseline-dir", "/proc/baselines"],
            "error: cannot write /proc/baselines/main/report.json: cannot create files in /proc: ".to_owned(),
        ),
    ] {
        let out = cargo_loadbench_in(dir.path(), &args);
        assert_eq!(out.code, Some(2), "{args:?}: {out:#?}");
        let errors = out.errors();
        assert_eq!(errors.len(), 1, "{args:?}: {out:#?}");
        assert!(errors[0].starts_with(&message), "{args:?}: {}", errors[0]);
    }
    // A workspace's scenarios: refused before the build.
    let out = run_basic(&["--target", &url, "--json", "/proc/x.json"]);
    assert_eq!(out.code, Some(2), "{out:#?}");
    assert!(out.errors().iter().any(|e| e.starts_with("error: cannot write /proc/x.json: ")), "{out:#?}");
    assert_eq!(server.requests(), 0, "no load was sent");
}

#[test]
fn a_duration_under_a_millisecond_is_refused() {
    let server = TestServer::start(Behavior::default());
    for args in [["url", &server.url(), "-d", "1ns"], ["url", &server.url(), "--timeout", "500us"]] {
        let out = cargo_loadbench(&args);
        assert_eq!(out.code, Some(2), "{args:?}: {out:#?}");
        let errors = out.errors();
        assert_eq!(errors.len(), 1, "{args:?}: {out:#?}");
        assert!(errors[0].contains("expected a time of at least 1ms"), "{args:?}: {}", errors[0]);
    }
    assert_eq!(server.requests(), 0);
}

#[test]
fn rps_counts_successes_and_the_table_counts_every_response() {
    // Every 4th request gets a 500: a quarter fail.
    let server = TestServer::start(Behavior { fail_every: Some(4), ..Behavior::default() });
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("out.json");
    let out = cargo_loadbench_in(
        dir.path(),
        &["url", &server.url(), "-n", "400", "-c", "4", "--quiet", "--json", json.to_str().expect("UTF-8 path")],
    );
    assert_eq!(out.code, Some(0), "{out:#?}");
    let report = read_report(&json);
    let s = &report.scenarios[0];
    assert_eq!((s.iterations, s.ok, s.failed), (400, 300, 100), "{s:#?}");
    // The JSON's duration is rounded to microseconds; the rates were computed before that.
    let seconds = s.duration_us as f64 / 1e6;
    assert!((s.rps - 300.0 / seconds).abs() <= 1e-3 * s.rps, "rps is ok / duration: {s:#?}");
    assert!((s.attempts_per_sec - 400.0 / seconds).abs() <= 1e-3 * s.attempts_per_sec, "{s:#?}");
    assert!((s.attempts_per_sec / s.rps - 4.0 / 3.0).abs() < 1e-9, "{s:#?}");
    // The table's req/s is HTTP responses per second, the 500s included; the line under it says
    // what the iterations did.
    assert_eq!(s.http.responses, 400, "{s:#?}");
    let cells = row(&out.stdout, &s.name);
    assert_eq!(cells[3], "400", "{}", out.stdout);
    assert_eq!(cells[4], loadbench::report::units::rate(400.0 / seconds), "{}", out.stdout);
    let rates = format!(" iterations/s attempted, {}/s succeeded;", loadbench::report::units::rate(s.rps));
    assert!(out.stdout.contains(&rates), "{}", out.stdout);
}

#[cfg(unix)]
#[test]
fn the_open_files_estimate_counts_only_what_this_process_holds() {
    let server = TestServer::start(Behavior::default());
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("out.json");
    let json = json.to_str().expect("UTF-8 path");
    let out = under_shell(
        "ulimit -n 256",
        dir.path(),
        &["url", &server.url(), "-c", "150", "-n", "300", "--quiet", "--json", json],
    );
    assert_eq!(out.code, Some(0), "150 connections fit under 256 open files: {out:#?}");
    let report = read_report(std::path::Path::new(json));
    assert_eq!((report.scenarios[0].ok, server.requests()), (300, 300), "{out:#?}");

    let out = under_shell("ulimit -n 64", dir.path(), &["url", &server.url(), "-c", "150", "-n", "300", "--quiet"]);
    assert_eq!(out.code, Some(3), "{out:#?}");
    assert!(out.stdout.contains("did not run: concurrency 150 needs about "), "{}", out.stdout);
    assert!(out.stdout.contains("but the limit is 64"), "{}", out.stdout);
    assert!(!out.stdout.contains("server's side"), "the server is elsewhere: {}", out.stdout);
    assert_eq!(server.requests(), 300, "nothing more was sent");
}

#[cfg(unix)]
#[test]
fn result_and_baseline_files_get_the_umasks_mode() {
    use std::os::unix::fs::PermissionsExt;

    let server = TestServer::start(Behavior::default());
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("out.json");
    let args = ["url", &server.url(), "-n", "20", "-c", "2", "--quiet", "--json", json.to_str().expect("UTF-8 path")];
    let args = [&args[..], &["--save-baseline", "main", "--baseline-dir", "baselines"]].concat();
    let mode = |path: &std::path::Path| std::fs::metadata(path).map(|m| m.permissions().mode() & 0o777).ok();
    for (umask, expected) in [("022", 0o644), ("027", 0o640)] {
        let out = under_shell(&format!("umask {umask}"), dir.path(), &args);
        assert_eq!(out.code, Some(0), "{out:#?}");
        assert_eq!(mode(&json), Some(expected), "umask {umask}");
        assert_eq!(mode(&dir.path().join("baselines/main/report.json")), Some(expected), "umask {umask}");
    }
}
