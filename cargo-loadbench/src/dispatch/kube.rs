//! `cargo loadbench kube job` and `kube collect`: a distributed run on Kubernetes. `job` turns
//! flags into the Job (`kube::manifest`) and prints, writes or applies it; `collect` polls the Job
//! through kubectl, reads its pods' logs, takes each shard's results from between the markers
//! (`kube::logs`) and saves them for `cargo loadbench merge`. Neither runs any load itself, so
//! neither goes through `finish.rs`: the merged results do.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use loadbench::console::{err, out};
use loadbench::exit_code;

use crate::cli::{Args, CollectArgs, JobArgs, KubeArgs, KubeCommand, MergeArgs};
use crate::error::Error;
use crate::kube::kubectl::Kubectl;
use crate::kube::logs::{self, PodLog};
use crate::kube::manifest::{self, JobSpec};
use crate::kube::status::{self, JobState, Pod};
use crate::kube::{CONTAINER, RUN_LABEL};
use crate::output::Format;

/// How often `collect` asks for the Job's state: a load runs for minutes, and each question is a
/// request to the API server.
const POLL: Duration = Duration::from_secs(3);

/// Runs `cargo loadbench kube …` and returns the exit code.
pub fn run(args: &Args, kube: &KubeArgs) -> Result<u8, Error> {
    match &kube.command {
        KubeCommand::Job(job) => run_job(args, job),
        KubeCommand::Collect(collect) => run_collect(args, collect),
    }
}

/// The first flag of `cargo loadbench` given that `kube` would otherwise ignore: the bench
/// binary's flags go after `--` in `kube job`, and the merged results' options belong to `cargo
/// loadbench merge`. `--grace` is `kube job`'s (passed on, and waited for on SIGTERM); `--quiet`
/// quiets the notes.
fn refused_flag(args: &Args, grace: bool) -> Option<&'static str> {
    [
        ("--target", !args.targets.is_empty()),
        ("--runs", args.runs.is_some()),
        ("--grace", args.grace.is_some() && !grace),
        ("--watch", !args.watches.is_empty()),
        ("--watch-pid", !args.watch_pids.is_empty()),
        // `kube job` gives each pod its shard and the start itself.
        ("--shard", args.distributed.shard.is_some()),
        ("--start-at", args.distributed.start_at.is_some()),
        ("--histograms", args.distributed.histograms),
        ("--run-id", args.distributed.run_id.is_some()),
        (
            "a client flag (TLS, --connect-to, --connections, --pipeline, --follow-redirects)",
            !args.client.to_args().is_empty(),
        ),
        ("a scenario filter", !args.filters.is_empty()),
        ("--threshold", !args.thresholds.is_empty()),
        ("--fail-on-warning", args.fail_on_warning),
        ("--save-baseline", args.save_baseline.is_some()),
        ("--baseline", args.baseline.is_some()),
        ("--baseline-dir", args.baseline_dir.is_some()),
        ("--noise-threshold", args.noise_threshold.is_some()),
        ("--fail-on-regression", args.fail_on_regression),
        ("--no-fail-on-regression", args.no_fail_on_regression),
        ("--no-gate", args.no_gate),
        ("--allow-inconclusive", args.allow_inconclusive),
        ("--allow-failures", args.allow_failures),
        ("--format", args.format != Format::Table),
        ("--output", !args.outputs.is_empty()),
        ("--percentiles", args.percentiles.is_some()),
        ("--json", args.json.is_some()),
    ]
    .into_iter()
    .find_map(|(flag, given)| given.then_some(flag))
    .or_else(|| args.scenario_flag())
}

/// `kube job`: the Job, printed (stdout), written (`--output-dir`) or applied (`--apply`).
fn run_job(args: &Args, job: &JobArgs) -> Result<u8, Error> {
    if let Some(flag) = refused_flag(args, true) {
        return Err(Error::NotForKube { flag });
    }
    if let Some((flag, from)) = manifest::set_twice(&job.bench_args) {
        return Err(Error::KubeOptions(format!(
            "{flag} after `--`: kube job sets {flag} for each pod itself ({from}); leave it out"
        )));
    }
    if job.deadline <= job.start_in {
        return Err(Error::KubeOptions(format!(
            "--deadline {} is over before the shards start (--start-in {}): the deadline counts from the Job's creation",
            show(job.deadline),
            show(job.start_in)
        )));
    }
    let now = SystemTime::now();
    let name = job.name.clone().unwrap_or_else(|| manifest::default_name(now));
    let start_at = manifest::start_at(now, job.start_in);
    let spec = JobSpec {
        name: &name,
        namespace: job.namespace.as_deref(),
        image: &job.image,
        binary: &job.binary,
        shards: job.shards,
        start_at: &start_at,
        cpu: &job.cpu,
        memory: &job.memory,
        deadline: job.deadline,
        keep_for: job.keep_for,
        grace: args.grace,
        bench_args: &job.bench_args,
    };
    let text = manifest::to_text(&manifest::job(&spec));
    let file = job.output_dir.as_ref().map(|dir| dir.join("job.yaml"));
    if let Some(path) = &file {
        loadbench::report::write_atomic(path, text.as_bytes())
            .map_err(|e| Error::Output { path: path.clone(), reason: e.to_string() })?;
    } else if !job.apply {
        loadbench::console::print(&text);
    }
    if job.apply {
        Kubectl::new(None).apply(&text)?;
    }
    if !args.quiet {
        let collect = collect_command(&name, job.namespace.as_deref());
        let shards = job.shards;
        match (&file, job.apply) {
            (_, true) => err!("note: {shards} shards start at {start_at}; then: {collect}"),
            (Some(path), false) => err!(
                "note: wrote {}; its {shards} shards start at {start_at}: apply it before then (kubectl apply -f {}), then: {collect}",
                path.display(),
                path.display()
            ),
            (None, false) => err!(
                "note: the {shards} shards start at {start_at}: apply the Job before then (kubectl apply -f FILE), then: {collect}"
            ),
        }
    }
    Ok(exit_code::OK)
}

fn collect_command(name: &str, namespace: Option<&str>) -> String {
    let namespace = namespace.map(|ns| format!(" --namespace {ns}")).unwrap_or_default();
    format!("cargo loadbench kube collect --name {name}{namespace}")
}

/// A duration as a flag takes it back.
fn show(duration: Duration) -> String {
    format!("{}s", duration.as_secs_f64())
}

/// `kube collect`: waits for the Job, saves each shard's results, and merges them (or, with
/// `--no-merge` or shards missing, prints the merge command).
fn run_collect(args: &Args, collect: &CollectArgs) -> Result<u8, Error> {
    // Merging, the output and gating flags are the merge's, and it refuses the rest.
    let refused = if collect.no_merge { refused_flag(args, false) } else { args.run_flag() };
    if let Some(flag) = refused {
        return Err(Error::NotForKube { flag });
    }
    // Before the wait, which can be long: a typo in an output path should cost nothing.
    if !collect.no_merge {
        for path in args.outputs.iter().map(|o| o.path.clone()).chain(args.json.iter().cloned()) {
            loadbench::report::check_writable(&path).map_err(|reason| Error::Output { path, reason })?;
        }
    }
    let name = &collect.name;
    let kubectl = Kubectl::new(collect.namespace.as_deref());
    let (job, state) = wait(&kubectl, name, collect.timeout, args.quiet)?;
    let count = status::completions(&job)
        .ok_or_else(|| Error::KubeOptions(format!("job {name} has no spec.completions: it is not a loadbench run")))?;
    let selector = format!("{RUN_LABEL}={name}");
    let pods = status::pods(&kubectl.json(&["get", "pods", "-l", &selector])?);

    // A pod whose container never started has no log: kubectl says so, and its shard is missing.
    let mut texts = Vec::new();
    let mut unreadable = Vec::new();
    for pod in &pods {
        match kubectl.output(&["logs", &pod.name, "-c", CONTAINER]) {
            Ok(text) => texts.push((pod, text)),
            Err(Error::Kubectl { message, .. }) => unreadable.push((pod, message)),
            Err(other) => return Err(other),
        }
    }
    let pod_logs: Vec<PodLog<'_>> =
        texts.iter().map(|(pod, text)| PodLog { pod: &pod.name, index: pod.index, log: text }).collect();
    let gathered = logs::gather(count, &pod_logs).map_err(|e| Error::KubeResults { pod: e.pod, reason: e.reason })?;

    let dir = collect.dir.clone().unwrap_or_else(|| PathBuf::from(format!("loadbench-{name}")));
    for (index, text) in &gathered.shards {
        let path = dir.join(format!("shard-{index}.json"));
        loadbench::report::write_atomic(&path, text.as_bytes())
            .map_err(|e| Error::Output { path: path.clone(), reason: e.to_string() })?;
    }
    if !args.quiet {
        err!("saved the results of {} of {count} shards in {}", gathered.shards.len(), dir.display());
    }
    let merge = format!("cargo loadbench merge {}/shard-*.json", shell_word(&dir));
    let mut problems = Vec::new();
    if let JobState::Failed { reason, message } = &state {
        problems.push(format!("job {name} failed ({reason}: {message})"));
    }
    if !gathered.missing.is_empty() {
        let shards: Vec<String> =
            gathered.missing.iter().map(|&index| missing_shard(index, &pods, &unreadable)).collect();
        problems.push(format!("no results from {}", shards.join("; ")));
    }
    if problems.is_empty() {
        if collect.no_merge {
            out!("{merge}");
            return Ok(exit_code::OK);
        }
        if !args.quiet {
            err!("merging: {merge}");
        }
        let files = gathered.shards.keys().map(|index| dir.join(format!("shard-{index}.json"))).collect();
        return super::merge::run(args, &MergeArgs { files });
    }
    if !gathered.shards.is_empty() && !args.quiet {
        err!("the shards saved can be merged all the same: {merge}");
    }
    Err(Error::KubeIncomplete(format!(
        "{}; a merge of the {} saved shards misses the rest of the load",
        problems.join("; "),
        gathered.shards.len()
    )))
}

/// Polls the Job until it completes or fails, or `timeout` passes; a line on stderr whenever its
/// counts change. Polling rather than `kubectl wait --for=condition=complete`, which would wait
/// out its whole timeout for a Job that failed.
fn wait(kubectl: &Kubectl, name: &str, timeout: Duration, quiet: bool) -> Result<(serde_json::Value, JobState), Error> {
    let job_ref = format!("job/{name}");
    let started = Instant::now();
    let mut last = None;
    loop {
        let job = kubectl.json(&["get", &job_ref])?;
        let state = status::job_state(&job);
        let JobState::Running { active, succeeded, failed } = state else { return Ok((job, state)) };
        if !quiet && last != Some(state.clone()) {
            let total = status::completions(&job).unwrap_or(0);
            err!("job {name}: {succeeded} of {total} shards done, {active} running, {failed} failed");
        }
        let waited = started.elapsed();
        if waited >= timeout {
            return Err(Error::KubeTimeout { name: name.to_owned(), timeout: show(timeout) });
        }
        last = Some(state);
        std::thread::sleep(POLL.min(timeout - waited));
    }
}

/// Why shard `index` left no results, in a few words: its pod and how it ended.
fn missing_shard(index: u32, pods: &[Pod], unreadable: &[(&Pod, String)]) -> String {
    let Some(pod) = pods.iter().rev().find(|p| p.index == Some(index)) else {
        return format!("shard {index} (no pod left)");
    };
    if let Some((_, message)) = unreadable.iter().find(|(p, _)| p.name == pod.name) {
        return format!("shard {index} (pod {}, {}: {message})", pod.name, pod.phase);
    }
    let exit = pod.exit.as_ref().map(|(code, reason)| format!(", exit code {code} {reason}")).unwrap_or_default();
    format!("shard {index} (pod {}, {}{exit}; see kubectl logs {})", pod.name, pod.phase, pod.name)
}

/// `path` as one word of a POSIX shell command line: as it is when it has nothing the shell
/// reads, else in single quotes.
fn shell_word(path: &Path) -> String {
    let text = path.display().to_string();
    let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | '_' | '-' | '+' | ',' | ':' | '@');
    if !text.is_empty() && text.chars().all(plain) { text } else { format!("'{}'", text.replace('\'', r"'\''")) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_quoted_for_the_shell_only_when_needed() {
        assert_eq!(shell_word(Path::new("loadbench-run-1")), "loadbench-run-1");
        assert_eq!(shell_word(Path::new("/tmp/a b")), "'/tmp/a b'");
        assert_eq!(shell_word(Path::new("it's")), r"'it'\''s'");
    }

    #[test]
    fn a_missing_shard_says_what_became_of_its_pod() {
        let pod = |name: &str, index, exit| Pod { name: name.into(), index: Some(index), phase: "Failed".into(), exit };
        let pods = [pod("run-0-a", 0, Some((2, "Error".to_owned()))), pod("run-1-b", 1, None)];
        assert_eq!(
            missing_shard(0, &pods, &[]),
            "shard 0 (pod run-0-a, Failed, exit code 2 Error; see kubectl logs run-0-a)"
        );
        let unreadable = [(&pods[1], "container \"bench\" is waiting to start".to_owned())];
        assert_eq!(
            missing_shard(1, &pods, &unreadable),
            "shard 1 (pod run-1-b, Failed: container \"bench\" is waiting to start)"
        );
        assert_eq!(missing_shard(2, &pods, &[]), "shard 2 (no pod left)");
    }
}
