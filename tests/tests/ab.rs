//! `cargo loadbench ab`: two commits of a git repository made at test time, each side measuring
//! its own server (a Python service started per side with `--serve`, or the bench binary's own),
//! in interleaved rounds: the first pull request of a crate in a subfolder passes with a real
//! comparison of the base's service; unchanged code passes ten times in ten, with a CPU-hungry
//! neighbour starting halfway through one run; a head twice as slow fails every time, naming the
//! scenario with its figures old → new; a base without scenarios passes with a note, one that
//! does not build exits 3 naming it; the user's checkout is never touched, what an interrupted
//! run left is cleaned up, and a signal stops both services.
//!
//! Why interleaved: the same comparison made in sequence (a baseline saved, then compared) lets
//! the machine's drift between the two runs read as a change. bench/RESULTS.md § "ab: drift and
//! cost" measures both ways on this fixture with a neighbour starting halfway.

// A broken test environment (git, python3 or a fixture that does not build) should fail loudly.
#![allow(clippy::expect_used)]

use std::ffi::OsStr;
use std::path::Path;
use std::time::Duration;

use cargo_loadbench::{Method, Verdict};
use loadbench_tests::ab::{AbRun, Checkout, Neighbour, Repo, run_in, scenario, scenario_with_server, served};
use loadbench_tests::cli::{Output, read_report};

/// Scenario iterations per run: at 4 users and about 5 ms a request, a run is a fraction of a
/// second, so that an `ab` of 6 rounds (and a warmup) takes a few seconds.
const COUNT: u32 = 120;

/// Every run of `ab` ends within this, a first build included, or the test fails.
const DEADLINE: Duration = Duration::from_secs(600);

/// `cargo loadbench ab` rounds by default.
const ROUNDS: u64 = 6;

fn served_env(dir: &Path) -> [(&'static str, &OsStr); 1] {
    [("SERVED_DIR", dir.as_os_str())]
}

/// The `error:` lines of a run, which must be one when it failed.
fn error_lines(out: &Output) -> Vec<&str> {
    out.stderr.lines().filter(|l| l.starts_with("error")).collect()
}

/// The Python repository: a service in `service/`, committed alone, then a bench crate in
/// `bench/` (the pull request that brings loadbench in). Returns the repository and both commits.
fn service_repo(name: &str) -> (Repo, String, String) {
    let repo = Repo::new(name);
    repo.write_service(0.004, 0.001);
    repo.write(".gitignore", "target/\n/loadbench.*\n");
    let service = repo.commit("a service");
    repo.write_bench_crate(&scenario(COUNT));
    let bench = repo.commit("load tests");
    (repo, service, bench)
}

#[test]
fn a_service_in_another_language_from_its_first_pull_request_to_a_slower_one() {
    let (repo, service_only, with_bench) = service_repo("shop");
    let serve = "python3 service/app.py";
    let before = Checkout::of(&repo);

    // The pull request that brings loadbench in: its base has no bench crate, so the head's
    // scenario runs against the base's service, started from the base's checkout.
    let counts = tempfile::tempdir().expect("tempdir");
    let json = repo.root.join("loadbench.json");
    let json = json.to_str().expect("UTF-8 path");
    let args =
        ["ab", &service_only, "--manifest-path", "bench/Cargo.toml", "--serve", serve, "--quiet", "--json", json];
    let out = run_in(&repo.root, &args, &served_env(counts.path()));
    assert_eq!(out.code, Some(0), "{out:#?}");
    let (base_short, head_short) = (repo.short(&service_only), repo.short(&with_bench));
    let title =
        format!("Head `{head_short}` (load tests) compared with base `{base_short}` (a service), in 6 paired rounds:");
    assert!(out.stdout.contains(&title), "{}", out.stdout);
    // One warmup round (the services live through every round), then six counted: each service
    // answered exactly what its side sent.
    assert_eq!(served(counts.path(), "base"), 7 * u64::from(COUNT), "{out:#?}");
    assert_eq!(served(counts.path(), "head"), 7 * u64::from(COUNT), "{out:#?}");
    let report = read_report(Path::new(json));
    let [home] = report.scenarios.as_slice() else { panic!("{report:#?}") };
    assert_eq!((home.name.as_str(), home.iterations, home.failed), ("home", ROUNDS * u64::from(COUNT), 0));
    let c = home.comparison.as_ref().expect("compared with the base");
    assert_eq!((c.method, c.runs, c.baseline_runs, c.base_runs.len()), (Method::Paired, 6, 6, 6), "{c:#?}");
    assert_ne!(c.verdict, Verdict::Regressed, "the same service on both sides: {c:#?}");
    let commits = c.commits.as_ref().expect("both commits named");
    assert_eq!((commits.base.sha.as_str(), commits.base.subject.as_str()), (service_only.as_str(), "a service"));
    assert_eq!((commits.head.sha.as_str(), commits.head.subject.as_str()), (with_bench.as_str(), "load tests"));
    assert!(!commits.head.uncommitted);
    assert_eq!(Checkout::of(&repo), before, "the user's checkout is untouched");

    // Unchanged code: a pull request that edits only the README (committed, and again in the
    // working tree, not committed), ten times in a row. In one run two busy loops start halfway,
    // as a neighbour arriving on a shared runner: both sides of the later rounds are slowed alike.
    repo.write("README.md", "# shop\n");
    let readme = repo.commit("docs: a readme");
    repo.write("README.md", "# shop\n\nA service.\n");
    let before = Checkout::of(&repo);
    let mut verdicts = Vec::new();
    let results = tempfile::tempdir().expect("tempdir");
    for run in 0..10 {
        let json = results.path().join(format!("aa-{run}.json"));
        let mut ab = AbRun::start(
            &repo.root,
            &["ab", &with_bench, "--serve", serve, "--json", json.to_str().expect("UTF-8")],
            &[],
        );
        let neighbour = (run == 4).then(|| {
            assert!(ab.wait_for("[round 3 of 6]", DEADLINE), "{}", ab.stderr());
            Neighbour::start(2)
        });
        let out = ab.finish(DEADLINE);
        drop(neighbour);
        let report = read_report(&json);
        let c = report.scenarios[0].comparison.clone().expect("compared");
        let changes: Vec<String> =
            c.metrics.iter().map(|m| format!("{} {:+.1}%", m.metric.label(), m.change * 100.0)).collect();
        verdicts.push(format!("run {run}: {} ({})", c.verdict.label(), changes.join(", ")));
        assert_eq!(out.code, Some(0), "{verdicts:#?}\n{}\n{}", out.stdout, error_lines(&out).join("\n"));
        assert!(c.commits.as_ref().is_some_and(|c| c.head.uncommitted && c.head.sha == readme), "{c:#?}");
        assert_eq!(Checkout::of(&repo), before, "run {run}: the user's checkout is untouched");
    }

    // A pull request that makes the endpoint twice as slow fails, every time, naming the scenario
    // and its figures.
    repo.write_service(0.008, 0.002);
    let slower = repo.commit("make the page twice as slow");
    for _ in 0..3 {
        let out = run_in(&repo.root, &["ab", &readme, "--serve", serve, "--quiet"], &[]);
        assert_eq!(out.code, Some(1), "{out:#?}");
        let errors = error_lines(&out);
        let [error] = errors.as_slice() else { panic!("{out:#?}") };
        let prefix = format!("error: gate failed: regressed against base `{}`: home (", repo.short(&readme));
        assert!(
            error.starts_with(&prefix) && error.contains("p50 ") && error.contains(" → ") && error.contains("(+"),
            "{error}"
        );
        assert!(
            out.stdout.contains(&format!("Head `{}` (make the page twice as slow)", repo.short(&slower))),
            "{}",
            out.stdout
        );
        let row = out.stdout.lines().find(|l| l.starts_with("| home ") && l.contains("regressed")).unwrap_or_default();
        assert!(row.contains("| regressed (it/s, p50"), "{}", out.stdout);
    }
}

#[test]
fn a_signal_stops_both_services_and_what_a_killed_run_left_is_cleaned_up() {
    let (repo, _, with_bench) = service_repo("store");
    repo.write("README.md", "# shop\n");
    repo.commit("docs: a readme");
    let serve = "python3 service/app.py";
    let counts = tempfile::tempdir().expect("tempdir");

    // SIGTERM in the middle of the rounds: the services are stopped (each wrote its count on
    // SIGTERM), the rounds so far are reported, marked interrupted, and the exit code says so.
    let json = counts.path().join("interrupted.json");
    let args = ["ab", &with_bench, "--serve", serve, "--json", json.to_str().expect("UTF-8")];
    let mut ab = AbRun::start(&repo.root, &args, &served_env(counts.path()));
    assert!(ab.wait_for("[round 2 of 6]", DEADLINE), "{}", ab.stderr());
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(ab.pid() as i32), nix::sys::signal::Signal::SIGTERM)
        .expect("SIGTERM");
    let out = ab.finish(Duration::from_secs(60));
    assert_eq!(out.code, Some(143), "{out:#?}");
    assert!(
        served(counts.path(), "base") > 0 && served(counts.path(), "head") > 0,
        "both services were stopped: {out:#?}"
    );
    assert!(out.stdout.contains("| home "), "the rounds so far: {}", out.stdout);
    let report = read_report(&json);
    let home = &report.scenarios[0];
    assert!(report.interrupted && home.iterations >= u64::from(COUNT), "{report:#?}");
    let c = home.comparison.as_ref().expect("compared");
    assert_eq!(c.verdict, Verdict::NotComparable, "a round cut short is no verdict: {c:#?}");
    assert!(leftovers(&repo).is_empty(), "no service outlives the run: {:?}", leftovers(&repo));

    // A run killed outright leaves its base worktree mid-checkout (git's lock on its index),
    // files of the base's service, and a service running. The next run cleans all of it up.
    let ab_dir = ab_dir(&repo);
    let base = ab_dir.join("base");
    let gitdir = std::process::Command::new("git")
        .args(["-C", base.to_str().expect("UTF-8"), "rev-parse", "--path-format=absolute", "--git-dir"])
        .output()
        .expect("git");
    let gitdir = String::from_utf8_lossy(&gitdir.stdout).trim().to_owned();
    std::fs::write(Path::new(&gitdir).join("index.lock"), "").expect("a stale lock");
    std::fs::write(base.join("service/cache.db"), "left by the service").expect("write");
    let mut stray = std::process::Command::new("sh");
    stray.args(["-c", "sleep 300"]).env("LOADBENCH_AB_DIR", &ab_dir);
    std::os::unix::process::CommandExt::process_group(&mut stray, 0);
    let mut stray = stray.spawn().expect("a stray service");
    std::fs::write(ab_dir.join("services"), format!("{}\n", stray.id())).expect("write");

    // (The base's scenarios this time: the head's would do as well.)
    let before = Checkout::of(&repo);
    let args = ["ab", &with_bench, "--serve", serve, "--scenarios", "base", "--quiet"];
    let out = run_in(&repo.root, &args, &[]);
    assert_eq!(out.code, Some(0), "{out:#?}");
    assert!(
        out.stderr.contains("note: stopped 1 service(s) an interrupted `cargo loadbench ab` left running"),
        "{out:#?}"
    );
    assert!(stray.wait().is_ok_and(|s| !s.success()), "the stray service was stopped");
    assert!(!base.join("service/cache.db").exists(), "the base's checkout is clean again");
    let worktrees = repo.git(&["worktree", "list", "--porcelain"]);
    assert_eq!(worktrees.lines().filter(|l| l.starts_with("worktree ")).count(), 2, "{worktrees}");
    assert!(!worktrees.contains("prunable") && !worktrees.contains("locked"), "{worktrees}");
    assert_eq!(Checkout::of(&repo), before);

    // A service that cannot start: exit code 3, one line naming the side, then its last lines.
    let out = run_in(&repo.root, &["ab", &with_bench, "--serve", "python3 service/missing.py", "--quiet"], &[]);
    assert_eq!(out.code, Some(3), "{out:#?}");
    let errors = error_lines(&out);
    let [error] = errors.as_slice() else { panic!("{out:#?}") };
    let side = format!(
        "error: base {} (load tests): the service `python3 service/missing.py` exited (exit status: 2)",
        repo.short(&with_bench)
    );
    assert!(error.starts_with(&side), "{error}");
    assert!(
        out.stderr.contains("\n  | ") && out.stderr.contains("python3: can't open file"),
        "its last lines: {out:#?}"
    );
    assert!(leftovers(&repo).is_empty(), "{:?}", leftovers(&repo));
}

/// The ab directory of `repo` under the fixtures' target directory.
fn ab_dir(repo: &Repo) -> std::path::PathBuf {
    let parent = loadbench_tests::cli::fixture_target_dir().join("loadbench/ab");
    let name = repo.root.file_name().expect("a name").to_string_lossy().into_owned();
    let found = std::fs::read_dir(&parent).expect("the ab directory").flatten().map(|e| e.path()).find(|p| {
        p.file_name().is_some_and(|n| n.to_string_lossy().starts_with(&format!("{name}-")))
            && p.join("base").join(".git").is_file()
            && std::fs::read_to_string(p.join("base").join(".git"))
                .is_ok_and(|g| g.contains(&*repo.root.canonicalize().expect("canonical").to_string_lossy()))
    });
    found.unwrap_or_else(|| panic!("no ab directory of {} in {}", repo.root.display(), parent.display()))
}

/// Processes still running as a service of `repo`'s runs (they carry its ab directory).
fn leftovers(repo: &Repo) -> Vec<u32> {
    let mark = format!("LOADBENCH_AB_DIR={}", ab_dir(repo).display());
    std::fs::read_dir("/proc")
        .expect("/proc")
        .flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|&b| b == 0).any(|entry| entry == mark.as_bytes()))
        })
        .collect()
}

#[test]
fn each_side_s_bench_binary_measures_its_own_server() {
    let repo = Repo::new("api");
    repo.write("README.md", "# api\n");
    let without = repo.commit("a crate without load tests");
    repo.write_bench_crate(&scenario_with_server(COUNT, 2));
    // A toolchain file naming a toolchain this machine has not: the base must be built by the
    // head's toolchain all the same.
    repo.write("rust-toolchain.toml", "[toolchain]\nchannel = \"1.0.0\"\n");
    let with = repo.commit("load tests, on another toolchain");
    repo.git(&["rm", "--quiet", "rust-toolchain.toml"]);
    repo.write("bench/benches/api.rs", "this is not Rust\n");
    let broken = repo.commit("broken");
    repo.write_bench_crate(&scenario_with_server(COUNT, 2));
    let fixed = repo.commit("fixed");
    repo.write_bench_crate(&scenario_with_server(COUNT, 4));
    let slower = repo.commit("twice as slow");
    let before = Checkout::of(&repo);
    // As from a user's shell: not the toolchain cargo and rustup name for the tests' own run.
    let ab = |base: &str, head: &str| {
        let args = ["ab", base, "--head", head, "--quiet"];
        AbRun::start_without(&repo.root, &args, &[], &["RUSTUP_TOOLCHAIN", "CARGO", "RUSTC"]).finish(DEADLINE)
    };

    // A base without a bench target, and no --serve: nothing to compare; the head runs alone.
    let out = ab(&without, &fixed);
    assert_eq!(out.code, Some(0), "{out:#?}");
    let note = format!(
        "base `{}` has no scenarios (its checkout has no bench/Cargo.toml): nothing to compare",
        repo.short(&without)
    );
    assert!(out.stdout.contains(&note), "{}", out.stdout);
    assert!(out.stdout.contains("home: new scenario: not in the base"), "{}", out.stdout);

    // A base that does not build: exit code 3, naming it.
    let out = ab(&broken, &fixed);
    assert_eq!(out.code, Some(3), "{out:#?}");
    assert_eq!(
        error_lines(&out).last().copied(),
        Some(
            format!("error: base {} (broken): the build failed (cargo's errors are above)", repo.short(&broken))
                .as_str()
        ),
        "{out:#?}"
    );

    // The same code on both sides, each side's binary starting its own server: no change, the
    // base built by the head's toolchain though its own file names another.
    let out = ab(&with, &fixed);
    assert_eq!(out.code, Some(0), "{out:#?}");
    assert!(!out.stderr.contains("warning:"), "{out:#?}");
    let built = format!("Building base {} (load tests, on another toolchain) with rustc 1.", repo.short(&with));
    assert!(out.stderr.contains(&built), "{out:#?}");

    // Its server twice as slow: regressed.
    let out = ab(&fixed, &slower);
    assert_eq!(out.code, Some(1), "{out:#?}");
    let error = error_lines(&out).join("\n");
    assert!(
        error.starts_with(&format!("error: gate failed: regressed against base `{}`: home (", repo.short(&fixed))),
        "{error}"
    );
    assert_eq!(Checkout::of(&repo), before, "the user's checkout is untouched");
}

#[test]
fn a_mistake_is_one_line_and_exit_code_2_before_anything_is_built() {
    let repo = Repo::new("plain");
    repo.write("README.md", "# plain\n");
    let first = repo.commit("first");
    for (args, message) in [
        (&["ab", "no-such-branch"][..], "error: `no-such-branch` is not a commit of the repository at "),
        (
            &["--target", "http://127.0.0.1:9", "ab", &first],
            "error: --target does not apply to `cargo loadbench ab`: it would send both sides to one server",
        ),
        (&["ab", &first, "--runs", "3"], "error: --runs does not apply to `cargo loadbench ab`: give --rounds N"),
        (&["ab", &first], "error: no crate that uses loadbench-runtime in "),
    ] {
        let out = run_in(&repo.root, args, &[]);
        assert_eq!(out.code, Some(2), "{args:?}: {out:#?}");
        let errors = error_lines(&out);
        assert_eq!(errors.len(), 1, "{args:?}: {out:#?}");
        assert!(errors[0].starts_with(message), "{args:?}: {}", errors[0]);
    }
    let outside = tempfile::tempdir().expect("tempdir");
    let out = run_in(outside.path(), &["ab", "main"], &[]);
    assert_eq!(out.code, Some(2), "{out:#?}");
    assert!(
        error_lines(&out).first().is_some_and(
            |e| e.starts_with("error: cannot find the git repository of ") && e.contains("not a git repository")
        ),
        "{out:#?}"
    );
}
