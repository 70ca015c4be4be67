//! Where results go, and what a run does to what is already there: `--json` and `-o` onto a
//! symlink write its target and keep the link; onto a FIFO or a character device they write
//! through and leave the node as it was (a full device is one `error:` line and a non-zero exit,
//! the table still printed); an output that is one of the command's own inputs is refused before
//! anything is written; stdout and stderr that cannot be written give a non-zero exit, never a
//! panic, and a reader that closes early ends the run quietly. The real binaries, on loopback.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::ffi::OsStr;
use std::os::unix::fs::FileTypeExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use loadbench_tests::cli::{
    Output, bench_binary_command, cargo_loadbench_in, cargo_loadbench_path, fixture, fixture_bench_binary, isolate,
    judged_args, read_report,
};
use loadbench_tests::{Behavior, TestServer};

/// The runs here are small, but each shares the two CPUs with a test server: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Requests in each run: few, so that the runs take well under a second.
const N: u64 = 20;

fn text(path: &Path) -> &str {
    path.to_str().expect("UTF-8 path")
}

/// `cargo loadbench url URL/ -n 20 -c 2 --quiet ARGS…` in `dir`.
fn url(dir: &Path, server: &TestServer, args: &[&str]) -> Output {
    let target = format!("{}/", server.url());
    let all: Vec<&str> =
        ["url", target.as_str(), "-n", "20", "-c", "2", "--quiet"].into_iter().chain(args.iter().copied()).collect();
    cargo_loadbench_in(dir, &all)
}

/// `cargo loadbench ARGS…` in `dir` with its stdout and stderr as given; its exit code and what
/// it wrote on the streams that were piped.
fn with_streams(dir: &Path, args: &[&str], stdout: Stdio, stderr: Stdio) -> (Option<i32>, String, String) {
    let mut command = Command::new(cargo_loadbench_path());
    command.current_dir(dir).arg("loadbench").args(judged_args(args, false));
    isolate(&mut command);
    let output = command.stdin(Stdio::null()).stdout(stdout).stderr(stderr).output().expect("run cargo-loadbench");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// A results document of a small `url` run, saved as `name` in `dir` (`--shard` as given).
fn saved_results(dir: &Path, server: &TestServer, name: &str, shard: Option<&str>) -> PathBuf {
    let path = dir.join(name);
    let mut args = vec!["--json", text(&path)];
    args.extend(shard.map(|s| ["--shard", s]).into_iter().flatten());
    let out = url(dir, server, &args);
    assert_eq!(out.code, Some(0), "{out:#?}");
    path
}

/// A character device of our own that refuses writes as /dev/full does (`mknod c 1 7`, which
/// needs root), so that today's code replacing it harms nothing; /dev/full itself where it cannot
/// be made (a user who cannot make one cannot replace /dev/full either).
fn full_device(dir: &Path) -> PathBuf {
    let path = dir.join("full");
    let made = Command::new("mknod").arg(&path).args(["c", "1", "7"]).stderr(Stdio::null()).status();
    if made.is_ok_and(|s| s.success()) { path } else { PathBuf::from("/dev/full") }
}

fn file_type(path: &Path) -> std::fs::FileType {
    std::fs::symlink_metadata(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())).file_type()
}

#[test]
fn json_and_output_onto_symlinks_write_their_targets_and_keep_the_links() {
    let _serial = serial();
    let server = TestServer::start(Behavior::default());
    let dir = tempfile::tempdir().expect("tempdir");
    let real = dir.path().join("real.json");
    std::fs::write(&real, "old").expect("write");
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink("real.json", &link).expect("symlink");
    // A dangling link: its target is created, in the directory the link names.
    std::fs::create_dir(dir.path().join("reports")).expect("mkdir");
    let dangling = dir.path().join("summary.md");
    std::os::unix::fs::symlink("reports/summary.md", &dangling).expect("symlink");

    let out = url(dir.path(), &server, &["--json", text(&link), "-o", text(&dangling)]);

    assert_eq!(out.code, Some(0), "{out:#?}");
    assert!(file_type(&link).is_symlink(), "--json replaced the link with a file");
    assert!(file_type(&dangling).is_symlink(), "-o replaced the dangling link with a file");
    assert_eq!(std::fs::read_link(&link).ok(), Some(PathBuf::from("real.json")));
    let report = read_report(&real);
    assert_eq!(report.scenarios[0].iterations, N, "the link's target holds the results");
    let markdown =
        std::fs::read_to_string(dir.path().join("reports/summary.md")).expect("the link's target is written");
    assert!(markdown.contains("GET /"), "{markdown}");
    // Nothing else is left beside the targets: no temporary file.
    let mut names: Vec<String> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    assert_eq!(names, ["link.json", "real.json", "reports", "summary.md"]);
}

#[test]
fn json_onto_a_fifo_is_written_through_to_its_reader() {
    let _serial = serial();
    let server = TestServer::start(Behavior::default());
    let dir = tempfile::tempdir().expect("tempdir");
    let fifo = dir.path().join("results.fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().expect("mkfifo").success());
    let mut reader = Command::new("cat").arg(&fifo).stdout(Stdio::piped()).spawn().expect("cat");

    let out = url(dir.path(), &server, &["--json", text(&fifo)]);

    // Bounded: if the FIFO was replaced, `cat` waits on it for ever.
    let deadline = Instant::now() + Duration::from_secs(10);
    while reader.try_wait().expect("wait").is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let finished = reader.try_wait().expect("wait").is_some();
    if !finished {
        let _ = reader.kill();
    }
    let read = reader.wait_with_output().expect("cat's output");
    assert_eq!(out.code, Some(0), "{out:#?}");
    assert!(file_type(&fifo).is_fifo(), "the FIFO was replaced by a file");
    assert!(finished, "the reader never got the end of the results");
    let json = String::from_utf8_lossy(&read.stdout);
    let document = loadbench_tests::cli::results_json(&json, "what the FIFO's reader read");
    assert_eq!(document["scenarios"][0]["iterations"], N, "{json}");
}

#[test]
fn json_onto_a_full_device_is_one_error_line_the_table_kept_and_the_device_left_alone() {
    let _serial = serial();
    let server = TestServer::start(Behavior::default());
    let dir = tempfile::tempdir().expect("tempdir");
    let full = full_device(dir.path());

    let out = url(dir.path(), &server, &["--json", text(&full)]);

    assert!(file_type(&full).is_char_device(), "{} is no longer a device", full.display());
    assert_eq!(out.code, Some(2), "{out:#?}");
    let errors = out.errors();
    assert_eq!(errors.len(), 1, "{out:#?}");
    assert!(
        errors[0].starts_with(&format!("error: cannot write {}: ", full.display()))
            && errors[0].contains("No space left"),
        "{out:#?}"
    );
    assert!(out.stdout.contains("GET /"), "the table is still printed: {out:#?}");
    assert_eq!(server.requests(), N, "the run happened");
}

#[test]
fn the_bench_binarys_json_onto_a_symlink_writes_its_target_and_a_full_device_keeps_the_table() {
    let _serial = serial();
    let server = TestServer::start(Behavior::default());
    let dir = tempfile::tempdir().expect("tempdir");
    let real = dir.path().join("real.json");
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink(&real, &link).expect("symlink");
    let full = full_device(dir.path());
    let binary = fixture_bench_binary("basic");
    let url = server.url();
    let run = |json: &Path| {
        let args = ["--quiet", "--exact", "hello", "--target", &url, "--json"];
        let args: Vec<&OsStr> = args.iter().map(OsStr::new).chain([json.as_os_str()]).collect();
        loadbench_tests::cli::run_bench_binary(&binary, &args)
    };

    let (code, _, stderr) = run(&link);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(file_type(&link).is_symlink(), "--json replaced the link with a file");
    let document: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&real).expect("the target")).expect("JSON");
    assert_eq!(document["scenarios"][0]["name"], "hello");

    let (code, stdout, stderr) = run(&full);
    assert!(file_type(&full).is_char_device(), "{} is no longer a device", full.display());
    assert_eq!(code, Some(2), "{stderr}");
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(errors[0].contains(&full.display().to_string()) && errors[0].contains("No space left"), "{stderr}");
    assert!(stdout.contains("hello"), "the table is still printed: {stdout}");
}

#[test]
fn json_onto_dev_stdout_appends_to_the_file_the_shell_opened() {
    let _serial = serial();
    let server = TestServer::start(Behavior::default());
    let dir = tempfile::tempdir().expect("tempdir");
    let saved = saved_results(dir.path(), &server, "saved.json", None);
    // `cargo loadbench report saved.json --json /dev/stdout >> log.txt`.
    let log = dir.path().join("log.txt");
    std::fs::write(&log, "earlier\n").expect("write");
    let appended = std::fs::OpenOptions::new().append(true).open(&log).expect("open the log");

    let args = ["report", text(&saved), "--json", "/dev/stdout"];
    let (code, _, stderr) = with_streams(dir.path(), &args, Stdio::from(appended), Stdio::piped());

    assert_eq!(code, Some(0), "{stderr}");
    let written = std::fs::read_to_string(&log).expect("read the log");
    let json = written.strip_prefix("earlier\n").unwrap_or_else(|| panic!("the log's first line was lost: {written}"));
    let document = loadbench_tests::cli::results_json(json, "the JSON after the log's line");
    assert_eq!(document["scenarios"][0]["iterations"], N);
}

#[test]
fn merge_or_report_onto_one_of_their_inputs_is_refused_and_the_input_kept() {
    let _serial = serial();
    let server = TestServer::start(Behavior::default());
    let dir = tempfile::tempdir().expect("tempdir");
    let shard0 = saved_results(dir.path(), &server, "shard-0.json", Some("0/2"));
    let shard1 = saved_results(dir.path(), &server, "shard-1.json", Some("1/2"));
    let before = std::fs::read(&shard0).expect("read");
    // The same file by another name: through a symlink, and through `..`.
    let alias = dir.path().join("alias.json");
    std::os::unix::fs::symlink(&shard0, &alias).expect("symlink");
    std::fs::create_dir(dir.path().join("reports")).expect("mkdir");
    let dotted = format!("markdown:{}", text(&dir.path().join("reports/../shard-0.json")));

    let cases: [(&str, Vec<&str>); 4] = [
        ("merge -o", vec!["merge", text(&shard0), text(&shard1), "-o", text(&shard0)]),
        ("merge --json through a symlink", vec!["merge", text(&shard0), text(&shard1), "--json", text(&alias)]),
        ("merge -o markdown: through ..", vec!["merge", text(&shard0), text(&shard1), "-o", &dotted]),
        ("report -o", vec!["report", text(&shard0), "-o", text(&alias)]),
    ];
    for (what, args) in cases {
        let out = cargo_loadbench_in(dir.path(), &args);
        assert_eq!(out.code, Some(2), "{what}: {out:#?}");
        let errors = out.errors();
        assert_eq!(errors.len(), 1, "{what}: {out:#?}");
        assert!(errors[0].contains("is also an input"), "{what}: {out:#?}");
        assert!(out.stdout.is_empty(), "{what}: nothing is done: {out:#?}");
        assert_eq!(std::fs::read(&shard0).expect("read"), before, "{what}: the input was changed");
        assert!(file_type(&alias).is_symlink(), "{what}");
    }
    // Another file is fine: the merge itself is not what is refused.
    let merged = dir.path().join("merged.json");
    let out = cargo_loadbench_in(dir.path(), &["merge", text(&shard0), text(&shard1), "-o", text(&merged)]);
    assert_eq!(out.code, Some(0), "{out:#?}");
    assert_eq!(read_report(&merged).scenarios[0].iterations, N, "each shard ran half of the count");
}

#[test]
fn results_on_a_full_stdout_are_one_error_line_and_a_nonzero_exit() {
    let _serial = serial();
    let server = TestServer::start(Behavior::default());
    let dir = tempfile::tempdir().expect("tempdir");
    let saved = saved_results(dir.path(), &server, "saved.json", None);
    let full = std::fs::OpenOptions::new().write(true).open(full_device(dir.path())).expect("open the full device");

    let (code, _, stderr) = with_streams(dir.path(), &["report", text(&saved)], Stdio::from(full), Stdio::piped());

    assert_eq!(code, Some(2), "{stderr}");
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error")).collect();
    assert_eq!(errors, ["error: cannot write to stdout: No space left on device (os error 28)"], "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn a_reader_that_closes_early_ends_the_run_quietly() {
    let _serial = serial();
    let server = TestServer::start(Behavior::default());
    let dir = tempfile::tempdir().expect("tempdir");
    let saved = saved_results(dir.path(), &server, "saved.json", None);

    // `cargo loadbench report … | head -c 0`: the pipe's reader is gone before anything is written.
    let (read, write) = std::io::pipe().expect("pipe");
    drop(read);
    let (code, _, stderr) = with_streams(dir.path(), &["report", text(&saved)], Stdio::from(write), Stdio::piped());
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stderr, "", "nothing said about the pipe");

    // The bench binary's table and its scenario list, the same.
    let binary = fixture_bench_binary("basic");
    for args in [&["--list"][..], &["--quiet", "--exact", "hello", "--target", &server.url()][..]] {
        let (read, write) = std::io::pipe().expect("pipe");
        drop(read);
        let output = bench_binary_command(&binary).args(args).stdout(write).output().expect("run the bench binary");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "{args:?}: {stderr}");
        assert_eq!(stderr, "", "{args:?}: nothing said about the pipe");
    }
}

#[test]
fn a_full_stderr_does_not_stop_the_run_but_fails_it() {
    let _serial = serial();
    let server = TestServer::start(Behavior::default());
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("out.json");
    let full = std::fs::OpenOptions::new().write(true).open(full_device(dir.path())).expect("open the full device");
    let target = format!("{}/", server.url());

    // Not --quiet: progress lines and notes go to stderr.
    let args = ["url", target.as_str(), "-n", "20", "-c", "2", "--json", text(&json)];
    let (code, stdout, _) = with_streams(dir.path(), &args, Stdio::piped(), Stdio::from(full));

    assert_eq!(server.requests(), N, "the run happened");
    assert_eq!(read_report(&json).scenarios[0].iterations, N, "its results were written");
    assert!(stdout.contains("GET /"), "and printed: {stdout}");
    assert_eq!(code, Some(2), "a stderr that could not be written fails the run, without a panic's 101");

    // A workspace's bench binary shares the stderr: its results are still read. (Built first:
    // cargo's own build fails on a full stderr, and that is cargo's.)
    fixture_bench_binary("basic");
    let json = dir.path().join("workspace.json");
    let manifest = fixture("basic");
    let full = std::fs::OpenOptions::new().write(true).open(full_device(dir.path())).expect("open the full device");
    let url = server.url();
    let args = ["--manifest-path", text(&manifest), "--target", &url, "--exact", "hello", "--json", text(&json)];
    let (code, stdout, _) = with_streams(dir.path(), &args, Stdio::piped(), Stdio::from(full));
    assert_eq!(read_report(&json).scenarios[0].iterations, 500, "the bench binary's results were read");
    assert_eq!(server.requests(), N + 500, "the run happened");
    assert!(stdout.contains("hello"), "and printed: {stdout}");
    assert_eq!(code, Some(2), "a stderr that could not be written fails the run");
}
