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
    /// error_rate rps failed
    #[arg(
        long = "threshold",
        value_name = "[SCENARIO:]CONDITION",
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
mod tests {
    use super::url::Body;
    use super::*;
    use loadbench::Method;

    #[test]
    fn verify_app() {
        use clap::CommandFactory;
        Cargo::command().debug_assert();
    }

    #[test]
    fn parses_the_subcommand_form_cargo_uses() {
        let parsed = Cargo::try_parse_from([
            "cargo-loadbench",
            "loadbench",
            "hello",
            "-p",
            "shop",
            "--bench",
            "api",
            "--target",
            "http://127.0.0.1:1",
        ]);
        let Ok(Cargo::Loadbench(args)) = parsed else { panic!("{parsed:?}") };
        assert_eq!(args.filters, ["hello"]);
        assert_eq!(args.selection.packages, ["shop"]);
        assert_eq!(args.selection.benches, ["api"]);
        assert_eq!(args.targets, [TargetArg { name: None, url: "http://127.0.0.1:1".into() }]);
        assert!(!args.list && !args.exact && !args.quiet);
    }

    #[test]
    fn gating_and_output_flags() {
        let parsed = Cargo::try_parse_from([
            "cargo-loadbench",
            "loadbench",
            "--runs",
            "3",
            "--baseline",
            "main",
            "--save-baseline",
            "pr-12",
            "--noise-threshold",
            "2.5%",
            "--fail-on-regression",
            "--threshold",
            "hello:p99<50ms",
            "--threshold",
            "error_rate<0.01",
            "--format",
            "markdown",
            "--output",
            "out.xml",
            "--output",
            "csv:results.txt",
        ]);
        let Ok(Cargo::Loadbench(args)) = parsed else { panic!("{parsed:?}") };
        assert_eq!(args.runs, Some(3));
        assert_eq!(args.baseline.as_deref(), Some("main"));
        assert_eq!(args.save_baseline.as_deref(), Some("pr-12"));
        assert_eq!(args.noise_threshold, Some(2.5));
        assert!(args.fail_on_regression);
        assert_eq!(args.thresholds.len(), 2);
        assert_eq!(args.thresholds[0].scenario.as_deref(), Some("hello"));
        assert_eq!(args.thresholds[1].scenario, None);
        assert_eq!(args.format, Format::Markdown);
        let outputs: Vec<(Format, String)> =
            args.outputs.iter().map(|o| (o.format, o.path.display().to_string())).collect();
        assert_eq!(outputs, [(Format::Junit, "out.xml".to_owned()), (Format::Csv, "results.txt".to_owned())]);
    }

    #[test]
    fn targets_repeat_with_names() {
        let parsed = Cargo::try_parse_from([
            "cargo-loadbench",
            "loadbench",
            "--target",
            "fast=http://127.0.0.1:1",
            "--target",
            "slow=http://127.0.0.1:2/api",
        ]);
        let Ok(Cargo::Loadbench(args)) = parsed else { panic!("{parsed:?}") };
        let named: Vec<(Option<&str>, &str)> =
            args.targets.iter().map(|t| (t.name.as_deref(), t.url.as_str())).collect();
        assert_eq!(named, [(Some("fast"), "http://127.0.0.1:1"), (Some("slow"), "http://127.0.0.1:2/api")]);
    }

    #[test]
    fn the_last_of_fail_and_no_fail_on_regression_wins() {
        let parse = |flags: &[&str]| {
            let args = ["cargo-loadbench", "loadbench"].iter().chain(flags).copied();
            match Cargo::try_parse_from(args) {
                Ok(Cargo::Loadbench(args)) => (args.fail_on_regression, args.no_fail_on_regression),
                Err(err) => panic!("{flags:?}: {err}"),
            }
        };
        assert_eq!(parse(&[]), (false, false));
        assert_eq!(parse(&["--fail-on-regression", "--no-fail-on-regression"]), (false, true));
        assert_eq!(parse(&["--no-fail-on-regression", "--fail-on-regression"]), (true, false));
    }

    #[test]
    fn bad_gating_values_are_one_line_usage_errors() {
        for (flag, value, message) in [
            ("--threshold", "hello:p100<5ms", "unknown metric `p100`"),
            ("--threshold", "p99<50", "p99 takes a duration such as 50ms"),
            ("--runs", "0", "runs must be from 1 to 1000, not 0"),
            ("--noise-threshold", "lots", "expected a percentage"),
            ("--baseline", "../main", "a baseline name is letters"),
            ("--output", "results.dat", "cannot tell the format of `results.dat`"),
            ("--target", "fast=localhost:80", "target `localhost:80` is not a valid URL"),
            ("--target", "my server=http://h", "`my server` is not a target name"),
        ] {
            let Err(err) = Cargo::try_parse_from(["cargo-loadbench", "loadbench", flag, value]) else {
                panic!("{flag} {value} was accepted")
            };
            assert_eq!(err.exit_code(), 2);
            let first = err.to_string().lines().next().unwrap_or_default().to_owned();
            assert!(first.contains(message), "{flag} {value}: {first}");
        }
    }

    fn parse_url_run(flags: &[&str]) -> Result<(Args, UrlArgs), clap::Error> {
        let argv = ["cargo-loadbench", "loadbench"].iter().chain(flags).copied();
        let Cargo::Loadbench(mut args) = Cargo::try_parse_from(argv)?;
        match args.command.take() {
            Some(Command::Url(url)) => Ok((args, *url)),
            other => panic!("{flags:?} parsed as {other:?}"),
        }
    }

    #[test]
    fn the_url_subcommand_takes_its_flags_and_the_shared_ones_on_either_side() {
        let (args, url) = parse_url_run(&[
            "--quiet",
            "url",
            "http://127.0.0.1:9090/items?x=1",
            "-c",
            "1000",
            "-n",
            "100000",
            "--rate",
            "120/m",
            "-m",
            "post",
            "-H",
            "x-k: v",
            "-H",
            "Content-Type:text/plain",
            "--body",
            "hi",
            "--timeout",
            "2s",
            "--json",
            "out.json",
            "--threshold",
            "p99<50ms",
        ])
        .unwrap_or_else(|e| panic!("{e}"));
        assert!(args.quiet, "a shared flag before `url`");
        assert_eq!(args.json.as_deref(), Some(std::path::Path::new("out.json")), "a shared flag after `url`");
        assert_eq!(args.thresholds.len(), 1);
        assert_eq!(args.scenario_flag(), None);
        assert_eq!(
            (url.location.url.as_deref(), url.location.path.as_str(), url.concurrency, url.requests),
            (Some("http://127.0.0.1:9090/items?x=1"), "/items?x=1", 1000, Some(100_000))
        );
        assert_eq!(url.rate.map(|r| r.per_second()), Some(2.0));
        assert_eq!(url.method, Method::POST);
        let headers: Vec<String> = url.headers.iter().map(ToString::to_string).collect();
        assert_eq!(headers, ["x-k: v", "content-type: text/plain"]);
        assert_eq!(url.body, Some(Body(b"hi".to_vec())));
        assert_eq!(url.timeout, Some(Duration::from_secs(2)));

        let (_, url) = parse_url_run(&["url", "http://h/"]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((url.concurrency, url.requests, url.duration, url.method), (50, None, None, Method::GET));
    }

    #[test]
    fn side_by_side_the_url_may_be_a_path_and_targets_go_on_either_side() {
        let (args, url) = parse_url_run(&[
            "--target",
            "a=http://127.0.0.1:1",
            "url",
            "/items?x=1",
            "--target",
            "b=http://127.0.0.1:2/api",
        ])
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(url.location, Location { url: None, path: "/items?x=1".into() });
        let names: Vec<Option<&str>> = args.targets.iter().chain(&url.targets).map(|t| t.name.as_deref()).collect();
        assert_eq!(names, [Some("a"), Some("b")], "before and after `url`, in that order");
        assert_eq!(args.scenario_flag(), None, "--target is for `url` too");

        let (_, url) = parse_url_run(&["url", "http://h:1"]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(url.location.path, "/", "a URL without a path requests /");
    }

    #[test]
    fn bad_url_values_are_one_line_usage_errors_naming_the_flag() {
        for (flags, message) in [
            (&["url", "127.0.0.1:9090"][..], "for '<URL>': `127.0.0.1:9090` is not a valid URL"),
            (&["url", "ftp://h/"], "the scheme must be http:// or https://"),
            (
                &["url", "http://h/", "--connect-to", "h:80"],
                "for '--connect-to <HOST:PORT:ADDR:PORT>': `h:80` is not HOST:PORT:ADDR:PORT",
            ),
            (&["url", "http://h/", "-H", "nocolon"], "for '--header <NAME: VALUE>': `nocolon` is not a valid header"),
            (&["url", "http://h/", "--rate", "fast"], "for '--rate <RATE>': `fast` is not a whole number"),
            (&["url", "http://h/", "-d", "soon"], "for '--duration <TIME>': expected a time"),
            (&["url", "http://h/", "-n", "5", "-d", "1s"], "'--requests <N>' cannot be used with '--duration <TIME>'"),
            (&["url", "http://h/", "--body", "@/no/such/file"], "cannot read body file `/no/such/file`"),
            (&["url", "http://h/", "--frobnicate"], "'--frobnicate'"),
            (&["url", "/a b"], "for '<URL>': `/a b` is not a valid path and query"),
            (&["url", "items"], "for '<URL>': `items` is not a valid URL"),
        ] {
            let Err(err) = parse_url_run(flags) else { panic!("{flags:?} was accepted") };
            assert_eq!(err.exit_code(), 2);
            let first = err.to_string().lines().next().unwrap_or_default().to_owned();
            assert!(first.contains(message), "{flags:?}: {first}");
        }
    }

    #[test]
    fn distributed_flags_go_on_either_side_of_url_and_not_to_report() {
        let (args, _) =
            parse_url_run(&["--shard", "1/3", "url", "http://h/", "--start-at", "1796119200", "--histograms"])
                .unwrap_or_else(|e| panic!("{e}"));
        let distributed = &args.distributed;
        assert_eq!(distributed.shard.map(|s| (s.index(), s.count())), Some((1, 3)));
        assert_eq!(distributed.start_at.map(|s| s.millis()).as_deref(), Some("2026-12-01T10:00:00.000Z"));
        assert!(distributed.histograms);
        assert_eq!(args.run_flag(), Some("--shard"), "`report` runs nothing and refuses them");
        for (flags, message) in [
            (
                &["url", "http://h/", "--shard", "3/3"][..],
                "`3/3` is not a shard: give I/N with I from 0 to N-1 and N at most 10000, such as 0/3",
            ),
            (&["url", "http://h/", "--start-at", "soon"], "`soon` is not a start time"),
        ] {
            let Err(err) = parse_url_run(flags) else { panic!("{flags:?} was accepted") };
            assert_eq!(err.exit_code(), 2);
            let first = err.to_string().lines().next().unwrap_or_default().to_owned();
            assert!(first.contains(message), "{flags:?}: {first}");
        }
    }

    #[test]
    fn a_filter_named_url_goes_after_a_double_dash() {
        let parsed = Cargo::try_parse_from(["cargo-loadbench", "loadbench", "--", "url"]);
        let Ok(Cargo::Loadbench(args)) = parsed else { panic!("{parsed:?}") };
        assert_eq!(args.filters, ["url"]);
        assert!(args.command.is_none());
        let (args, _) = parse_url_run(&["--bench", "api", "url", "http://h/"]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(args.scenario_flag(), Some("--bench"), "refused by the url pipeline");
    }

    #[test]
    fn unknown_flags_are_usage_errors() {
        let Err(err) = Cargo::try_parse_from(["cargo-loadbench", "loadbench", "--frobnicate"]) else {
            panic!("--frobnicate was accepted")
        };
        assert_eq!(err.exit_code(), 2);
        assert!(err.to_string().contains("--frobnicate"), "{err}");
    }
}
