//! The shipped GitHub Actions workflow, `examples/ci/loadbench.yml`: linted with actionlint,
//! checked for what a linter cannot know (the toolchain is loadbench's minimum Rust, artifacts
//! are kept when the gate fails, the base step never gates), and its two measuring steps run as
//! written on a pull request that brings loadbench into a crate, then on one that makes it slower.

// A broken test environment (git or cargo missing, a fixture that does not build) should fail
// loudly.
#![allow(clippy::expect_used)]

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use loadbench_tests::cli::{Output, cargo_loadbench_path, fixture, fixture_target_dir, read_report, workspace_root};
use loadbench_tests::workflow::{Workflow, actionlint};
use loadbench_tests::{Behavior, TestServer};

const BASE_STEP: &str = "Measure the base commit";
const HEAD_STEP: &str = "Measure the pull request against it";

/// `key = "value"` of the workspace's Cargo.toml.
fn workspace_value(key: &str) -> String {
    let manifest = std::fs::read_to_string(workspace_root().join("Cargo.toml")).expect("the workspace's Cargo.toml");
    let prefix = format!("{key} = \"");
    manifest
        .lines()
        .find_map(|l| l.strip_prefix(&prefix).and_then(|rest| rest.strip_suffix('"')))
        .unwrap_or_else(|| panic!("no {key} in the workspace's Cargo.toml"))
        .to_owned()
}

#[test]
fn actionlint_finds_nothing_in_the_shipped_workflow_and_something_in_a_broken_copy() {
    let workflow = Workflow::shipped();
    let dir = tempfile::tempdir().expect("tempdir");
    let broken = dir.path().join("broken.yml");
    let typo = workflow.text.replace("github.event.pull_request.base.sha", "github.evnt.pull_request.base.sha");
    assert_ne!(typo, workflow.text, "the base step checks out the pull request's base");
    std::fs::write(&broken, typo).expect("write the broken copy");

    let Some(findings) = actionlint(&[&workflow.path, &broken]) else {
        return;
    };
    assert!(findings[0].is_empty(), "actionlint on {}: {:#?}", workflow.path.display(), findings[0]);
    // The linter can fail: a misspelt context is caught, on the base step's line.
    assert!(findings[1].iter().any(|f| f.kind == "expression" && f.message.contains("\"evnt\"")), "{:#?}", findings[1]);
}

#[test]
fn the_workflow_keeps_what_a_linter_cannot_check() {
    let workflow = Workflow::shipped();
    let rust = workspace_value("rust-version");
    assert_eq!(rust, "1.95", "the README states the minimum Rust version: update it with rust-version");
    assert_eq!(
        workflow.step_value("dtolnay/rust-toolchain@master", "toolchain").as_deref(),
        Some(rust.as_str()),
        "the toolchain is pinned to loadbench's rust-version"
    );
    assert!(!workflow.step("Swatinem/rust-cache@v2").is_empty());
    assert_eq!(workflow.step_value("actions/checkout@v4", "fetch-depth").as_deref(), Some("0"));
    assert_eq!(workflow.step_value("actions/upload-artifact@v4", "if").as_deref(), Some("always()"));
    assert!(workflow.text.contains("on:\n  pull_request:\n"), "{}", workflow.text);

    let base = workflow.run_block(BASE_STEP);
    for flag in ["--runs 5", "--save-baseline base", "--no-gate", "--allow-no-scenarios", "--quiet"] {
        assert!(base.contains(flag), "the base step lacks {flag}:\n{base}");
    }
    assert!(!base.contains("--fail-on"), "the base step never gates:\n{base}");
    let head = workflow.run_block(HEAD_STEP);
    for flag in [
        "--runs 5",
        "--baseline base",
        "--fail-on-regression",
        "--quiet",
        "--output loadbench.json",
        "--output loadbench.xml",
        "--output loadbench.md",
        "--output loadbench.html",
    ] {
        assert!(head.contains(flag), "the head step lacks {flag}:\n{head}");
    }
    assert!(!head.contains("--no-gate") && !head.contains("--allow-no-scenarios"), "{head}");

    // The service: optional, waited for, within a bound.
    assert_eq!(workflow.step_value("Start the service", "if").as_deref(), Some("env.SERVICE_START != ''"));
    let start = workflow.run_block("Start the service");
    assert!(start.contains("curl") && start.contains("seq 1 60"), "{start}");
    assert_eq!(workflow.env_value("SERVICE_START"), "", "no service unless one is named");

    // Installed from the repository the workspace names, the same way the README says.
    let git = workflow.env_value("LOADBENCH_GIT");
    assert_eq!(git, workspace_value("repository"));
    let install = workflow.step_value("Install cargo-loadbench", "run");
    assert_eq!(install.as_deref(), Some("cargo install --locked --git \"$LOADBENCH_GIT\" cargo-loadbench"));
    let vendored = "cargo install --locked --path vendor/loadbench/cargo-loadbench";
    assert!(workflow.text.contains(vendored), "{}", workflow.text);
    let readme = std::fs::read_to_string(workspace_root().join("README.md")).expect("README.md");
    for install in [format!("cargo install --locked --git {git} cargo-loadbench"), vendored.to_owned()] {
        assert!(readme.contains(&install), "the README does not say `{install}`");
    }
    assert!(readme.contains(&format!("Rust {rust}")), "the README states the minimum Rust version");
}

/// A git repository with the first pull request's two commits: a crate without loadbench, then
/// the same crate with a bench target of one scenario. Returns the two commits.
fn first_pull_request(repo: &Path) -> (String, String) {
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(["-c", "user.name=test", "-c", "user.email=test@example.invalid", "-c", "commit.gpgsign=false"])
            .args(args)
            .current_dir(repo)
            .output()
            .expect("run git");
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    let write = |path: &str, text: &str| {
        let path = repo.join(path);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    };
    let manifest =
        "[package]\nname = \"firstpr\"\nversion = \"0.1.0\"\nedition = \"2024\"\npublish = false\n\n[workspace]\n";
    write("Cargo.toml", manifest);
    write("src/lib.rs", "//! A service without load tests yet.\n");
    write(".gitignore", "/loadbench.*\n");
    git(&["init", "--quiet"]);
    git(&["add", "."]);
    git(&["commit", "--quiet", "-m", "a crate"]);
    let first = git(&["rev-parse", "HEAD"]);

    let runtime = workspace_root().join("loadbench-runtime");
    let runtime = runtime.to_str().expect("UTF-8 path");
    write(
        "Cargo.toml",
        &format!(
            "{manifest}\n[dev-dependencies]\nloadbench-runtime = {{ path = \"{runtime}\" }}\n\n[[bench]]\nname = \"api\"\nharness = false\n"
        ),
    );
    write(
        "benches/api.rs",
        "#[loadbench::scenario(concurrency = 2, count = 40)]\n\
         async fn hello(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {\n\
         \x20   ctx.get(\"/\").send().await?.expect_status(200)?;\n\
         \x20   Ok(())\n\
         }\n\nloadbench::main!();\n",
    );
    // The gate fixture's lock: the same dependencies, so nothing is resolved or fetched.
    let lock = std::fs::read_to_string(fixture("gate").with_file_name("Cargo.lock")).expect("gate's Cargo.lock");
    write("Cargo.lock", &lock.replace("name = \"gate\"", "name = \"firstpr\""));
    git(&["add", "."]);
    git(&["commit", "--quiet", "-m", "load tests"]);
    let second = git(&["rev-parse", "HEAD"]);
    (first, second)
}

/// Runs step `name`'s `run:` block as GitHub Actions would (bash, `-eo pipefail`, the workflow's
/// env), in `repo`, on pull request `base` → `head`, the scenarios sent to `target`.
fn run_step(workflow: &Workflow, name: &str, repo: &Path, (base, head): (&str, &str), target: &str) -> Output {
    let script = workflow
        .run_block(name)
        .replace("${{ github.event.pull_request.base.sha }}", base)
        .replace("${{ github.event.pull_request.head.sha }}", head)
        // The binary under test, whatever cargo would find on PATH.
        .replace("cargo loadbench ", "\"$CARGO_LOADBENCH\" loadbench ");
    assert!(!script.contains("${{"), "an expression the test does not stand in for:\n{script}");
    let runner_temp = repo.parent().expect("the repository's parent").join("runner-temp");
    let out = Command::new("bash")
        .args(["--noprofile", "--norc", "-eo", "pipefail", "-c", &script])
        .current_dir(repo)
        .envs(workflow.env())
        .env("CARGO_LOADBENCH", cargo_loadbench_path())
        .env("RUNNER_TEMP", runner_temp)
        .env("CARGO_TARGET_DIR", fixture_target_dir())
        .env(loadbench::cli::TARGET_ENV, target)
        .env_remove(loadbench::cli::OUTPUT_ENV)
        .env_remove("GITHUB_STEP_SUMMARY")
        .output()
        .expect("run bash");
    Output {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[test]
fn the_first_pull_request_passes_and_a_slower_one_after_it_fails() {
    let workflow = Workflow::shipped();
    let dir = tempfile::tempdir().expect("tempdir");
    let repo = dir.path().join("service");
    std::fs::create_dir(&repo).expect("mkdir");
    let (without, with) = first_pull_request(&repo);
    let fast = TestServer::start(Behavior::default());

    // The pull request that brings loadbench in: its base has no bench target using it.
    let base = run_step(&workflow, BASE_STEP, &repo, (&without, &with), &fast.url());
    assert_eq!(base.code, Some(0), "{base:#?}");
    assert!(
        base.stderr.contains("note: no scenario to run (no bench targets that depend on loadbench-runtime in "),
        "{base:#?}"
    );
    assert!(base.stderr.contains("note: saved baseline `base` (0 scenarios)"), "{base:#?}");
    assert_eq!(base.stdout, "", "no empty table");
    assert_eq!(fast.requests(), 0);

    let head = run_step(&workflow, HEAD_STEP, &repo, (&without, &with), &fast.url());
    assert_eq!(head.code, Some(0), "{head:#?}");
    assert!(head.stdout.contains("no baseline: nothing to compare (baseline `base` holds no scenario)"), "{head:#?}");
    assert!(head.errors().is_empty(), "{head:#?}");
    assert_eq!(fast.requests(), 5 * 40, "five runs of the new scenario");
    let report = read_report(&repo.join("loadbench.json"));
    assert_eq!(report.scenarios.len(), 1);
    assert!(report.scenarios[0].comparison.is_none(), "{:#?}", report.scenarios[0]);
    for other in ["loadbench.xml", "loadbench.md"] {
        assert!(repo.join(other).is_file(), "{other} written");
    }

    // The next pull request makes every response 20 ms slower: measured against its base (the
    // commit with the scenario, against the prompt server), it fails the job.
    let slow = TestServer::start(Behavior { delay: Duration::from_millis(20), ..Behavior::default() });
    let base = run_step(&workflow, BASE_STEP, &repo, (&with, &with), &fast.url());
    assert_eq!(base.code, Some(0), "{base:#?}");
    assert!(base.stderr.contains("note: saved baseline `base` (1 scenario)"), "{base:#?}");
    let head = run_step(&workflow, HEAD_STEP, &repo, (&with, &with), &slow.url());
    assert_eq!(head.code, Some(1), "{head:#?}");
    assert_eq!(head.errors(), ["error: gate failed: regressed against baseline `base`: hello"], "{head:#?}");
    assert_eq!(slow.requests(), 5 * 40);
}

/// `cargo loadbench --manifest-path fixtures/gate/Cargo.toml --quiet ARGS…`.
fn gate(args: &[&str]) -> Output {
    let mut all = vec!["--quiet"];
    all.extend_from_slice(args);
    loadbench_tests::cli::run_fixture("gate", &all)
}

#[test]
fn no_gate_reports_a_missed_threshold_and_a_regression_without_failing() {
    let slow = TestServer::start(Behavior { delay: Duration::from_millis(20), ..Behavior::default() });
    let fast = TestServer::start(Behavior::default());
    let dir = tempfile::tempdir().expect("tempdir");
    let baselines = dir.path().to_str().expect("UTF-8 path");

    // `guarded` wants p50 < 10ms: every response 20 ms late misses it, reported but not fatal.
    let out = gate(&["guarded", "--target", &slow.url(), "--no-gate", "--fail-on-warning"]);
    assert_eq!(out.code, Some(0), "{out:#?}");
    assert!(out.stdout.contains("\nguarded: threshold failed: p50 < 10ms (was "), "{}", out.stdout);
    assert!(out.errors().is_empty(), "{out:#?}");
    let note = out.stderr.lines().find(|l| l.starts_with("note: gate failed: threshold guarded: p50 < 10ms (was "));
    assert!(note.is_some_and(|l| l.ends_with("; not failing the run (--no-gate)")), "{out:#?}");
    let without = gate(&["guarded", "--target", &slow.url()]);
    assert_eq!(without.code, Some(1), "the same run gates without --no-gate: {without:#?}");

    // A regression with --fail-on-regression: shown, not fatal.
    let saved =
        gate(&["hello", "--exact", "--target", &fast.url(), "--save-baseline", "fast", "--baseline-dir", baselines]);
    assert_eq!(saved.code, Some(0), "{saved:#?}");
    let args = ["hello", "--exact", "--target", &slow.url(), "--baseline", "fast", "--baseline-dir", baselines];
    let out = gate(&[&args[..], &["--fail-on-regression", "--no-gate"]].concat());
    assert_eq!(out.code, Some(0), "{out:#?}");
    assert!(
        out.stderr
            .contains("note: gate failed: regressed against baseline `fast`: hello; not failing the run (--no-gate)"),
        "{out:#?}"
    );
}

#[test]
fn nothing_selected_is_a_note_with_allow_no_scenarios_and_an_empty_baseline_compares_nothing() {
    let server = TestServer::start(Behavior::default());
    let dir = tempfile::tempdir().expect("tempdir");
    let baselines = dir.path().to_str().expect("UTF-8 path");
    let json = dir.path().join("out.json");
    let json = json.to_str().expect("UTF-8 path");

    let refused = gate(&["nothing_like_this", "--save-baseline", "empty", "--baseline-dir", baselines]);
    assert_eq!(refused.code, Some(2), "{refused:#?}");
    let out = gate(&[
        "nothing_like_this",
        "--save-baseline",
        "empty",
        "--baseline-dir",
        baselines,
        "--allow-no-scenarios",
        "--json",
        json,
    ]);
    assert_eq!(out.code, Some(0), "{out:#?}");
    assert_eq!(out.stdout, "");
    let note: Vec<&str> = out.stderr.lines().filter(|l| l.starts_with("note: ")).collect();
    assert_eq!(note.len(), 2, "{out:#?}");
    assert!(note[0].starts_with("note: no scenario to run (no scenario matches `nothing_like_this`"), "{out:#?}");
    assert!(note[0].ends_with("); nothing measured (--allow-no-scenarios)"), "{out:#?}");
    assert!(note[1].starts_with("note: saved baseline `empty` (0 scenarios) to "), "{out:#?}");
    assert!(read_report(Path::new(json)).scenarios.is_empty());

    // Compared with it: nothing to compare, and a pass even with the regression gate on.
    let out = gate(&[
        "hello",
        "--exact",
        "--target",
        &server.url(),
        "--baseline",
        "empty",
        "--baseline-dir",
        baselines,
        "--fail-on-regression",
    ]);
    assert_eq!(out.code, Some(0), "{out:#?}");
    assert!(
        out.stdout.contains("\nno baseline: nothing to compare (baseline `empty` holds no scenario)\n"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("Compared with baseline"), "{}", out.stdout);

    // A baseline that lacks a scenario: that one is new, and passes.
    let saved =
        gate(&["hello", "--exact", "--target", &server.url(), "--save-baseline", "hello", "--baseline-dir", baselines]);
    assert_eq!(saved.code, Some(0), "{saved:#?}");
    let out = gate(&[
        "steady",
        "--target",
        &server.url(),
        "--baseline",
        "hello",
        "--baseline-dir",
        baselines,
        "--fail-on-regression",
        "--json",
        json,
    ]);
    assert_eq!(out.code, Some(0), "{out:#?}");
    assert!(out.stdout.contains("\nsteady: new scenario: no baseline\n"), "{}", out.stdout);
    let report = read_report(Path::new(json));
    let steady = loadbench_tests::cli::scenario(&report, "steady");
    assert_eq!(steady.comparison.as_ref().map(|c| c.verdict), Some(cargo_loadbench::Verdict::New));

    // A baseline never saved stays an error, --allow-no-scenarios or not: the step that saves one
    // always does, so its absence means that step failed.
    let out = gate(&[
        "hello",
        "--exact",
        "--target",
        &server.url(),
        "--baseline",
        "never",
        "--baseline-dir",
        baselines,
        "--allow-no-scenarios",
    ]);
    assert_eq!(out.code, Some(2), "{out:#?}");
    assert_eq!(
        out.errors(),
        [format!("error: no baseline named `never` in {baselines}; save one with --save-baseline never")]
    );
}
