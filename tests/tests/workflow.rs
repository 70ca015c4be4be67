//! The shipped GitHub Actions workflow, `examples/ci/loadbench.yml`: linted with actionlint,
//! checked for what a linter cannot know (the toolchain is loadbench's minimum Rust, artifacts
//! are kept when the gate fails, the code under test is started per side), and its `run:` steps
//! executed in order, as written but for the one line a user edits, on three pull requests of a
//! repository whose service is Python and whose bench crate is in a folder of its own: the one
//! that brings loadbench in passes, one that changes nothing passes, one that makes the service
//! twice as slow fails.

// A broken test environment (git, python3 or cargo missing, a fixture that does not build) should
// fail loudly.
#![allow(clippy::expect_used)]

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use cargo_loadbench::VerdictStatus;
use loadbench_tests::ab::{Checkout, Repo, scenario};
use loadbench_tests::cli::{Output, cargo_loadbench_path, fixture_target_dir, read_report, workspace_root};
use loadbench_tests::workflow::{Workflow, actionlint};
use loadbench_tests::{Behavior, TestServer};

const COMPARE_STEP: &str = "Compare the pull request with its base";
const INSTALL_STEP: &str = "Install cargo-loadbench";

/// The line a user edits, as shipped, and as the test's user edits it.
const SERVE_LINE: &str = "  LOADBENCH_SERVE: \"\"\n";
const SERVE_EDITED: &str = "  LOADBENCH_SERVE: \"python3 service/app.py\"\n";

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
    assert_ne!(typo, workflow.text, "the comparison names the pull request's base");
    std::fs::write(&broken, typo).expect("write the broken copy");

    let Some(findings) = actionlint(&[&workflow.path, &broken]) else {
        return;
    };
    assert!(findings[0].is_empty(), "actionlint on {}: {:#?}", workflow.path.display(), findings[0]);
    // The linter can fail: a misspelt context is caught, on the comparison's line.
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
    assert_eq!(
        workflow.step_value("Swatinem/rust-cache@v2", "workspaces").as_deref(),
        Some("${{ steps.crate.outputs.workspace }}"),
        "the cache keeps the bench crate's builds wherever it is"
    );
    assert_eq!(
        workflow.env_value("CARGO_TARGET_DIR"),
        "${{ github.workspace }}/target",
        "both sides' builds in the cache"
    );
    assert_eq!(workflow.step_value("actions/checkout@v4", "fetch-depth").as_deref(), Some("0"));
    assert_eq!(workflow.step_value("actions/upload-artifact@v4", "if").as_deref(), Some("always()"));
    assert!(workflow.text.contains("on:\n  pull_request:\n"), "{}", workflow.text);

    // One step compares, gating, with every output; the code under test is started per side, by
    // the one edited line, and no step starts a service both sides would share.
    let compare = workflow.run_block(COMPARE_STEP);
    for part in [
        "cargo loadbench ab \"${{ github.event.pull_request.base.sha }}\"",
        "${LOADBENCH_SERVE:+--serve \"$LOADBENCH_SERVE\"}",
        "--quiet",
        "--output loadbench.json",
        "--output loadbench.xml",
        "--output loadbench.md",
        "--output loadbench.html",
    ] {
        assert!(compare.contains(part), "the comparison lacks {part}:\n{compare}");
    }
    assert!(!compare.contains("--no-gate") && !compare.contains("--target"), "{compare}");
    assert_eq!(workflow.env_value("LOADBENCH_SERVE"), "", "no service unless one is named");
    assert_eq!(workflow.text.matches(SERVE_LINE).count(), 1, "one line to edit");
    assert!(!workflow.text.contains("SERVICE_START"), "no service started once for both sides");
    assert!(workflow.text.contains("Never the code under test"), "a shared service is named as such");

    // Installed from the repository the workspace names, the same way the README says.
    let git = workflow.env_value("LOADBENCH_GIT");
    assert_eq!(git, workspace_value("repository"));
    let install = workflow.step_value(INSTALL_STEP, "run");
    assert_eq!(install.as_deref(), Some("cargo install --locked --git \"$LOADBENCH_GIT\" cargo-loadbench"));
    let vendored = "cargo install --locked --path vendor/loadbench/cargo-loadbench";
    assert!(workflow.text.contains(vendored), "{}", workflow.text);
    let readme = std::fs::read_to_string(workspace_root().join("README.md")).expect("README.md");
    for install in [format!("cargo install --locked --git {git} cargo-loadbench"), vendored.to_owned()] {
        assert!(readme.contains(&install), "the README does not say `{install}`");
    }
    assert!(readme.contains(&format!("Rust {rust}")), "the README states the minimum Rust version");
}

/// Every `run:` step of `workflow`, in order, as (name, script): all but the install, which the
/// test stands in for with the binary under test.
fn run_steps(workflow: &Workflow) -> Vec<(String, String)> {
    let names: Vec<String> = workflow
        .text
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("- name: "))
        .map(str::to_owned)
        .filter(|name| workflow.step(name).iter().any(|l| l.trim_start().starts_with("run:")))
        .collect();
    assert_eq!(names, ["Find the bench crate", INSTALL_STEP, COMPARE_STEP], "the workflow's run steps");
    names
        .into_iter()
        .filter(|n| n != INSTALL_STEP)
        .map(|name| {
            let script = workflow.run_block(&name);
            (name, script)
        })
        .collect()
}

/// Runs the workflow's steps as GitHub Actions would for a pull request `base` → the commit
/// checked out in `repo` (bash, `-eo pipefail`, the workflow's env, `GITHUB_OUTPUT`,
/// `GITHUB_STEP_SUMMARY`), stopping at the first step that fails. Returns each step's output.
fn run_workflow(workflow: &Workflow, repo: &Path, base: &str, summary: &Path) -> Vec<(String, Output)> {
    let github = tempfile::tempdir().expect("tempdir");
    let output = github.path().join("output");
    std::fs::write(&output, "").expect("GITHUB_OUTPUT");
    let workspace = repo.to_str().expect("UTF-8 path");
    let mut env: Vec<(String, String)> = workflow
        .env()
        .into_iter()
        .map(|(key, value)| (key, value.replace("${{ github.workspace }}", workspace)))
        .collect();
    // The one departure from the file: the fixtures' shared target directory, where the bench
    // crates' dependencies are built once for every test, instead of each repository's own.
    for (key, value) in &mut env {
        if key == "CARGO_TARGET_DIR" {
            *value = fixture_target_dir().to_str().expect("UTF-8 path").to_owned();
        }
    }
    let mut outputs = Vec::new();
    for (name, script) in run_steps(workflow) {
        let script = script
            .replace("${{ github.event.pull_request.base.sha }}", base)
            // The binary under test, whatever cargo would find on PATH.
            .replace("cargo loadbench ", "\"$CARGO_LOADBENCH\" loadbench ");
        assert!(!script.contains("${{"), "an expression the test does not stand in for:\n{script}");
        let out = Command::new("bash")
            .args(["--noprofile", "--norc", "-eo", "pipefail", "-c", &script])
            .current_dir(repo)
            .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .env("CARGO_LOADBENCH", cargo_loadbench_path())
            .env("GITHUB_WORKSPACE", repo)
            .env("GITHUB_OUTPUT", &output)
            .env("GITHUB_STEP_SUMMARY", summary)
            .env("RUNNER_TEMP", github.path())
            .env_remove(loadbench::cli::TARGET_ENV)
            .env_remove(loadbench::cli::OUTPUT_ENV)
            .output()
            .expect("run bash");
        let out = Output {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        };
        let failed = out.code != Some(0);
        outputs.push((name, out));
        if failed {
            break;
        }
    }
    let written = std::fs::read_to_string(&output).expect("GITHUB_OUTPUT");
    assert!(written.starts_with("workspace=bench -> "), "the crate step's output: {written}");
    outputs
}

#[test]
fn the_workflow_passes_a_first_and_an_unchanged_pull_request_and_fails_a_twice_slower_one() {
    let shipped = Workflow::shipped();
    let text = shipped.text.replacen(SERVE_LINE, SERVE_EDITED, 1);
    assert_ne!(text, shipped.text, "the line a user edits");
    let workflow = Workflow { text, ..shipped };

    let repo = Repo::new("storefront");
    repo.write_service(0.004, 0.001);
    repo.write(".gitignore", "target/\n/loadbench.*\n");
    let service = repo.commit("a service in Python");
    repo.write_bench_crate(&scenario(120));
    let first = repo.commit("load tests");
    repo.write("README.md", "# storefront\n");
    let unchanged = repo.commit("docs: a readme");
    repo.write_service(0.008, 0.002);
    let slower = repo.commit("twice as slow");

    let summary_dir = tempfile::tempdir().expect("tempdir");
    for (base, head, passes) in [(&service, &first, true), (&first, &unchanged, true), (&unchanged, &slower, false)] {
        // As actions/checkout leaves it: the pull request's commit, detached.
        repo.git(&["checkout", "--quiet", "--detach", head]);
        let before = Checkout::of(&repo);
        let summary = summary_dir.path().join(format!("summary-{head}.md"));
        let outputs = run_workflow(&workflow, &repo.root, base, &summary);
        let (last, out) = outputs.last().expect("a step ran");
        assert_eq!(last, COMPARE_STEP, "{outputs:#?}");
        assert_eq!(Checkout::of(&repo), before, "the checkout the steps ran in is untouched");
        let heading = format!("### loadbench: head `{}` compared with base `{}`", repo.short(head), repo.short(base));
        let summary = std::fs::read_to_string(&summary).expect("the job's summary");
        assert!(summary.contains(&heading), "{summary}");
        for file in ["loadbench.xml", "loadbench.md", "loadbench.html"] {
            assert!(repo.root.join(file).is_file(), "{file} written");
        }
        let report = read_report(&repo.root.join("loadbench.json"));
        let home = &report.scenarios[0];
        let c = home.comparison.as_ref().expect("compared with the base");
        assert_eq!(
            c.commits.as_ref().map(|c| (c.base.sha.as_str(), c.head.sha.as_str())),
            Some((base.as_str(), head.as_str()))
        );
        if passes {
            // Passed; or, on a machine busy enough that the generator's self-check flagged the
            // run, inconclusive (exit code 4), saying why: the shipped workflow refuses such a run.
            match (out.code, home.verdict.as_ref().map(|v| v.status)) {
                (Some(0), _) => assert!(out.errors().is_empty(), "{out:#?}"),
                (Some(4), Some(VerdictStatus::Inconclusive)) => {
                    assert!(!home.inconclusive.is_empty(), "{home:#?}");
                    assert!(out.errors().iter().all(|e| e.starts_with("error: inconclusive: home: ")), "{out:#?}");
                    assert!(summary.contains("❓ loadbench: 1 of 1 inconclusive"), "{summary}");
                }
                _ => panic!("neither passed nor inconclusive: {out:#?}"),
            }
        } else {
            assert_eq!(out.code, Some(1), "{out:#?}");
            let prefix = format!("error: gate failed: regressed against base `{}`: home (", repo.short(base));
            assert!(out.errors().iter().any(|e| e.starts_with(&prefix)), "{out:#?}");
            assert!(summary.contains("❌"), "{summary}");
        }
    }
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
    let note = out
        .stderr
        .lines()
        .find(|l| l.starts_with("note: gate failed: regressed against baseline `fast`: hello (it/s "));
    assert!(note.is_some_and(|l| l.ends_with("); not failing the run (--no-gate)")), "{out:#?}");
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
