//! Baselines that cannot be used: missing, corrupt, unknown, of a failing run, with impossible figures; and an output file checked before the run.

use super::*;

#[test]
fn missing_corrupt_and_unknown_baselines_are_usage_errors() {
    let _turn = one_at_a_time();
    let target = server(Duration::ZERO);
    let dir = tempfile::tempdir().expect("tempdir");
    let baseline =
        |name: &str| gate(&["--target", &target.url(), "--baseline", name, "--baseline-dir", path(dir.path())]);

    let out = baseline("nope");
    assert_eq!(out.code, Some(2), "{out:#?}");
    assert_eq!(
        out.errors(),
        [format!("error: no baseline named `nope` in {}; save one with --save-baseline nope", dir.path().display())]
    );

    let corrupt = dir.path().join("corrupt").join("report.json");
    std::fs::create_dir_all(corrupt.parent().expect("parent")).expect("mkdir");
    std::fs::write(&corrupt, "{\"schema_version\": 1, \"scenarios\": [").expect("write");
    let out = baseline("corrupt");
    assert_eq!(out.code, Some(2), "{out:#?}");
    let errors = out.errors();
    assert_eq!(errors.len(), 1, "{out:#?}");
    assert!(
        errors[0]
            .starts_with(&format!("error: cannot read baseline `corrupt` from {}: invalid JSON: ", corrupt.display())),
        "{out:#?}"
    );

    let future = dir.path().join("future").join("report.json");
    std::fs::create_dir_all(future.parent().expect("parent")).expect("mkdir");
    std::fs::write(&future, r#"{"schema_version": 99, "scenarios": []}"#).expect("write");
    let out = baseline("future");
    assert_eq!(out.code, Some(2), "{out:#?}");
    assert_eq!(
        out.errors(),
        [format!(
            "error: cannot read baseline `future` from {}: it has result schema 99, this cargo-loadbench reads schemas 1 to 2; \
             save the baseline again with this version",
            future.display()
        )]
    );
    assert_eq!(out.stdout, "");
    assert_eq!(target.requests(), 0, "a bad baseline stops the run before any load");
}

/// `cargo loadbench url ARGS…` in `dir`, outside any workspace.
fn url_in(dir: &Path, args: &[&str]) -> Output {
    loadbench_tests::cli::cargo_loadbench_in(dir, &[&["url"], args].concat())
}

#[test]
fn a_baseline_of_a_failing_run_is_refused_when_saved() {
    let _turn = one_at_a_time();
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("refused.json");
    // Every request refused, saved as the baseline…
    let refused = format!("{}/", loadbench_tests::closed_port_url());
    let out = url_in(
        dir.path(),
        &[&refused, "-c", "2", "-n", "100", "--quiet", "--save-baseline", "main", "--json", path(&json)],
    );
    assert_eq!(out.code, Some(2), "{out:#?}");
    assert_eq!(
        out.errors()[0],
        "error: baseline `main` not saved: scenario `GET /` succeeded in 0.0% of its iterations (0 of 100), below \
         the 50% a baseline needs"
    );
    // And the run itself measured nothing, which its own line says.
    assert!(out.errors()[1].starts_with("error: GET /: no iteration succeeded (100 of 100 failed"), "{out:#?}");
    assert!(!dir.path().join("target/loadbench/baselines/main").exists(), "nothing saved");
    // The results are still written, with req/s counting successes only.
    let report = read_report(&json);
    let s = &report.scenarios[0];
    assert_eq!((s.ok, s.failed, s.rps), (0, 100, 0.0), "{s:#?}");
    assert!(s.attempts_per_sec > 0.0, "{s:#?}");

    // …then a healthy run against it: there is no baseline to call it a regression.
    let healthy = server(Duration::ZERO);
    let out =
        url_in(dir.path(), &[&healthy.url(), "-n", "100", "--quiet", "--baseline", "main", "--fail-on-regression"]);
    assert_eq!(out.code, Some(2), "{out:#?}");
    assert_eq!(out.errors().len(), 1, "{out:#?}");
    assert!(out.errors()[0].starts_with("error: no baseline named `main` in "), "{out:#?}");
    assert_eq!(healthy.requests(), 0);

    // A mostly healthy run (a quarter failing) is a fine baseline.
    let flaky = TestServer::start(Behavior { fail_every: Some(4), ..Behavior::default() });
    let out = url_in(dir.path(), &[&flaky.url(), "-n", "100", "--quiet", "--save-baseline", "main"]);
    assert_eq!(out.code, Some(0), "{out:#?}");
    assert!(dir.path().join("target/loadbench/baselines/main/report.json").is_file(), "{out:#?}");
}

#[test]
fn a_baseline_with_impossible_figures_is_refused_naming_the_file_and_figure() {
    let _turn = one_at_a_time();
    let target = server(Duration::ZERO);
    let dir = tempfile::tempdir().expect("tempdir");
    let out = url_in(dir.path(), &[&target.url(), "-n", "50", "--quiet", "--save-baseline", "main"]);
    assert_eq!(out.code, Some(0), "{out:#?}");
    let file = dir.path().join("target/loadbench/baselines/main/report.json");
    let saved = loadbench_tests::cli::read_json(&file);
    let sent = target.requests();

    for (edit, figure) in [
        (
            &(|v: &mut serde_json::Value| v["scenarios"][0]["rps"] = (-5.0).into()) as &dyn Fn(&mut serde_json::Value),
            "scenario `GET /`: rps is -5",
        ),
        (&|v| v["scenarios"][0]["rps"] = 0.into(), "scenario `GET /`: rps is 0 with 50 successful iterations"),
        (&|v| v["scenarios"][0]["ok"] = 60.into(), "scenario `GET /`: ok 60 + failed 0 is more than its 50 iterations"),
        // No scenario at all is what --allow-no-scenarios saves: read (tests/workflow.rs).
        (
            &|v| {
                v["scenarios"][0]["ok"] = 10.into();
                v["scenarios"][0]["failed"] = 40.into();
                v["scenarios"][0]["errors"]["status"] = 40.into();
            },
            "scenario `GET /` succeeded in 20.0% of its iterations (10 of 50), below the 50% a baseline needs",
        ),
    ] {
        let mut bad = saved.clone();
        edit(&mut bad);
        std::fs::write(&file, serde_json::to_vec(&bad).expect("JSON")).expect("write");
        let out = url_in(dir.path(), &[&target.url(), "-n", "50", "--quiet", "--baseline", "main"]);
        assert_eq!(out.code, Some(2), "{figure}: {out:#?}");
        assert_eq!(
            out.errors(),
            [format!(
                // Outside a workspace, baselines are under ./target, and named so.
                "error: cannot read baseline `main` from target/loadbench/baselines/main/report.json: {figure}; save \
                 it again from a healthy run"
            )]
        );
    }
    assert_eq!(target.requests(), sent, "a bad baseline stops the run before any load");
}

#[test]
fn a_bench_binary_checks_its_output_file_before_running() {
    let _turn = one_at_a_time();
    let target = server(Duration::ZERO);
    for (flag, env) in [(Some("/proc/x.json"), None), (None, Some("/proc/x.json"))] {
        let mut command = bench_binary_command(&fixture_bench_binary("gate"));
        command.args(["--bench", "--quiet", "--target", &target.url(), "guarded"]);
        if let Some(path) = env {
            command.env(loadbench::cli::OUTPUT_ENV, path);
        }
        command.args(flag.map(|path| ["--json", path]).iter().flatten());
        let output = command.output().expect("run the bench binary");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error")).collect();
        assert_eq!(errors.len(), 1, "{stderr}");
        assert!(
            errors[0].starts_with("error: cannot write results to /proc/x.json: cannot create files in /proc: "),
            "{stderr}"
        );
    }
    assert_eq!(target.requests(), 0, "nothing ran");
}
