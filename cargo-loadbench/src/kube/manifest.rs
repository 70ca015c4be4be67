//! The Job of a distributed run, built as a `serde_json::Value` and written as JSON.
//!
//! JSON is YAML (1.2, and every YAML 1.1 reader Kubernetes tools use takes it), and `kubectl
//! apply -f` reads it as it reads YAML; serde_json is already here. serde_yaml is deprecated and
//! its maintained forks would be a new dependency for output no reader needs. Keys come out
//! sorted (serde_json's map), which puts `apiVersion`, `kind`, `metadata`, `spec` in the usual
//! order.

use std::time::{Duration, SystemTime};

use serde_json::{Value, json};

use super::{BEGIN_MARKER, CONTAINER, END_MARKER, INDEX_ANNOTATION, RUN_LABEL};

/// Where the wrapper has the bench binary write its JSON: in `/tmp`, an emptyDir, because the
/// root filesystem is read-only.
pub const RESULTS_FILE: &str = "/tmp/loadbench/shard.json";

/// The user and group the pods run as: numeric, so that the kubelet can check `runAsNonRoot`
/// whatever the image's `USER` says (examples/kubernetes/Dockerfile makes this one).
pub const USER_ID: u32 = 10001;

/// The annotation that records the instant the shards start at.
pub const START_ANNOTATION: &str = "loadbench.dev/start-at";

/// What one run's Job is made of.
#[derive(Debug, Clone)]
pub struct JobSpec<'a> {
    /// The Job's name and its `loadbench.dev/run` label.
    pub name: &'a str,
    /// Its namespace; `None` leaves it to kubectl's context.
    pub namespace: Option<&'a str>,
    /// The image holding the bench binary.
    pub image: &'a str,
    /// The bench binary's path in the image.
    pub binary: &'a str,
    /// How many shards.
    pub shards: u32,
    /// The instant every shard starts at, RFC 3339 in UTC.
    pub start_at: &'a str,
    /// Each shard's CPU, a Kubernetes quantity.
    pub cpu: &'a str,
    /// Each shard's memory, a Kubernetes quantity.
    pub memory: &'a str,
    /// The Job's whole time.
    pub deadline: Duration,
    /// How long the finished Job is kept.
    pub keep_for: Duration,
    /// `--grace`, passed to the bench binary when given.
    pub grace: Option<Duration>,
    /// The user's arguments for the bench binary, after the ones the run needs.
    pub bench_args: &'a [String],
}

/// The wrapper the container runs, as `sh -c SCRIPT BINARY ARGS…`: `$0` is the bench binary.
///
/// - The binary runs in the background and the shell forwards SIGTERM and SIGINT to it: the shell
///   is the container's PID 1, and PID 1 gets no signal it has no handler for, so without the
///   trap Kubernetes' SIGTERM (the Job's deadline, a deleted Job) would never reach the binary's
///   grace period, and SIGKILL would follow.
/// - Its JSON is printed between the markers only when it was written, so a shard that could not
///   run shows none (and its own error above), not an empty document.
/// - Exit codes 1 (a missed threshold, no success, `--fail-on-warning`) and 4 (inconclusive) end
///   the pod successfully: the shard ran its share, and the verdict belongs to the merged results. Any other failure fails the
///   pod, and with `backoffLimit: 0` the Job.
/// - It contains no `$(`: Kubernetes would read `$(NAME)` as one of its own variables.
pub fn wrapper_script() -> String {
    [
        "# $0 is the bench binary, \"$@\" its arguments. It runs in the background so that this shell,",
        "# PID 1, can hand SIGTERM on: PID 1 gets no signal it has no handler for.",
        "child=",
        "trap '[ -n \"$child\" ] && kill -TERM \"$child\" 2>/dev/null' TERM INT",
        "\"$0\" \"$@\" &",
        "child=$!",
        "wait \"$child\"",
        "code=$?",
        "# A trapped signal ends wait early: wait again for the binary's own exit code.",
        "while kill -0 \"$child\" 2>/dev/null; do wait \"$child\"; code=$?; done",
        "# A moment for the runtime to log the binary's last stderr lines before the markers.",
        "sleep 1",
        &format!("if [ -f {RESULTS_FILE} ]; then"),
        &format!("  echo '{BEGIN_MARKER}'"),
        &format!("  cat {RESULTS_FILE}"),
        "  echo",
        &format!("  echo '{END_MARKER}'"),
        "fi",
        "echo \"loadbench: the bench binary exited with code $code\"",
        "# 1 is a gate, 4 an inconclusive shard: it ran its share, and the merged results decide.",
        "if [ \"$code\" -eq 1 ] || [ \"$code\" -eq 4 ]; then exit 0; fi",
        "exit \"$code\"",
    ]
    .join("\n")
        + "\n"
}

/// The flags [`bench_args`] gives every pod, which the user's arguments may not give again: each
/// pod's `--shard` is its own, and a bench binary refuses a flag given twice, so every pod would
/// fail.
/// Each with where its value comes from.
pub const SET_FOR_EACH_POD: [(&str, &str); 4] = [
    ("--shard", "$(JOB_COMPLETION_INDEX)/N, from --shards N"),
    ("--start-at", "from --start-in"),
    ("--run-id", "the Job's name, --name"),
    ("--json", "the file each pod prints to its log"),
];

/// The first of the user's bench arguments (after `--`) that [`bench_args`] sets itself, with
/// where its value comes from, if any.
pub fn set_twice(user: &[String]) -> Option<(&'static str, &'static str)> {
    user.iter().find_map(|arg| {
        let flag = arg.split_once('=').map_or(arg.as_str(), |(flag, _)| flag);
        SET_FOR_EACH_POD.into_iter().find(|&(set, _)| set == flag)
    })
}

/// The bench binary's arguments in shard pods: the full load (`--bench`), this pod's shard, the
/// common start, the run's id (the Job's name), the results file, `--grace` when given, then the
/// user's.
pub fn bench_args(spec: &JobSpec<'_>) -> Vec<String> {
    let mut args: Vec<String> = vec![
        "--bench".into(),
        "--shard".into(),
        format!("$(JOB_COMPLETION_INDEX)/{}", spec.shards),
        "--start-at".into(),
        spec.start_at.into(),
        "--run-id".into(),
        spec.name.into(),
        "--json".into(),
        RESULTS_FILE.into(),
    ];
    if let Some(grace) = spec.grace {
        args.extend(["--grace".into(), format!("{}ms", grace.as_millis())]);
    }
    args.extend(spec.bench_args.iter().cloned());
    args
}

/// How long Kubernetes waits between SIGTERM and SIGKILL: the binary's grace period, then time
/// to cancel what is in flight, write the results and print them. The scenarios' own `grace`
/// is not known here, so at least 30 s is assumed (k6's `gracefulStop`, six times loadbench's
/// default), plus 30 s.
pub fn termination_grace(grace: Option<Duration>) -> u64 {
    let grace = grace.map_or(0, |g| g.as_secs_f64().ceil() as u64);
    grace.max(30) + 30
}

/// Whole seconds, rounded up, as Kubernetes' `…Seconds` fields take them.
fn seconds(duration: Duration) -> u64 {
    duration.as_secs() + u64::from(duration.subsec_nanos() > 0)
}

/// The Job of one run.
pub fn job(spec: &JobSpec<'_>) -> Value {
    let labels = json!({
        "app.kubernetes.io/name": "loadbench",
        "app.kubernetes.io/managed-by": "cargo-loadbench",
        RUN_LABEL: spec.name,
    });
    // Requests equal to limits make each pod Guaranteed: no neighbour takes its CPU mid-run, and
    // with the kubelet's static CPU manager a whole CPU is its alone.
    let quantities = json!({ "cpu": spec.cpu, "memory": spec.memory });
    let mut metadata = json!({
        "name": spec.name,
        "labels": labels,
        "annotations": { START_ANNOTATION: spec.start_at },
    });
    if let (Some(namespace), Some(map)) = (spec.namespace, metadata.as_object_mut()) {
        map.insert("namespace".into(), namespace.into());
    }
    json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": metadata,
        "spec": {
            "completionMode": "Indexed",
            "completions": spec.shards,
            "parallelism": spec.shards,
            // A failed shard is not run again: its share of the load would come late, alone.
            "backoffLimit": 0,
            "activeDeadlineSeconds": seconds(spec.deadline),
            "ttlSecondsAfterFinished": seconds(spec.keep_for),
            "template": {
                "metadata": { "labels": labels },
                "spec": {
                    "restartPolicy": "Never",
                    "terminationGracePeriodSeconds": termination_grace(spec.grace),
                    // The bench binary talks to the service under test, never to the API server.
                    "automountServiceAccountToken": false,
                    "enableServiceLinks": false,
                    "securityContext": {
                        "runAsNonRoot": true,
                        "runAsUser": USER_ID,
                        "runAsGroup": USER_ID,
                        "seccompProfile": { "type": "RuntimeDefault" },
                    },
                    // Preferred, not required: a cluster with fewer nodes than shards still runs.
                    "affinity": {
                        "podAntiAffinity": {
                            "preferredDuringSchedulingIgnoredDuringExecution": [{
                                "weight": 100,
                                "podAffinityTerm": {
                                    "labelSelector": { "matchLabels": { RUN_LABEL: spec.name } },
                                    "topologyKey": "kubernetes.io/hostname",
                                },
                            }],
                        },
                    },
                    "volumes": [{ "name": "tmp", "emptyDir": { "sizeLimit": "256Mi" } }],
                    "containers": [{
                        "name": CONTAINER,
                        "image": spec.image,
                        "command": ["/bin/sh", "-c", wrapper_script(), spec.binary],
                        "args": bench_args(spec),
                        // Kubernetes sets it in an Indexed Job anyway; written out, the manifest
                        // says where `$(JOB_COMPLETION_INDEX)` in the arguments comes from.
                        "env": [{
                            "name": "JOB_COMPLETION_INDEX",
                            "valueFrom": {
                                "fieldRef": {
                                    "fieldPath": format!("metadata.annotations['{INDEX_ANNOTATION}']"),
                                },
                            },
                        }],
                        "resources": { "requests": quantities, "limits": quantities },
                        "securityContext": {
                            "allowPrivilegeEscalation": false,
                            "readOnlyRootFilesystem": true,
                            "runAsNonRoot": true,
                            "capabilities": { "drop": ["ALL"] },
                        },
                        "volumeMounts": [{ "name": "tmp", "mountPath": "/tmp" }],
                    }],
                },
            },
        },
    })
}

/// The Job as the file `kube job` writes: pretty JSON, ending with a newline.
pub fn to_text(job: &Value) -> String {
    // A `Value` is always serializable; the fallback is never taken.
    serde_json::to_string_pretty(job).unwrap_or_default() + "\n"
}

/// A name for a run started at `now`: `loadbench-YYYYMMDD-HHMMSS` in UTC, a valid Job name that
/// sorts by time.
pub fn default_name(now: SystemTime) -> String {
    let digits: String = loadbench::report::rfc3339(now).chars().filter(char::is_ascii_digit).collect();
    let (date, time) = digits.split_at(digits.len().min(8));
    format!("loadbench-{date}-{time}")
}

/// The start instant, `start_in` after `now`, rounded up to the second: RFC 3339 in UTC.
pub fn start_at(now: SystemTime, start_in: Duration) -> String {
    let at = now + start_in;
    let into_second = at.duration_since(SystemTime::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
    let rounded = if into_second == 0 { at } else { at + Duration::from_nanos(u64::from(1_000_000_000 - into_second)) };
    loadbench::report::rfc3339(rounded)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec<'a>(args: &'a [String]) -> JobSpec<'a> {
        JobSpec {
            name: "run-1",
            namespace: Some("load"),
            image: "registry.example/bench:1",
            binary: "/usr/local/bin/bench",
            shards: 10,
            start_at: "2026-12-01T12:00:00Z",
            cpu: "1",
            memory: "512Mi",
            deadline: Duration::from_secs(1800),
            keep_for: Duration::from_secs(86_400),
            grace: None,
            bench_args: args,
        }
    }

    #[test]
    fn the_job_runs_n_indexed_shards_started_together() {
        let user = ["--target".to_owned(), "http://api:8080".to_owned(), "checkout".to_owned()];
        let job = job(&spec(&user));
        assert_eq!(job["metadata"]["namespace"], "load");
        assert_eq!(job["spec"]["completions"], 10);
        assert_eq!(job["spec"]["parallelism"], 10);
        assert_eq!(job["spec"]["completionMode"], "Indexed");
        assert_eq!(job["spec"]["backoffLimit"], 0);
        let container = &job["spec"]["template"]["spec"]["containers"][0];
        assert_eq!(
            container["args"],
            json!([
                "--bench",
                "--shard",
                "$(JOB_COMPLETION_INDEX)/10",
                "--start-at",
                "2026-12-01T12:00:00Z",
                "--run-id",
                "run-1",
                "--json",
                RESULTS_FILE,
                "--target",
                "http://api:8080",
                "checkout"
            ])
        );
        assert_eq!(container["command"][3], "/usr/local/bin/bench");
        assert_eq!(container["resources"]["requests"], container["resources"]["limits"]);
    }

    #[test]
    fn flags_the_job_sets_are_not_given_again() {
        let args = |list: &[&str]| list.iter().map(|a| (*a).to_owned()).collect::<Vec<_>>();
        assert_eq!(set_twice(&args(&["--target", "http://api:8080", "checkout"])), None);
        assert_eq!(set_twice(&args(&["checkout", "--shard", "1/3"])).map(|(flag, _)| flag), Some("--shard"));
        assert_eq!(set_twice(&args(&["--shard=1/3"])).map(|(flag, _)| flag), Some("--shard"));
        assert_eq!(set_twice(&args(&["--run-id", "x"])).map(|(flag, _)| flag), Some("--run-id"));
        assert_eq!(set_twice(&args(&["--json=/tmp/x.json"])).map(|(flag, _)| flag), Some("--json"));
        assert_eq!(set_twice(&args(&["--start-at", "1796119200"])).map(|(flag, _)| flag), Some("--start-at"));
    }

    #[test]
    fn no_namespace_leaves_it_to_kubectl() {
        let job = job(&JobSpec { namespace: None, ..spec(&[]) });
        assert!(job["metadata"].get("namespace").is_none());
    }

    #[test]
    fn grace_is_passed_on_and_waited_for() {
        let job = job(&JobSpec { grace: Some(Duration::from_secs(90)), ..spec(&[]) });
        let pod = &job["spec"]["template"]["spec"];
        assert_eq!(pod["terminationGracePeriodSeconds"], 120);
        let args = pod["containers"][0]["args"].as_array().cloned().unwrap_or_default();
        let at = args.iter().position(|a| a == "--grace").unwrap_or_else(|| panic!("no --grace: {args:?}"));
        assert_eq!(args[at + 1], "90000ms");
        assert_eq!(termination_grace(None), 60);
        assert_eq!(termination_grace(Some(Duration::from_millis(500))), 60);
    }

    #[test]
    fn the_script_has_no_kubernetes_variable_reference() {
        let script = wrapper_script();
        assert!(!script.contains("$("), "{script}");
        assert!(script.contains(BEGIN_MARKER) && script.contains(END_MARKER));
    }

    #[test]
    fn names_and_instants() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_millis(1_796_123_045_250);
        assert_eq!(default_name(now), "loadbench-20261201-110405");
        assert_eq!(start_at(now, Duration::from_secs(60)), "2026-12-01T11:05:06Z");
        let whole = SystemTime::UNIX_EPOCH + Duration::from_secs(1_796_123_045);
        assert_eq!(start_at(whole, Duration::from_secs(60)), "2026-12-01T11:05:05Z");
        assert_eq!(seconds(Duration::from_millis(1500)), 2);
    }
}
