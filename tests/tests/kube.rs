// Over 500 lines because the Job, the pods' wrapper and collect are one contract, checked together.
//! `cargo loadbench kube`: the Job it writes checked by kubernetes-validate against the API's
//! schemas (and a broken copy refused, so the check can fail), what no schema says checked here,
//! the pods' `sh` wrapper run on this machine as the kubelet would run it (markers, exit codes,
//! SIGTERM), and `kube collect` through a stand-in kubectl: three pods of a fixture run together,
//! collected and merged into one run; a failed Job and a cut log named as such.
//!
//! No cluster: everything a cluster would do for these checks is emulated in a few lines here
//! (`$(JOB_COMPLETION_INDEX)` expanded, `/tmp` an emptyDir, stdout and stderr one log).

// A broken test environment (sh missing, a fixture that does not build) should fail loudly.
#![allow(clippy::expect_used)]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use loadbench_tests::cli::{Output, cargo_loadbench, cargo_loadbench_with_env, fixture_bench_binary, read_report};
use loadbench_tests::workflow::REQUIRE_TOOLS_ENV;
use loadbench_tests::{Behavior, TestServer};
use serde_json::{Value, json};

/// The PyPI package `.ci/run` installs.
const INSTALL_VALIDATOR: &str = "pip install kubernetes-validate==1.37.0";

/// The Kubernetes versions the Job is validated against: the oldest minor still commonly run when
/// this was written, and the newest the pinned validator has schemas for.
const KUBERNETES_VERSIONS: [&str; 2] = ["1.31.0", "1.37.0"];

const BEGIN: &str = "--- loadbench results begin ---";
const END: &str = "--- loadbench results end ---";

/// `cargo loadbench kube job ARGS…`: its output and the Job it printed.
fn job(args: &[&str]) -> (Output, Value) {
    let all: Vec<&str> = ["kube", "job"].iter().chain(args).copied().collect();
    let output = cargo_loadbench(&all);
    assert_eq!(output.code, Some(0), "{}", output.stderr);
    let job = serde_json::from_str(&output.stdout).expect("the Job is JSON");
    (output, job)
}

fn container(job: &Value) -> &Value {
    &job["spec"]["template"]["spec"]["containers"][0]
}

fn strings(value: &Value) -> Vec<String> {
    value.as_array().expect("an array").iter().map(|v| v.as_str().expect("a string").to_owned()).collect()
}

/// Runs kubernetes-validate on `file` for `version`: `None` when it is not installed and the
/// tools are not required (the caller skips, with a note); panics when it is missing under CI.
fn validate(file: &Path, version: &str) -> Option<std::process::Output> {
    let run =
        Command::new("kubernetes-validate").args(["--strict", "--kubernetes-version", version]).arg(file).output();
    match run {
        Ok(output) => Some(output),
        Err(err) => {
            let required = std::env::var_os("CI").is_some() || std::env::var_os(REQUIRE_TOOLS_ENV).is_some();
            let why = format!("kubernetes-validate cannot run ({err}); install it with `{INSTALL_VALIDATOR}`");
            assert!(!required, "{why} (CI or {REQUIRE_TOOLS_ENV} is set, so the Job must be validated)");
            eprintln!("note: Job not validated: {why}");
            None
        }
    }
}

#[test]
fn kubernetes_validate_passes_the_job_and_fails_broken_copies() {
    let (output, _) = job(&[
        "--shards",
        "10",
        "--image",
        "registry.example/loadbench/api:1",
        "--name",
        "run-1",
        "--namespace",
        "load",
        "--",
        "--target",
        "http://api.load.svc:8080",
        "checkout",
    ]);
    let dir = tempfile::tempdir().expect("tempdir");
    let good = dir.path().join("job.yaml");
    std::fs::write(&good, &output.stdout).expect("write the Job");
    // Under --strict a field the API does not have fails; so does a value of the wrong type. (A
    // wrong enum value, `completionMode: Sideways`, passes: the schemas do not list the values,
    // so the next test checks the mode.)
    let broken = [
        ("a misspelled field", output.stdout.replace("\"completionMode\"", "\"completionMod\""), "completionMod"),
        ("a count as text", output.stdout.replace("\"parallelism\": 10", "\"parallelism\": \"ten\""), "ten"),
    ];
    for (what, text, _) in &broken {
        assert_ne!(text, &output.stdout, "{what}: the replacement found nothing");
    }
    for version in KUBERNETES_VERSIONS {
        let Some(result) = validate(&good, version) else { return };
        let said = String::from_utf8_lossy(&result.stdout).into_owned() + &String::from_utf8_lossy(&result.stderr);
        assert!(result.status.success(), "kubernetes-validate {version} refused the Job:\n{said}");
        assert!(said.contains("passed"), "{said}");
        for (what, text, named) in &broken {
            let file = dir.path().join("broken.yaml");
            std::fs::write(&file, text).expect("write the broken copy");
            let result = validate(&file, version).expect("it ran a moment ago");
            let said = String::from_utf8_lossy(&result.stdout).into_owned() + &String::from_utf8_lossy(&result.stderr);
            assert!(!result.status.success(), "kubernetes-validate {version} passed {what}:\n{said}");
            assert!(said.contains(named), "{what}: {said}");
        }
    }
}

#[test]
fn the_job_says_what_the_validator_cannot_check() {
    let before = SystemTime::now();
    let (output, job) = job(&[
        "--shards",
        "7",
        "--image",
        "registry.example/bench:2",
        "--name",
        "spread",
        "--start-in",
        "90s",
        "--cpu",
        "2",
        "--memory",
        "1Gi",
        "--deadline",
        "20m",
        "--grace",
        "45s",
        "--",
        "--target",
        "http://api:8080",
        "--exact",
        "checkout",
    ]);
    let after = SystemTime::now();
    assert_eq!((job["apiVersion"].as_str(), job["kind"].as_str()), (Some("batch/v1"), Some("Job")));
    let spec = &job["spec"];
    assert_eq!(spec["completionMode"], "Indexed");
    assert_eq!((spec["completions"].as_u64(), spec["parallelism"].as_u64()), (Some(7), Some(7)));
    assert_eq!(spec["backoffLimit"], 0, "a failed shard is not run again, late and alone");
    assert_eq!(spec["activeDeadlineSeconds"], 1200);
    assert!(spec["ttlSecondsAfterFinished"].as_u64().is_some_and(|s| s >= 3600), "the logs outlive a coffee break");

    // The shard and the common start: `$(JOB_COMPLETION_INDEX)` is Kubernetes' to expand, the
    // start about --start-in from now (rounded up to the second), the user's arguments last.
    let container = container(&job);
    let args = strings(&container["args"]);
    let at = |flag: &str| args.iter().position(|a| a == flag).map(|i| args[i + 1].clone());
    assert_eq!(at("--shard").as_deref(), Some("$(JOB_COMPLETION_INDEX)/7"));
    let start = at("--start-at").expect("--start-at");
    let earliest = loadbench::report::rfc3339(before + Duration::from_secs(90));
    let latest = loadbench::report::rfc3339(after + Duration::from_secs(91));
    // RFC 3339 instants in UTC to the second compare as text.
    assert!(earliest <= start && start <= latest, "{earliest} <= {start} <= {latest}");
    assert_eq!(job["metadata"]["annotations"]["loadbench.dev/start-at"].as_str(), Some(start.as_str()));
    assert!(output.stderr.contains(&start), "the note says when the shards start: {}", output.stderr);
    assert_eq!(args[0], "--bench", "the full load, not a smoke test");
    assert_eq!(at("--grace").as_deref(), Some("45000ms"));
    assert_eq!(args[args.len() - 4..], ["--target", "http://api:8080", "--exact", "checkout"]);
    let env = &container["env"][0];
    assert_eq!(env["name"], "JOB_COMPLETION_INDEX");
    assert_eq!(
        env["valueFrom"]["fieldRef"]["fieldPath"],
        "metadata.annotations['batch.kubernetes.io/job-completion-index']"
    );

    // Shards spread over nodes, each with a whole, predictable share of one.
    let pod = &spec["template"]["spec"];
    let term = &pod["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0];
    assert_eq!(term["podAffinityTerm"]["topologyKey"], "kubernetes.io/hostname");
    assert_eq!(term["podAffinityTerm"]["labelSelector"]["matchLabels"]["loadbench.dev/run"], "spread");
    assert_eq!(spec["template"]["metadata"]["labels"]["loadbench.dev/run"], "spread");
    let resources = &container["resources"];
    assert_eq!(resources["requests"], json!({ "cpu": "2", "memory": "1Gi" }));
    assert_eq!(resources["requests"], resources["limits"], "requests = limits: a Guaranteed pod");

    // Locked down, with /tmp the one place to write; SIGKILL only after the grace period and time
    // to print the results.
    assert_eq!(pod["restartPolicy"], "Never");
    assert!(pod["terminationGracePeriodSeconds"].as_u64().is_some_and(|s| s >= 45 + 15), "{pod}");
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    assert!(pod["securityContext"]["runAsUser"].as_u64().is_some_and(|uid| uid > 0));
    let security = &container["securityContext"];
    assert_eq!(security["readOnlyRootFilesystem"], true);
    assert_eq!(security["allowPrivilegeEscalation"], false);
    assert_eq!(security["capabilities"]["drop"], json!(["ALL"]));
    assert_eq!(container["volumeMounts"], json!([{ "name": "tmp", "mountPath": "/tmp" }]));
    assert!(pod["volumes"][0]["emptyDir"].is_object(), "{pod}");
    assert!(at("--json").is_some_and(|path| path.starts_with("/tmp/")), "{args:?}");
}

/// A stand-in bench binary: writes `{"shard": …}` to its `--json` file (unless FAKE_NO_RESULTS),
/// then exits with FAKE_EXIT; with FAKE_READY it waits for SIGTERM, writes its results then and
/// exits 143, as loadbench's grace period ends.
const FAKE_BENCH: &str = r#"#!/bin/sh
json= shard=
while [ $# -gt 0 ]; do
  case "$1" in
    --json) json=$2; shift ;;
    --shard) shard=$2; shift ;;
  esac
  shift
done
mkdir -p "${json%/*}"
results() { printf '{"shard": {"index": %s, "count": %s}, "scenarios": []}\n' "${shard%/*}" "${shard#*/}" > "$json"; }
echo "fake bench: shard $shard"
echo "fake bench: progress" >&2
if [ -n "$FAKE_READY" ]; then
  trap 'echo "fake bench: SIGTERM" >&2; results; exit 143' TERM
  : > "$FAKE_READY"
  while :; do sleep 0.05; done
fi
[ -n "$FAKE_NO_RESULTS" ] || results
exit "${FAKE_EXIT:-0}"
"#;

fn write_script(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::write(path, text).expect("write a script");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("make it executable");
}

/// One pod of `job`, run here as the kubelet runs it: `$(JOB_COMPLETION_INDEX)` expanded in the
/// arguments, the emptyDir at `/tmp` a directory of its own under `root`, the image's bench binary
/// `binary`, stdout and stderr into one log file.
fn start_pod(job: &Value, index: u32, binary: &Path, root: &Path, env: &[(&str, &str)]) -> (Child, PathBuf) {
    let container = container(job);
    assert_eq!(container["volumeMounts"][0]["mountPath"], "/tmp");
    let empty_dir = root.join(format!("pod-{index}"));
    std::fs::create_dir_all(&empty_dir).expect("the emptyDir");
    let mount = |text: &str| text.replace("/tmp/", &format!("{}/", empty_dir.display()));
    let expand = |text: &str| mount(&text.replace("$(JOB_COMPLETION_INDEX)", &index.to_string()));
    let command = strings(&container["command"]);
    assert_eq!(command[..2], ["/bin/sh", "-c"], "{command:?}");
    assert_eq!(command[3], "/usr/local/bin/bench", "the Dockerfile's path");
    let log = root.join(format!("log-{index}"));
    let out = std::fs::File::create(&log).expect("the log");
    let err = out.try_clone().expect("one log for both streams");
    let child = Command::new("/bin/sh")
        .arg("-c")
        .arg(mount(&command[2]))
        .arg(binary)
        .args(strings(&container["args"]).iter().map(|a| expand(a)))
        .env("JOB_COMPLETION_INDEX", index.to_string())
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .expect("run the container's command");
    (child, log)
}

/// What a log holds between its markers; `None` without them.
fn between_markers(log: &str) -> Option<&str> {
    let start = log.find(&format!("{BEGIN}\n"))? + BEGIN.len() + 1;
    let end = log[start..].find(&format!("\n{END}\n"))? + start;
    Some(log[start..end].trim())
}

#[test]
fn the_wrapper_prints_the_results_between_markers_and_keeps_the_exit_codes_that_matter() {
    let (_, job) = job(&["--shards", "4", "--image", "bench:1", "--name", "wrap"]);
    let dir = tempfile::tempdir().expect("tempdir");
    let fake = dir.path().join("fake-bench");
    write_script(&fake, FAKE_BENCH);
    // (index, environment, the pod's exit code, results printed)
    type Case<'a> = (u32, &'a [(&'a str, &'a str)], i32, bool);
    let cases: [Case<'_>; 4] = [
        (0, &[], 0, true),
        // A missed threshold: the shard ran its share, the merged results decide.
        (1, &[("FAKE_EXIT", "1")], 0, true),
        // A usage error, no results: the pod fails, and no empty document is printed.
        (2, &[("FAKE_EXIT", "2"), ("FAKE_NO_RESULTS", "1")], 2, false),
        // A scenario that could not run, its results written all the same.
        (3, &[("FAKE_EXIT", "3")], 3, true),
    ];
    let pods: Vec<_> = cases.iter().map(|(index, env, ..)| start_pod(&job, *index, &fake, dir.path(), env)).collect();
    for ((mut child, log), (index, _, code, printed)) in pods.into_iter().zip(cases) {
        let status = child.wait().expect("the pod ends");
        let log = std::fs::read_to_string(&log).expect("read the log");
        assert_eq!(status.code(), Some(code), "pod {index}:\n{log}");
        assert!(log.contains(&format!("fake bench: shard {index}/4")), "{log}");
        let expected = format!(r#"{{"shard": {{"index": {index}, "count": 4}}, "scenarios": []}}"#);
        assert_eq!(between_markers(&log), printed.then_some(expected.as_str()), "pod {index}:\n{log}");
        let exited = format!("the bench binary exited with code {}", if index == 1 { 1 } else { code });
        assert!(log.contains(&exited), "{log}");
        // The progress on stderr is in the log, before the markers.
        let progress = log.find("fake bench: progress").expect("stderr is in the log");
        assert!(log.find(BEGIN).is_none_or(|begin| progress < begin), "{log}");
    }
}

#[test]
fn the_wrapper_passes_sigterm_on_and_still_prints_the_results() {
    let (_, job) = job(&["--shards", "2", "--image", "bench:1", "--name", "term"]);
    let dir = tempfile::tempdir().expect("tempdir");
    let fake = dir.path().join("fake-bench");
    write_script(&fake, FAKE_BENCH);
    let ready = dir.path().join("ready");
    let ready_text = ready.to_str().expect("a UTF-8 path");
    let (mut child, log) = start_pod(&job, 1, &fake, dir.path(), &[("FAKE_READY", ready_text)]);
    let started = Instant::now();
    while !ready.exists() {
        assert!(started.elapsed() < Duration::from_secs(20), "the stand-in never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    // What the kubelet does at the Job's deadline: SIGTERM to the container's first process.
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).expect("a pid"));
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).expect("send SIGTERM");
    let status = child.wait().expect("the pod ends");
    let log = std::fs::read_to_string(&log).expect("read the log");
    assert!(log.contains("fake bench: SIGTERM"), "the shell handed SIGTERM on:\n{log}");
    assert_eq!(status.code(), Some(143), "{log}");
    assert_eq!(between_markers(&log), Some(r#"{"shard": {"index": 1, "count": 2}, "scenarios": []}"#), "{log}");
}

/// A stand-in kubectl serving `job.json`, `pods.json` and `log-POD` from its directory, and
/// keeping what `apply` got; every call is appended to `calls`.
const FAKE_KUBECTL: &str = r#"#!/bin/sh
dir=${0%/*}
echo "$*" >> "$dir/calls"
case "$1" in
  apply) cat > "$dir/applied"; echo "job.batch/applied created" ;;
  get) if [ "$2" = pods ]; then cat "$dir/pods.json"; else cat "$dir/job.json"; fi ;;
  logs) cat "$dir/log-$2" 2>/dev/null || { echo "Error from server (BadRequest): container \"bench\" in pod \"$2\" is waiting to start: ContainerCreating" >&2; exit 1; } ;;
  *) echo "error: unexpected $*" >&2; exit 1 ;;
esac
"#;

/// A directory with the stand-in kubectl, a Job in `state` of `count` completions, and pods.
fn fake_cluster(count: u32, condition: Value, pods: &[(&str, u32, &str)]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let kubectl = dir.path().join("kubectl");
    write_script(&kubectl, FAKE_KUBECTL);
    let job = json!({ "spec": { "completions": count }, "status": { "conditions": [condition] } });
    std::fs::write(dir.path().join("job.json"), job.to_string()).expect("job.json");
    let items: Vec<Value> = pods
        .iter()
        .map(|(name, index, phase)| {
            json!({
                "metadata": { "name": name, "annotations": { "batch.kubernetes.io/job-completion-index": index.to_string() } },
                "status": { "phase": phase },
            })
        })
        .collect();
    std::fs::write(dir.path().join("pods.json"), json!({ "items": items }).to_string()).expect("pods.json");
    (dir, kubectl)
}

fn with_kubectl(kubectl: &Path) -> [(&'static str, &OsStr); 1] {
    [("LOADBENCH_KUBECTL", kubectl.as_os_str())]
}

#[test]
fn three_pods_of_a_fixture_start_together_and_collect_merges_them_into_one_run() {
    let server = TestServer::start(Behavior::default());
    let binary = fixture_bench_binary("basic");
    let url = server.url();
    // `hello` is 500 GETs from 20 users: 167, 167 and 166 of them, from 7, 7 and 6 users.
    let (_, job) = job(&[
        "--shards",
        "3",
        "--image",
        "bench:1",
        "--name",
        "e2e",
        "--start-in",
        "3s",
        "--",
        "--target",
        &url,
        "--exact",
        "hello",
        "--quiet",
    ]);
    let (cluster, kubectl) = fake_cluster(
        3,
        json!({ "type": "Complete", "status": "True" }),
        &[("e2e-0-a", 0, "Succeeded"), ("e2e-1-b", 1, "Succeeded"), ("e2e-2-c", 2, "Succeeded")],
    );
    let args = strings(&container(&job)["args"]);
    let start = args.iter().position(|a| a == "--start-at").map(|i| args[i + 1].clone()).expect("--start-at");
    let pods: Vec<_> = (0..3).map(|index| start_pod(&job, index, &binary, cluster.path(), &[])).collect();
    for (index, (mut child, log)) in pods.into_iter().enumerate() {
        let status = child.wait().expect("the pod ends");
        let text = std::fs::read_to_string(&log).expect("read the log");
        assert!(status.success(), "pod {index}:\n{text}");
        std::fs::rename(&log, cluster.path().join(format!("log-e2e-{index}-{}", ["a", "b", "c"][index])))
            .expect("the log where kubectl finds it");
    }
    assert_eq!(server.requests(), 500, "the shards add up to the scenario's count");

    let shards = cluster.path().join("shards");
    let merged = cluster.path().join("merged.json");
    let (shards_arg, merged_arg) = (shards.to_str().expect("UTF-8"), merged.to_str().expect("UTF-8"));
    let output = cargo_loadbench_with_env(
        &["kube", "collect", "--name", "e2e", "--dir", shards_arg, "--output", merged_arg],
        &with_kubectl(&kubectl),
    );
    assert_eq!(output.code, Some(0), "{}\n{}", output.stdout, output.stderr);
    for index in 0..3 {
        let shard: Value = serde_json::from_str(
            &std::fs::read_to_string(shards.join(format!("shard-{index}.json"))).expect("the shard's file"),
        )
        .expect("the shard's JSON");
        assert_eq!(shard["shard"], json!({ "index": index, "count": 3 }), "{shard}");
        assert_eq!(shard["run_id"], "e2e", "the Job's name names the run: {shard}");
        // The instant the Job gave them all, to the second (the document says it to the ms).
        let at = shard["start"]["at"].as_str().unwrap_or_default().to_owned();
        assert_eq!(at.replace(".000Z", "Z"), start, "{shard}");
    }
    assert!(output.stderr.contains("cargo loadbench merge"), "{}", output.stderr);
    let results = read_report(&merged);
    assert_eq!(results.scenarios.len(), 1, "one run, not three");
    assert_eq!(results.scenarios[0].iterations, 500);
    let calls = std::fs::read_to_string(cluster.path().join("calls")).expect("kubectl was called");
    assert!(calls.contains("get pods -l loadbench.dev/run=e2e -o json"), "{calls}");
    assert!(calls.contains("logs e2e-1-b -c bench"), "{calls}");
}

#[test]
fn collect_saves_what_there_is_and_names_the_shards_missing() {
    let (cluster, kubectl) = fake_cluster(
        3,
        json!({ "type": "Failed", "status": "True", "reason": "BackoffLimitExceeded", "message": "Job has reached the specified backoff limit" }),
        &[("f-0-a", 0, "Succeeded"), ("f-1-b", 1, "Failed"), ("f-2-c", 2, "Pending")],
    );
    let shard0 = r#"{"shard": {"index": 0, "count": 3}, "scenarios": []}"#;
    std::fs::write(cluster.path().join("log-f-0-a"), format!("table\n{BEGIN}\n{shard0}\n\n{END}\n")).expect("log");
    std::fs::write(cluster.path().join("log-f-1-b"), "error: cannot reach http://api:8080\n").expect("log");
    let shards = cluster.path().join("out");
    let output = cargo_loadbench_with_env(
        &["kube", "collect", "--name", "f", "-n", "load", "--dir", shards.to_str().expect("UTF-8")],
        &with_kubectl(&kubectl),
    );
    assert_eq!(output.code, Some(3), "part of the load did not run: {}", output.stderr);
    let errors = output.errors();
    assert_eq!(errors.len(), 1, "{}", output.stderr);
    for said in
        ["BackoffLimitExceeded", "shard 1 (pod f-1-b, Failed", "shard 2 (pod f-2-c, Pending: ", "waiting to start"]
    {
        assert!(errors[0].contains(said), "`{said}` in {}", errors[0]);
    }
    assert_eq!(std::fs::read_to_string(shards.join("shard-0.json")).expect("shard 0 saved"), format!("{shard0}\n"));
    assert!(!shards.join("shard-1.json").exists());
    let calls = std::fs::read_to_string(cluster.path().join("calls")).expect("kubectl was called");
    assert!(calls.lines().all(|call| call.ends_with("--namespace load")), "{calls}");
}

#[test]
fn collect_names_the_pod_whose_log_ends_inside_the_results() {
    let (cluster, kubectl) =
        fake_cluster(1, json!({ "type": "Complete", "status": "True" }), &[("cut-0-a", 0, "Succeeded")]);
    std::fs::write(cluster.path().join("log-cut-0-a"), format!("{BEGIN}\n{{\"scenarios\": [\n")).expect("log");
    let output = cargo_loadbench_with_env(
        &[
            "kube",
            "collect",
            "--name",
            "cut",
            "--no-merge",
            "--dir",
            cluster.path().join("out").to_str().expect("UTF-8"),
        ],
        &with_kubectl(&kubectl),
    );
    assert_eq!(output.code, Some(2), "{}", output.stderr);
    assert_eq!(output.errors().len(), 1, "{}", output.stderr);
    assert!(output.errors()[0].contains("pod cut-0-a"), "{}", output.stderr);
    assert!(output.errors()[0].contains(END), "{}", output.stderr);
}

#[test]
fn apply_pipes_the_job_to_kubectl_and_a_missing_kubectl_is_one_line() {
    let (cluster, kubectl) = fake_cluster(1, json!({}), &[]);
    let flags = ["kube", "job", "--shards", "2", "--image", "bench:1", "--name", "applied", "--apply"];
    let output = cargo_loadbench_with_env(&flags, &with_kubectl(&kubectl));
    assert_eq!(output.code, Some(0), "{}", output.stderr);
    let applied: Value =
        serde_json::from_str(&std::fs::read_to_string(cluster.path().join("applied")).expect("kubectl got the Job"))
            .expect("the Job");
    assert_eq!(applied["metadata"]["name"], "applied");
    assert_eq!(applied["spec"]["parallelism"], 2);
    assert!(output.stderr.contains("cargo loadbench kube collect --name applied"), "{}", output.stderr);

    let missing = cluster.path().join("no-such-kubectl");
    let output = cargo_loadbench_with_env(&flags, &with_kubectl(&missing));
    assert_eq!(output.code, Some(2));
    assert_eq!(output.stderr.lines().count(), 1, "{}", output.stderr);
    assert!(
        output.stderr.starts_with("error: cannot run ") && output.stderr.contains("not found"),
        "{}",
        output.stderr
    );
}

#[test]
fn bad_flags_are_one_line_usage_errors() {
    let base = ["kube", "job", "--image", "bench:1"];
    for (flags, message) in [
        (&["--shards", "0"][..], "--shards <N>"),
        (&["--shards", "1001"], "--shards <N>"),
        (&["--shards", "2", "--name", "Big_Name"], "is not a Kubernetes name"),
        (&["--shards", "2", "--cpu", "0"], "is not a CPU quantity"),
        (&["--shards", "2", "--memory", "512MB"], "is not a memory quantity"),
        (&["--shards", "2", "--start-in", "60s", "--deadline", "30s"], "is over before the shards start"),
        (&["--shards", "2", "--runs", "3"], "--runs does not apply here"),
        (&["--shards", "2", "--threshold", "p99<5ms"], "--threshold does not apply here"),
    ] {
        let args: Vec<&str> = base.iter().chain(flags).copied().collect();
        let output = cargo_loadbench(&args);
        assert_eq!(output.code, Some(2), "{args:?}: {}", output.stderr);
        let first = output.stderr.lines().next().unwrap_or_default();
        assert!(first.contains(message), "{args:?}: {}", output.stderr);
    }
}

/// Flags the Job gives every pod itself, after `--`, and a memory a pod cannot start in: once
/// accepted, each made every pod fail (a bench binary refuses `--shard` twice; `--memory 12` is
/// 12 bytes), found only once the Job ran.
#[test]
fn what_would_fail_every_pod_is_refused_before_the_job_is_written() {
    let base = ["kube", "job", "--image", "bench:1", "--shards", "3"];
    for (flags, line) in [
        (
            &["--", "--shard", "1/3"][..],
            "error: --shard after `--`: kube job sets --shard for each pod itself ($(JOB_COMPLETION_INDEX)/N, from --shards N); leave it out",
        ),
        (
            &["--", "--target", "http://api:8080", "--start-at=1796119200"],
            "error: --start-at after `--`: kube job sets --start-at for each pod itself (from --start-in); leave it out",
        ),
        (
            &["--", "--run-id", "mine"],
            "error: --run-id after `--`: kube job sets --run-id for each pod itself (the Job's name, --name); leave it out",
        ),
    ] {
        let args: Vec<&str> = base.iter().chain(flags).copied().collect();
        let output = cargo_loadbench(&args);
        assert_eq!(output.code, Some(2), "{args:?}: {}", output.stderr);
        assert_eq!(output.stderr.trim_end(), line, "{args:?}");
        assert!(output.stdout.is_empty(), "no Job: {}", output.stdout);
    }
    for memory in ["12", "15Mi", "1000000"] {
        let args: Vec<&str> = base.iter().copied().chain(["--memory", memory]).collect();
        let output = cargo_loadbench(&args);
        assert_eq!(output.code, Some(2), "{args:?}: {}", output.stderr);
        assert_eq!(output.stderr.lines().count(), 1, "one line: {}", output.stderr);
        assert!(
            output.stderr.contains(&format!("`{memory}` is "))
                && output.stderr.contains("bytes of memory, less than the 16Mi a shard needs"),
            "{}",
            output.stderr
        );
    }
    let (_, job) = job(&["--image", "bench:1", "--shards", "3", "--memory", "16Mi"]);
    assert_eq!(container(&job)["resources"]["limits"]["memory"], "16Mi");
}

#[test]
fn the_dockerfile_builds_the_image_the_job_expects() {
    let root = loadbench_tests::cli::workspace_root();
    let dockerfile = std::fs::read_to_string(root.join("examples/kubernetes/Dockerfile")).expect("the Dockerfile");
    let (_, job) = job(&["--shards", "1", "--image", "bench:1", "--name", "image"]);
    let uid = job["spec"]["template"]["spec"]["securityContext"]["runAsUser"].as_u64().expect("runAsUser");
    assert!(dockerfile.contains(&format!("\nUSER {uid}:{uid}\n")), "the image's user is the Job's, numeric");
    let binary = strings(&container(&job)["command"])[3].clone();
    assert!(dockerfile.contains(&format!("cp \"${{exe}}\" {binary}")), "the binary is where the Job runs it");
    assert!(dockerfile.contains(&format!("COPY --from=build {binary} {binary}")));
    assert!(dockerfile.contains("FROM debian:bookworm-slim"), "the wrapper needs /bin/sh");
    // The toolchain is loadbench's minimum Rust.
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).expect("the workspace's Cargo.toml");
    let rust = manifest.lines().find_map(|l| l.strip_prefix("rust-version = \"")).expect("rust-version");
    assert!(dockerfile.contains(&format!("ARG RUST_VERSION={}", rust.trim_end_matches('"'))), "{rust}");
}
