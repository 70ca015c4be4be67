//! Running the real `cargo loadbench` binary on the fixture crates in `tests/fixtures/`, shared
//! by the end-to-end test files.
//!
//! The fixtures are built in release mode into `target/fixtures`, shared by every test and kept
//! between runs; the first run therefore takes about a minute.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock, PoisonError};

use cargo_loadbench::{Results, ScenarioResult};

use crate::schema::Schema;

/// The root of the loadbench workspace.
pub fn workspace_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ has a parent")
}

/// The manifest of fixture crate `name`.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(name).join("Cargo.toml")
}

/// The target directory the fixtures are built in.
pub fn fixture_target_dir() -> PathBuf {
    workspace_root().join("target").join("fixtures")
}

/// The `cargo-loadbench` binary, built once per test binary.
///
/// escargot builds it with the workspace's own target directory: `cargo test` has released its
/// build lock by the time tests run, so the nested cargo does not wait on it.
pub fn cargo_loadbench_path() -> &'static Path {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        // Without the test package's variables, or ring's build script sees a change and this
        // build and `cargo test`'s rebuild each other's dependencies in turn.
        let build = escargot::CargoBuild::new()
            .manifest_path(workspace_root().join("Cargo.toml"))
            .package("cargo-loadbench")
            .bin("cargo-loadbench");
        loadbench::cli::the_running_package()
            .into_iter()
            .fold(build, |build, key| build.env_remove(key))
            .run()
            .expect("build cargo-loadbench")
            .path()
            .to_owned()
    })
}

/// What one `cargo loadbench` run printed and returned.
#[derive(Debug)]
pub struct Output {
    /// The exit code; `None` when killed by a signal.
    pub code: Option<i32>,
    /// Everything on stdout.
    pub stdout: String,
    /// Everything on stderr.
    pub stderr: String,
}

impl Output {
    /// The `error: …` lines of stderr (cargo's own build output is also there).
    pub fn errors(&self) -> Vec<&str> {
        self.stderr.lines().filter(|l| l.starts_with("error")).collect()
    }
}

/// Runs `cargo loadbench ARGS…` (as cargo runs subcommands: `cargo-loadbench loadbench ARGS…`),
/// allowing an inconclusive run ([`judged_args`]).
pub fn cargo_loadbench(args: &[&str]) -> Output {
    cargo_loadbench_with_env(args, &[])
}

/// [`cargo_loadbench`] with extra environment variables.
pub fn cargo_loadbench_with_env(args: &[&str], env: &[(&str, &OsStr)]) -> Output {
    run_in(None, &judged_args(args, false), env)
}

/// [`cargo_loadbench_with_env`] as a user runs it, without `--allow-inconclusive`: for the tests
/// of the verdict itself.
pub fn cargo_loadbench_judged(args: &[&str], env: &[(&str, &OsStr)]) -> Output {
    run_in(None, &judged_args(args, true), env)
}

/// `args` with `--allow-inconclusive` first, unless `judged` or a command that makes no verdict
/// (`kube job`, `kube collect --no-merge`: they refuse the flag). Whether the generator's self-check calls a run on this shared
/// machine inconclusive depends on the machine's load, not on what a test checks; the tests of
/// the verdict run [`cargo_loadbench_judged`], and a run that measured nothing still exits 1.
pub fn judged_args<'a>(args: &[&'a str], judged: bool) -> Vec<&'a str> {
    let no_verdict = args.first() == Some(&"kube") && (args.get(1) == Some(&"job") || args.contains(&"--no-merge"));
    let allow = !judged && !no_verdict;
    allow.then_some("--allow-inconclusive").into_iter().chain(args.iter().copied()).collect()
}

/// [`cargo_loadbench`] run in directory `dir` (as a user would run `cargo loadbench url …`
/// outside any Cargo workspace).
pub fn cargo_loadbench_in(dir: &Path, args: &[&str]) -> Output {
    run_in(Some(dir), &judged_args(args, false), &[])
}

fn run_in(dir: Option<&Path>, args: &[&str], env: &[(&str, &OsStr)]) -> Output {
    let mut command = Command::new(cargo_loadbench_path());
    if let Some(dir) = dir {
        command.current_dir(dir);
    }
    command.arg("loadbench").args(args);
    isolate(&mut command);
    for (key, value) in env {
        command.env(key, value);
    }
    let output = command.output().expect("run cargo-loadbench");
    Output {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// Gives a `cargo loadbench` child the environment of the tests: the fixtures' target directory
/// (shared by all tests and kept between runs, so that the release build of a fixture and its
/// dependencies happens once), and none of the variables an outer run may have set (these tests
/// run in CI too: their results are not the job's summary).
pub fn isolate(command: &mut Command) {
    command
        .env("CARGO_TARGET_DIR", fixture_target_dir())
        .env_remove(loadbench::cli::TARGET_ENV)
        .env_remove(loadbench::cli::OUTPUT_ENV)
        .env_remove("GITHUB_STEP_SUMMARY");
}

/// `cargo loadbench --manifest-path fixtures/NAME/Cargo.toml ARGS…`.
pub fn run_fixture(name: &str, args: &[&str]) -> Output {
    let manifest = fixture(name);
    let manifest = manifest.to_str().expect("UTF-8 path");
    let mut all = vec!["--manifest-path", manifest];
    all.extend_from_slice(args);
    cargo_loadbench(&all)
}

/// `cargo loadbench url ARGS… --json FILE`: what it printed and the results it wrote, as plain
/// JSON checked against the schema (read them typed with `serde_json::from_value`).
pub fn url_json(args: &[&str]) -> (Output, serde_json::Value) {
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("out.json");
    let path = json.to_str().expect("UTF-8 path");
    let all: Vec<&str> = ["url"].into_iter().chain(args.iter().copied()).chain(["--json", path]).collect();
    let out = cargo_loadbench(&all);
    assert!(json.exists(), "no JSON written: {out:#?}");
    (out, read_json(&json))
}

/// The results document at `path`, checked against `schema/results.schema.json` first (see
/// [`crate::schema`]).
pub fn read_report(path: &Path) -> Results {
    serde_json::from_value(read_json(path)).expect("the JSON is cargo loadbench's results")
}

/// The results document at `path` as plain JSON, for tests that look at its text: checked
/// against `schema/results.schema.json` like [`read_report`]'s.
pub fn read_json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: results not written: {e}", path.display()));
    results_json(&text, &path.display().to_string())
}

/// The results document `text` (from `what`: a file, stdout) as plain JSON, checked against
/// `schema/results.schema.json`.
pub fn results_json(text: &str, what: &str) -> serde_json::Value {
    let document = serde_json::from_str(text).unwrap_or_else(|e| panic!("{what}: not JSON: {e}"));
    Schema::Results.assert_valid(&document, what);
    document
}

/// The entry of scenario `name` in `report`.
pub fn scenario<'a>(report: &'a Results, name: &str) -> &'a ScenarioResult {
    report.scenarios.iter().find(|s| s.name == name).unwrap_or_else(|| panic!("no `{name}` in {report:#?}"))
}

/// The first table row in `table` whose first cell is `name`, as its cells.
pub fn row(table: &str, name: &str) -> Vec<String> {
    table
        .lines()
        .map(|line| line.trim_matches('|').split('|').map(|c| c.trim().to_owned()).collect::<Vec<_>>())
        .find(|cells| cells.first().is_some_and(|c| c == name))
        .unwrap_or_else(|| panic!("no row `{name}` in\n{table}"))
}

/// A bench binary's command as `cargo bench` would run it (none of `cargo loadbench`'s variables
/// set), with `--allow-inconclusive` first for the reason [`judged_args`] gives: whether this
/// shared machine was too busy to measure is not what the tests that run a binary alone check.
pub fn bench_binary_command(binary: &Path) -> Command {
    let mut command = Command::new(binary);
    command.arg("--allow-inconclusive").env_remove(loadbench::cli::OUTPUT_ENV).env_remove(loadbench::cli::TARGET_ENV);
    command
}

/// Runs a bench binary directly ([`bench_binary_command`]): its exit code, stdout and stderr.
pub fn run_bench_binary(binary: &Path, args: &[&OsStr]) -> (Option<i32>, String, String) {
    let output = bench_binary_command(binary).args(args).output().expect("run the bench binary");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// The bench binary of fixture `name` (its one bench target), built in release mode into
/// [`fixture_target_dir`] and found from what `cargo bench --no-run` reports; built once per
/// test binary and fixture, for tests that run a bench binary without `cargo loadbench`.
pub fn fixture_bench_binary(name: &str) -> PathBuf {
    static BUILT: Mutex<BTreeMap<String, PathBuf>> = Mutex::new(BTreeMap::new());
    let mut built = BUILT.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(path) = built.get(name) {
        return path.clone();
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    // Built as `cargo loadbench` builds the fixtures into the same directory, without the test
    // package's variables, or each way would rebuild what the other built.
    loadbench::cli::forget_the_running_package(&mut command);
    let output = command
        .args(["bench", "--no-run", "--message-format=json", "--manifest-path"])
        .arg(fixture(name))
        .env("CARGO_TARGET_DIR", fixture_target_dir())
        .output()
        .expect("cargo bench --no-run");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let path = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        // The library's own libtest harness is built too; only the bench target is ours.
        .filter(|message| message["target"]["kind"].as_array().is_some_and(|kinds| kinds.iter().any(|k| k == "bench")))
        .find_map(|message| message.get("executable")?.as_str().map(PathBuf::from))
        .expect("cargo reported the bench executable");
    built.insert(name.to_owned(), path.clone());
    path
}

/// The bundled examples' bench binaries by name, built once per test binary in the test profile,
/// as `cargo test` builds them (so that, under `cargo test --workspace`, they are already there).
pub fn example_bench_binaries() -> &'static BTreeMap<String, PathBuf> {
    static BINARIES: OnceLock<BTreeMap<String, PathBuf>> = OnceLock::new();
    BINARIES.get_or_init(|| {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut command = Command::new(cargo);
        // As the outer `cargo test` built them: without this test package's variables, which a
        // build script watching them would take for a change.
        loadbench::cli::forget_the_running_package(&mut command);
        let output = command
            .args(["test", "--no-run", "--benches", "-p", "loadbench-examples", "--message-format=json"])
            .arg("--manifest-path")
            .arg(workspace_root().join("Cargo.toml"))
            .output()
            .expect("run cargo");
        assert!(output.status.success(), "building the examples failed:\n{}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
            .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["kind"][0] == "bench")
            .filter_map(|m| Some((m["target"]["name"].as_str()?.to_owned(), PathBuf::from(m["executable"].as_str()?))))
            .collect()
    })
}

/// Runs the bundled example `bench`'s bench binary (built by [`example_bench_binaries`]) with
/// `--bench --quiet --json JSON` and `args`, from the examples' directory (where their data files
/// are), as nothing in this test process's environment would change it; it must exit with 0.
pub fn run_example_bench(bench: &str, args: &[&str], json: &Path) {
    let binaries = example_bench_binaries();
    let exe = binaries.get(bench).unwrap_or_else(|| panic!("no bench `{bench}` in {binaries:?}"));
    let output = Command::new(exe)
        .args(["--bench", "--quiet", "--json"])
        .arg(json)
        // The examples' demo servers share the machine with the generator: its self-check may
        // call a run inconclusive, which is not what running the examples judges.
        .arg("--allow-inconclusive")
        .args(args)
        .current_dir(workspace_root().join("examples"))
        .env_remove(loadbench::cli::TARGET_ENV)
        .env_remove(loadbench::cli::OUTPUT_ENV)
        .env_remove(loadbench::cli::SCALE_ENV)
        .output()
        .expect("run the example");
    assert_eq!(output.status.code(), Some(0), "{bench}: {}", String::from_utf8_lossy(&output.stderr));
}

/// Runs the fixture `fixture`'s bench binary with `args`, by itself and through `cargo loadbench`
/// (which passes them on), and holds both to a refusal before any load: exit 2, and `wanted` in
/// the one error line (by itself, with no table on stdout).
#[track_caller]
pub fn assert_fixture_refuses(fixture: &str, args: &[&str], wanted: &str) {
    let direct = Command::new(fixture_bench_binary(fixture))
        .arg("--bench")
        .args(args)
        .env_remove(loadbench::cli::OUTPUT_ENV)
        .env_remove(loadbench::cli::TARGET_ENV)
        .output()
        .expect("run the bench binary");
    let stderr = String::from_utf8_lossy(&direct.stderr);
    assert_eq!(direct.status.code(), Some(2), "{stderr}");
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(errors[0].contains(wanted), "{stderr}");
    assert!(direct.stdout.is_empty(), "no table: {}", String::from_utf8_lossy(&direct.stdout));

    let through = run_fixture(fixture, args);
    assert_eq!(through.code, Some(2), "{through:#?}");
    assert!(through.stderr.contains(wanted), "{through:#?}");
}
