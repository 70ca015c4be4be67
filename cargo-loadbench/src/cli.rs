//! The command line of `cargo loadbench`.

use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;
use loadbench::console::err;
use loadbench::load;
use loadbench::threshold::Percentile;
use loadbench::watch::Watch;

pub use self::ab::{AbArgs, DEFAULT_ROUNDS, ScenarioSide};
pub use self::kube::{CollectArgs, JobArgs, KubeArgs, KubeCommand};
pub use self::merge::MergeArgs;
pub use self::report::ReportArgs;
pub use self::selection::TargetSelection;
pub use self::url::{Location, UrlArgs};
use crate::gate::CliThreshold;
use crate::output::{Format, OutputSpec};
use crate::settings;
use crate::targets::TargetArg;

/// This binary should be invoked as `cargo loadbench` (in which case this message will not be
/// seen), not as `cargo-loadbench`.
// Cargo runs `cargo-loadbench loadbench ARGS…` for `cargo loadbench ARGS…`; this wrapper consumes
// the `loadbench` word so that help and errors read `cargo loadbench …`. clap's `help` command is
// kept: disabling it here would disable it below too, and `cargo loadbench help` would be taken
// for a scenario filter.
#[derive(Debug, Parser)]
#[command(name = "cargo", bin_name = "cargo")]
pub enum Cargo {
    /// Build and run the loadbench scenarios of a workspace.
    Loadbench(Args),
}

const AFTER_HELP: &str = "\
Scenarios run one bench binary at a time, in the binary's package directory, like `cargo bench`.

A regression is a change of it/s (successful iterations per second), p50, p99 or success rate
beyond --noise-threshold (three times it for p99); a lower success rate is a regression whatever
the speed. With --runs 2 or more on both sides, its whole 95% bootstrap confidence interval must
lie beyond it. A baseline is saved only when every scenario succeeded in at least 50% of its
iterations.

Exit codes:
  0    every selected scenario ran (failed requests are counted in the results, not fatal)
  1    a gate failed: a threshold, a regression with --fail-on-regression, or a scenario that
       measured nothing (no HTTP exchange) with --fail-on-warning; never with --no-gate, which
       reports them and exits 0
  2    usage, configuration or build error, a filter that matches nothing (exit 0 with
       --allow-no-scenarios, as for a workspace without loadbench bench targets), a bad threshold,
       an output file that cannot be written, a missing, unreadable or untrustworthy
       baseline, or one not saved for too few successes
  3    some scenario could not run (its setup failed or its bench binary crashed)
  130  interrupted by Ctrl-C (SIGINT): the results so far are still printed and written,
       marked interrupted
  143  stopped by SIGTERM, likewise
  129  stopped by SIGHUP (the terminal or ssh session closed), likewise: the results are
       written to their files even when the terminal is gone

A first Ctrl-C, SIGTERM or SIGHUP stops starting iterations; those in flight get the grace period
(--grace), then are cancelled. A second one cancels them at once and reports what was gathered.";

impl Args {
    /// The first flag given that only applies to a workspace's scenarios, which `url` refuses
    /// rather than ignores.
    pub fn scenario_flag(&self) -> Option<&'static str> {
        [
            ("--exact", self.exact),
            ("--list", self.list),
            ("--package", !self.selection.packages.is_empty()),
            ("--bench", !self.selection.benches.is_empty()),
            ("--manifest-path", self.selection.manifest_path.is_some()),
            ("--allow-no-scenarios", self.allow_no_scenarios),
            ("--remote-write", self.remote_write.given()),
        ]
        .into_iter()
        .find_map(|(flag, given)| given.then_some(flag))
    }

    /// The first flag given that only applies to a run, which `report` refuses rather than
    /// ignores: it runs nothing.
    pub fn run_flag(&self) -> Option<&'static str> {
        let client = self.client.to_args();
        [
            ("--target", !self.targets.is_empty()),
            ("--runs", self.runs.is_some()),
            ("--grace", self.grace.is_some()),
            ("--watch", !self.watches.is_empty()),
            ("--watch-pid", !self.watch_pids.is_empty()),
            ("--shard", self.distributed.shard.is_some()),
            ("--start-at", self.distributed.start_at.is_some()),
            ("--histograms", self.distributed.histograms),
            ("--run-id", self.distributed.run_id.is_some()),
            ("a client flag (TLS, --connect-to, --connections, --pipeline, --follow-redirects)", !client.is_empty()),
            ("a scenario filter", !self.filters.is_empty()),
        ]
        .into_iter()
        .find_map(|(flag, given)| given.then_some(flag))
        .or_else(|| self.scenario_flag())
    }

    /// Every process to watch, from `--watch` and `--watch-pid`.
    pub fn watched(&self) -> Vec<Watch> {
        let by_pid = self.watch_pids.iter().map(|&pid| Watch { name: "server".to_owned(), pid });
        self.watches.iter().cloned().chain(by_pid).collect()
    }
}

/// Arguments of `cargo loadbench`.
#[derive(Debug, clap::Args)]
#[command(version, after_help = AFTER_HELP)]
pub struct Args {
    /// Run only scenarios whose name contains one of these strings.
    #[arg(value_name = "FILTER")]
    pub filters: Vec<String>,

    /// Match filters against whole scenario names.
    #[arg(long)]
    pub exact: bool,

    /// List the selected scenarios and their load instead of running them.
    #[arg(long)]
    pub list: bool,

    /// Base URL of the server under test (overrides LOADBENCH_TARGET and `target = "…"`).
    /// Repeat as NAME=URL to run every scenario (or `url`'s request) against each server, side
    /// by side, compared with the first
    #[arg(long = "target", value_name = "[NAME=]URL", value_parser = TargetArg::parse)]
    pub targets: Vec<TargetArg>,

    /// Do not show progress while scenarios run.
    #[arg(short, long, global = true)]
    pub quiet: bool,

    /// How long iterations in flight may go on after a duration-bound run's end, or after the
    /// first Ctrl-C or SIGTERM, before they are cancelled (counted as `cancelled`, not failed)
    /// [default: the scenario's `grace`, else 5s]
    #[arg(long, value_name = "TIME", value_parser = parse_duration, global = true)]
    pub grace: Option<Duration>,

    #[command(flatten)]
    pub client: loadbench::cli::ClientArgs,

    // `--shard I/N`, `--start-at TIME`, `--histograms`: passed on to every bench binary (the
    // start only to the first), or applied to `url`'s own run.
    #[command(flatten)]
    pub distributed: loadbench::cli::DistributedArgs,

    // `--remote-write URL` and its companions: passed on to every bench binary.
    #[command(flatten)]
    pub remote_write: loadbench::cli::RemoteWriteArgs,

    /// Sample this process and its children (CPU, resident memory) while each scenario runs,
    /// as NAME=PID (repeatable)
    #[arg(long = "watch", value_name = "NAME=PID", help_heading = "Server resources", global = true)]
    pub watches: Vec<Watch>,

    /// The same as --watch server=PID
    #[arg(long = "watch-pid", value_name = "PID", help_heading = "Server resources", global = true)]
    pub watch_pids: Vec<u32>,

    /// Run every selected scenario N times, in rounds (each scenario once per round), so that
    /// verdicts can weigh the spread across runs [default: 1]
    #[arg(long, value_name = "N", value_parser = parse_runs, help_heading = "Gating", global = true)]
    pub runs: Option<u32>,

    /// A pass/fail condition such as `hello:p99<50ms`, or `error_rate<0.01` for every scenario
    /// (repeatable). Metrics: p50 p90 p95 p99 p99_9 (any pNN or pNN_N: p75, p99_99) max mean
    /// error_rate rps failed. On a step or named request, its name in braces: `hello{login}:p99<1s`,
    /// or `{login}:p99<1s` in every scenario (braces in the name in pairs: `{GET /items/{id}}:p99<1s`)
    #[arg(
        long = "threshold",
        value_name = "[SCENARIO:|[SCENARIO]{ROW}:]CONDITION",
        value_parser = CliThreshold::parse,
        help_heading = "Gating",
        global = true
    )]
    pub thresholds: Vec<CliThreshold>,

    /// Exit with code 1 when a scenario measured nothing: no HTTP exchange, or iterations faster
    /// than a network round trip (a body that forgot `.send().await`)
    #[arg(long, help_heading = "Gating", global = true)]
    pub fail_on_warning: bool,

    /// Save the results as baseline NAME
    #[arg(long, value_name = "NAME", value_parser = parse_baseline_name, help_heading = "Gating", global = true)]
    pub save_baseline: Option<String>,

    /// Compare the results with baseline NAME: change columns and a verdict per scenario
    #[arg(long, value_name = "NAME", value_parser = parse_baseline_name, help_heading = "Gating", global = true)]
    pub baseline: Option<String>,

    /// Where baselines are kept [default: <target-dir>/loadbench/baselines]
    #[arg(long, value_name = "DIR", help_heading = "Gating", global = true)]
    pub baseline_dir: Option<PathBuf>,

    /// Changes smaller than this many percent count as noise [default: 5]
    #[arg(long, value_name = "PERCENT", value_parser = parse_noise, help_heading = "Gating", global = true)]
    pub noise_threshold: Option<f64>,

    /// Exit with code 1 when a scenario regressed against --baseline
    #[arg(long, overrides_with = "no_fail_on_regression", help_heading = "Gating", global = true)]
    pub fail_on_regression: bool,

    /// Show regressions without failing (overrides `fail-on-regression = true` in Cargo.toml)
    #[arg(long, overrides_with = "fail_on_regression", help_heading = "Gating", global = true)]
    pub no_fail_on_regression: bool,

    /// Report missed thresholds, regressions and warnings but never fail the run on them (exit
    /// code 0 unless something could not run): for the step that only measures a base to save
    /// as a baseline
    #[arg(long, help_heading = "Gating", global = true)]
    pub no_gate: bool,

    /// Exit with code 0, not 4, when the run is inconclusive: the generator was saturated, dropped
    /// more than 1% of the arrivals, or reached more than 5% below the asked rate (the run is
    /// still marked inconclusive in every output)
    #[arg(long, help_heading = "Gating", global = true)]
    pub allow_inconclusive: bool,

    /// Exit with code 0, not 1, when a scenario had no successful iteration, for a chaos test (it
    /// is still marked failed in every output)
    #[arg(long, help_heading = "Gating", global = true)]
    pub allow_failures: bool,

    /// A workspace with no bench target using loadbench, or no scenario selected, is not an
    /// error: exit 0 with a note, and save an empty baseline with --save-baseline (the base of
    /// the pull request that introduces loadbench)
    #[arg(long, help_heading = "Gating")]
    pub allow_no_scenarios: bool,

    /// What to print on stdout: table, json, csv, markdown, junit or html
    #[arg(
        long,
        value_name = "FORMAT",
        value_enum,
        default_value_t = Format::Table,
        hide_possible_values = true,
        help_heading = "Output",
        global = true
    )]
    pub format: Format,

    /// Also write the results to FILE (repeatable), in the format its extension names (.json,
    /// .csv, .md, .xml for JUnit, .html for the report with charts, .txt for the table) or the
    /// one given as FORMAT:FILE
    #[arg(short = 'o', long = "output", value_name = "[FORMAT:]FILE", value_parser = OutputSpec::parse, help_heading = "Output", global = true)]
    pub outputs: Vec<OutputSpec>,

    /// The latency percentiles the table and the Markdown show, as columns before `max`, such as
    /// 50,95,99.9 (also measured, and in the JSON) [default: 50,95,99]
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        value_parser = parse_percentile,
        help_heading = "Output",
        global = true
    )]
    pub percentiles: Option<Vec<Percentile>>,

    /// Also write the results as JSON to FILE (the same as --output json:FILE)
    #[arg(long, value_name = "FILE", help_heading = "Output", global = true)]
    pub json: Option<PathBuf>,

    // `-p`, `--bench`, `--manifest-path`.
    #[command(flatten)]
    pub selection: TargetSelection,

    /// `url`, `report`, …: the other commands (a filter that is literally one of their names,
    /// `help` too, goes after `--`: `cargo loadbench -- url`).
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// The subcommands of `cargo loadbench`; without one, it runs the workspace's scenarios.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Compare the working tree (or --head REV) with BASE_REV: both built, each against its own
    /// server, in interleaved rounds on this machine
    ///
    /// Compare two commits of this git repository, as CI compares a pull request with its base:
    /// BASE_REV is checked out in a worktree of its own, both sides are built by the same
    /// toolchain, each side measures its own server (its bench binary's, or its service started
    /// with --serve CMD), and every round runs each scenario on both sides back to back, in
    /// alternating order. The verdict is on the rounds' paired ratios.
    // Boxed, as `Url`.
    Ab(Box<AbArgs>),
    /// Send one request under load, as ab or oha do (no Cargo workspace needed)
    ///
    /// Send one request under load, as ab, wrk or oha would, measured and reported as scenarios
    /// are: the same table, JSON, thresholds, baselines and outputs. No Cargo workspace needed.
    // Boxed: `UrlArgs` is ten times the size of `ReportArgs`, and clap parses it once.
    Url(Box<UrlArgs>),
    /// Render saved results (JSON files) again, such as an HTML report from a CI artifact
    ///
    /// Render saved results again, without running anything: the JSON files that `--output` or
    /// `--json` wrote (a CI artifact, the runs of several commits), in any output format, with
    /// thresholds, baselines and verdicts applied as after a run.
    Report(ReportArgs),
    /// Merge the shards of a distributed run (--shard I/N) into one results document
    ///
    /// Merge the results of the shards of a distributed run (`--shard I/N` on each machine) into
    /// the results of the whole run, exactly: counts added up, percentiles from the shards'
    /// histograms added up, timelines lined up by wall clock; then shown, gated and written as
    /// after a run.
    Merge(MergeArgs),
    /// Run the shards of a distributed run as a Kubernetes Job, and collect their results
    ///
    /// A distributed run on Kubernetes: `kube job` writes (or applies) an Indexed Job whose pods
    /// each run one shard (`--shard I/N --start-at TIME`), `kube collect` waits for it and saves
    /// each shard's results from its pod's log for `cargo loadbench merge`.
    // Boxed, as `Url`: `kube job`'s flags are ten times the size of the other commands'.
    Kube(Box<KubeArgs>),
}

/// Reports a command-line error as one line, exit code 2 (help and the version print in full,
/// exit code 0): the fix for a flag users reach for that is spelled another way, else the one
/// line every loadbench command line prints.
pub fn report_usage_error(err: &clap::Error) -> std::process::ExitCode {
    match hints::mistaken_flag(err) {
        Some(line) => {
            err!("{line}");
            std::process::ExitCode::from(loadbench::exit_code::USAGE)
        }
        None => loadbench::cli::report_usage_error(err),
    }
}

/// A time such as `30s`, `1m 30s` or `500ms`; more than zero, as the attribute takes it.
pub(crate) fn parse_duration(text: &str) -> Result<Duration, String> {
    load::parse_duration(text).map_err(|e| e.to_string())
}

/// `--runs`: a whole number from 1 to [`settings::MAX_RUNS`].
fn parse_runs(text: &str) -> Result<u32, String> {
    let runs: u32 = text.parse().map_err(|_| format!("expected a whole number from 1 to {}", settings::MAX_RUNS))?;
    settings::check_runs(runs)
}

impl Args {
    /// The latency percentiles a run must measure for this command line: the `--percentiles`
    /// columns and those the `--threshold`s test.
    pub fn measured_percentiles(&self) -> Vec<Percentile> {
        let columns = self.percentiles.iter().flatten().copied();
        let mut all: Vec<Percentile> =
            columns.chain(self.thresholds.iter().filter_map(|t| t.threshold.metric.percentile())).collect();
        all.sort_unstable();
        all.dedup();
        all
    }
}

/// One percentile of `--percentiles 50,95,99.9`, as a bench binary reads it.
fn parse_percentile(text: &str) -> Result<Percentile, String> {
    Percentile::parse_percent(text).map_err(|e| e.to_string())
}

/// `--noise-threshold`: a percentage, with or without `%`.
fn parse_noise(text: &str) -> Result<f64, String> {
    let number = text.trim().trim_end_matches('%').trim();
    let percent: f64 = number.parse().map_err(|_| "expected a percentage such as 5 or 2.5%".to_owned())?;
    settings::check_noise(percent)
}

/// A baseline name becomes a directory name, so it is kept to characters that are safe in one
/// on every platform, and cannot climb out of the baseline directory.
fn parse_baseline_name(name: &str) -> Result<String, String> {
    let safe = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    if name.is_empty() || name.starts_with('.') || !name.chars().all(safe) {
        return Err("a baseline name is letters, digits, `-`, `_` and `.`, not starting with `.`".to_owned());
    }
    Ok(name.to_owned())
}

mod ab;
#[cfg(test)]
mod agreement;
#[cfg(test)]
mod help_blocks;
mod hints;
mod kube;
mod merge;
mod report;
mod selection;
mod url;

#[cfg(test)]
mod tests;
