//! The command line of `cargo loadbench kube`: `job` writes the manifest of a distributed run,
//! `collect` gathers its shards' results. What they do is in `dispatch/kube.rs`, the manifest and
//! the pure parts in `kube/`.

use std::path::PathBuf;
use std::time::Duration;

use loadbench::cli::MAX_START_AHEAD;

use super::parse_duration;

/// The bench binary's path in the image `examples/kubernetes/Dockerfile` builds.
pub const DEFAULT_BINARY: &str = "/usr/local/bin/bench";

/// The most shards a run can have: far beyond what one load needs, and far below Kubernetes'
/// limit for an Indexed Job (100,000 completions), so a typo (`--shards 1000000`) is caught here.
pub const MAX_SHARDS: u32 = 1000;

const KUBE_AFTER_HELP: &str = "\
A distributed run: `kube job` writes an Indexed Job whose N pods each run the bench binary with
--shard $(JOB_COMPLETION_INDEX)/N --start-at TIME, so that the shards share every scenario's load
and start together; each pod prints its results to its log between marker lines. `kube collect`
waits for the Job, reads the logs, saves shard-I.json files and prints the `cargo loadbench
merge` command that makes one table, one JSON and one verdict of them.

The image and a walk-through: examples/kubernetes/README.md. kubectl is taken from PATH, or from
LOADBENCH_KUBECTL.";

/// Arguments of `cargo loadbench kube`.
#[derive(Debug, clap::Args)]
#[command(after_help = KUBE_AFTER_HELP)]
pub struct KubeArgs {
    /// `job` or `collect`.
    #[command(subcommand)]
    pub command: KubeCommand,
}

/// The subcommands of `cargo loadbench kube`.
#[derive(Debug, clap::Subcommand)]
pub enum KubeCommand {
    /// Write (or apply) the Kubernetes Job of a distributed run of N shards
    Job(JobArgs),
    /// Wait for a run's Job, save each shard's results from its pod's log and merge them
    Collect(CollectArgs),
}

const JOB_AFTER_HELP: &str = "\
Writes one batch/v1 Job as JSON, which is YAML too: `kubectl apply -f` takes it as it is. Each
shard gets --cpu and --memory as both request and limit (a Guaranteed pod: a whole, predictable
CPU), shards prefer distinct nodes, a failed shard is not retried (its share would run late), and
the pods run as a non-root user on a read-only root filesystem. The bench binary's exit code 1 (a
missed threshold) does not fail its pod: the verdict is the merged results'.

The shards start at one instant, now + --start-in: apply the Job before then (pulling the image
and scheduling the pods take that long at most). Arguments after `--` go to the bench binary:
`-- --target http://api:8080 checkout`.

Exit codes: 0 written (and applied), 2 a bad flag, a file that cannot be written, kubectl
missing or refusing the Job.";

/// Arguments of `cargo loadbench kube job`.
#[derive(Debug, clap::Args)]
#[command(after_help = JOB_AFTER_HELP)]
pub struct JobArgs {
    /// How many shards (pods) share the load, from 1 to 1000
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_SHARDS)))]
    pub shards: u32,

    /// The container image holding the bench binary (examples/kubernetes/Dockerfile builds one)
    #[arg(long, value_name = "IMAGE", value_parser = parse_image)]
    pub image: String,

    /// The Job's name, also the `loadbench.dev/run` label of its pods [default:
    /// loadbench-YYYYMMDD-HHMMSS, now in UTC]
    #[arg(long, value_name = "NAME", value_parser = parse_name)]
    pub name: Option<String>,

    /// The namespace to run in [default: kubectl's current one]
    #[arg(short = 'n', long, value_name = "NS", value_parser = parse_name)]
    pub namespace: Option<String>,

    /// When the shards start, from now: time to apply the Job, pull the image and schedule every
    /// pod, such as 60s or 2m; 24h at most
    #[arg(long, value_name = "TIME", default_value = "60s", value_parser = parse_start_in)]
    pub start_in: Duration,

    /// CPU of each shard, requested and limited alike (a Kubernetes quantity: 1, 2, 500m)
    #[arg(long, value_name = "CPU", default_value = "1", value_parser = parse_cpu)]
    pub cpu: String,

    /// Memory of each shard, requested and limited alike (a Kubernetes quantity: 512Mi, 2Gi; a
    /// bare number is bytes), 16Mi at least
    #[arg(long, value_name = "MEMORY", default_value = "512Mi", value_parser = parse_memory)]
    pub memory: String,

    /// The Job's whole time, from its creation (the wait for --start-in included), after which
    /// Kubernetes stops every shard still running
    #[arg(long, value_name = "TIME", default_value = "30m", value_parser = parse_duration)]
    pub deadline: Duration,

    /// How long Kubernetes keeps the finished Job and its pods (and their logs, which `kube
    /// collect` reads) before deleting them
    #[arg(long, value_name = "TIME", default_value = "24h", value_parser = parse_duration)]
    pub keep_for: Duration,

    /// The bench binary's path in the image
    #[arg(long, value_name = "PATH", default_value = DEFAULT_BINARY)]
    pub binary: String,

    /// Pipe the Job to `kubectl apply -f -` instead of printing it
    #[arg(long)]
    pub apply: bool,

    /// Write the Job to DIR/job.yaml instead of printing it
    #[arg(long, value_name = "DIR")]
    pub output_dir: Option<PathBuf>,

    /// Arguments of the bench binary: scenario filters, --target URL, --scale, …
    #[arg(last = true, value_name = "BENCH_ARGS")]
    pub bench_args: Vec<String>,
}

const COLLECT_AFTER_HELP: &str = "\
Polls the Job until it completes or fails, reads the log of each of its pods, takes the results
each shard printed between `--- loadbench results begin ---` and `--- loadbench results end ---`
and writes them to DIR/shard-I.json (I from 0). When every shard's are there, it merges them as
`cargo loadbench merge DIR/shard-*.json` would: one table, and the output, threshold and baseline
options of `cargo loadbench` apply to the whole run (`--output merged.html --threshold
p99<50ms`). With --no-merge it prints that command instead.

Exit codes: 0 every shard's results saved (and merged), 1 a gate failed on the merged results, 2
a bad flag, kubectl missing or failing, a log with a begin marker and no end marker, a file that
cannot be written, shards that do not merge, --timeout reached; 3 the Job failed or a shard left
no results (those found are saved all the same), or a scenario could not run on some shard.";

/// Arguments of `cargo loadbench kube collect`.
#[derive(Debug, clap::Args)]
#[command(after_help = COLLECT_AFTER_HELP)]
pub struct CollectArgs {
    /// The Job's name, as `kube job --name` gave it or printed it
    #[arg(long, value_name = "NAME", value_parser = parse_name)]
    pub name: String,

    /// The Job's namespace [default: kubectl's current one]
    #[arg(short = 'n', long, value_name = "NS", value_parser = parse_name)]
    pub namespace: Option<String>,

    /// Where to write shard-I.json [default: loadbench-NAME]
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,

    /// How long to wait for the Job to finish
    #[arg(long, value_name = "TIME", default_value = "1h", value_parser = parse_duration)]
    pub timeout: Duration,

    /// Only save the shards' results and print the `cargo loadbench merge` command
    #[arg(long)]
    pub no_merge: bool,
}

/// A name Kubernetes takes for a Job, a namespace and a label value alike: an RFC 1123 label
/// (lowercase letters, digits and `-`, at most 63, starting and ending with a letter or digit).
/// Checked here so that a bad one is a usage error, not a refusal from the cluster later.
pub fn parse_name(text: &str) -> Result<String, String> {
    let allowed = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-';
    let ends_ok = !text.starts_with('-') && !text.ends_with('-');
    if text.is_empty() || text.len() > 63 || !ends_ok || !text.chars().all(allowed) {
        return Err(format!(
            "`{text}` is not a Kubernetes name: lowercase letters, digits and `-`, at most 63, not starting or ending with `-`"
        ));
    }
    Ok(text.to_owned())
}

/// An image reference: anything Kubernetes may resolve, but not empty and without spaces.
fn parse_image(text: &str) -> Result<String, String> {
    if text.is_empty() || text.chars().any(char::is_whitespace) {
        return Err(format!("`{text}` is not an image reference"));
    }
    Ok(text.to_owned())
}

/// A CPU quantity: a decimal number of CPUs, or of millicores with `m` (`1`, `1.5`, `500m`),
/// above zero.
fn parse_cpu(text: &str) -> Result<String, String> {
    let number = text.strip_suffix('m').unwrap_or(text);
    quantity(number)
        .then(|| text.to_owned())
        .ok_or_else(|| format!("`{text}` is not a CPU quantity such as 1, 2 or 500m"))
}

/// The least memory a shard may be given: a bench binary's runtime, its worker threads' stacks
/// and buffers take several MiB before a request is sent, so below this the pod is killed for
/// memory at its start. `--memory 12` is 12 bytes to Kubernetes, not 12 GiB or MiB.
pub const MIN_MEMORY_BYTES: u64 = 16 << 20;

/// A memory quantity as Kubernetes reads it: a number of bytes with an optional suffix, binary
/// (`512Mi`, `2Gi`) or decimal (`1G`, `500M`), of at least [`MIN_MEMORY_BYTES`] (16Mi).
fn parse_memory(text: &str) -> Result<String, String> {
    const SUFFIXES: [(&str, f64); 12] = [
        ("Ki", 1024.0),
        ("Mi", 1_048_576.0),
        ("Gi", 1_073_741_824.0),
        ("Ti", 1_099_511_627_776.0),
        ("Pi", 1_125_899_906_842_624.0),
        ("Ei", 1_152_921_504_606_846_976.0),
        ("k", 1e3),
        ("M", 1e6),
        ("G", 1e9),
        ("T", 1e12),
        ("P", 1e15),
        ("E", 1e18),
    ];
    let (number, unit) =
        SUFFIXES.iter().find_map(|&(s, unit)| Some((text.strip_suffix(s)?, unit))).unwrap_or((text, 1.0));
    if !quantity(number) {
        return Err(format!("`{text}` is not a memory quantity such as 512Mi or 2Gi"));
    }
    let bytes = number.parse::<f64>().map_or(0.0, |n| n * unit);
    if bytes < MIN_MEMORY_BYTES as f64 {
        return Err(format!(
            "`{text}` is {bytes} bytes of memory, less than the 16Mi a shard needs: give a quantity with its unit, such as 512Mi or 2Gi"
        ));
    }
    Ok(text.to_owned())
}

/// Whether `number` is a plain decimal number above zero (`1`, `0.5`), as quantities write it.
fn quantity(number: &str) -> bool {
    let (whole, fraction) = number.split_once('.').unwrap_or((number, "0"));
    let digits = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    digits(whole) && digits(fraction) && number.chars().any(|c| ('1'..='9').contains(&c))
}

/// `--start-in`: at most what a shard's `--start-at` takes.
fn parse_start_in(text: &str) -> Result<Duration, String> {
    let start_in = parse_duration(text)?;
    if start_in > MAX_START_AHEAD {
        return Err(format!("`{text}` is more than the 24h a shard waits for its start at most"));
    }
    Ok(start_in)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_start_is_at_most_a_day_ahead() {
        assert_eq!(parse_start_in("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_start_in("24h"), Ok(MAX_START_AHEAD));
        assert!(parse_start_in("25h").is_err_and(|e| e.contains("24h")));
    }

    #[test]
    fn names_are_rfc_1123_labels() {
        for good in ["a", "loadbench-20261201-110405", "x1", &"a".repeat(63)] {
            assert_eq!(parse_name(good).as_deref(), Ok(good), "{good}");
        }
        for bad in ["", "-a", "a-", "A", "a_b", "a.b", &"a".repeat(64)] {
            assert!(parse_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn quantities_are_checked_before_the_cluster_sees_them() {
        for good in ["1", "2", "0.5", "500m", "1.5"] {
            assert!(parse_cpu(good).is_ok(), "{good}");
        }
        for bad in ["", "0", "0m", "m", "1 cpu", "-1", "1.", ".5", "1Gi"] {
            assert!(parse_cpu(bad).is_err(), "{bad}");
        }
        for good in ["512Mi", "2Gi", "1G", "100000000", "1.5Gi", "16Mi", "17M", "16384Ki"] {
            assert!(parse_memory(good).is_ok(), "{good}");
        }
        for bad in ["", "0Mi", "Mi", "512 Mi", "512MB", "-1Gi", "12", "1000000", "15Mi", "16M", "0.01Gi"] {
            assert!(parse_memory(bad).is_err(), "{bad}");
        }
        assert_eq!(
            parse_memory("12"),
            Err("`12` is 12 bytes of memory, less than the 16Mi a shard needs: give a quantity with its unit, such as 512Mi or 2Gi".to_owned())
        );
    }

    #[test]
    fn images_have_no_spaces() {
        assert!(parse_image("registry.example/bench:1").is_ok());
        assert!(parse_image("").is_err());
        assert!(parse_image("a b").is_err());
    }
}
