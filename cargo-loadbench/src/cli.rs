//! The command line of `cargo loadbench`.

use std::path::PathBuf;

use clap::Parser;
use loadbench::watch::Watch;

use crate::gate::CliThreshold;
use crate::output::{Format, OutputSpec};
use crate::settings;
use crate::targets::TargetArg;

/// This binary should be invoked as `cargo loadbench` (in which case this message will not be
/// seen), not as `cargo-loadbench`.
// Cargo runs `cargo-loadbench loadbench ARGS…` for `cargo loadbench ARGS…`; this wrapper consumes
// the `loadbench` word so that help and errors read `cargo loadbench …`.
#[derive(Debug, Parser)]
#[command(name = "cargo", bin_name = "cargo", disable_help_subcommand = true)]
pub enum Cargo {
    /// Build and run the loadbench scenarios of a workspace.
    Loadbench(Args),
}

const AFTER_HELP: &str = "\
Scenarios run one bench binary at a time, in the binary's package directory, like `cargo bench`.

A regression is a change of req/s, p50, p99 or success rate beyond --noise-threshold (three
times it for p99). With
--runs 2 or more on both sides, its whole 95% bootstrap confidence interval must lie beyond it.

Exit codes:
  0    every selected scenario ran (failed requests are counted in the results, not fatal)
  1    a gate failed: a threshold, or a regression with --fail-on-regression
  2    usage, configuration or build error, a filter that matches nothing, a bad threshold,
       or a missing or unreadable baseline
  3    some scenario could not run (its setup failed or its bench binary crashed)
  130  interrupted by Ctrl-C (the results so far are still printed and written)";

impl Args {
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
    /// Repeat as NAME=URL to run every scenario against each server, side by side, compared
    /// with the first
    #[arg(long = "target", value_name = "[NAME=]URL", value_parser = TargetArg::parse)]
    pub targets: Vec<TargetArg>,

    /// Do not show progress while scenarios run.
    #[arg(short, long)]
    pub quiet: bool,

    /// Sample this process and its children (CPU, resident memory) while each scenario runs,
    /// as NAME=PID (repeatable)
    #[arg(long = "watch", value_name = "NAME=PID", help_heading = "Server resources")]
    pub watches: Vec<Watch>,

    /// The same as --watch server=PID
    #[arg(long = "watch-pid", value_name = "PID", help_heading = "Server resources")]
    pub watch_pids: Vec<u32>,

    /// Run every selected scenario N times, in rounds (each scenario once per round), so that
    /// verdicts can weigh the spread across runs [default: 1]
    #[arg(long, value_name = "N", value_parser = parse_runs, help_heading = "Gating")]
    pub runs: Option<u32>,

    /// A pass/fail condition such as `hello:p99<50ms`, or `error_rate<0.01` for every scenario
    /// (repeatable). Metrics: p50 p90 p99 p99_9 max mean error_rate rps failed
    #[arg(
        long = "threshold",
        value_name = "[SCENARIO:]CONDITION",
        value_parser = CliThreshold::parse,
        help_heading = "Gating"
    )]
    pub thresholds: Vec<CliThreshold>,

    /// Save the results as baseline NAME
    #[arg(long, value_name = "NAME", value_parser = parse_baseline_name, help_heading = "Gating")]
    pub save_baseline: Option<String>,

    /// Compare the results with baseline NAME: change columns and a verdict per scenario
    #[arg(long, value_name = "NAME", value_parser = parse_baseline_name, help_heading = "Gating")]
    pub baseline: Option<String>,

    /// Where baselines are kept [default: <target-dir>/loadbench/baselines]
    #[arg(long, value_name = "DIR", help_heading = "Gating")]
    pub baseline_dir: Option<PathBuf>,

    /// Changes smaller than this many percent count as noise [default: 5]
    #[arg(long, value_name = "PERCENT", value_parser = parse_noise, help_heading = "Gating")]
    pub noise_threshold: Option<f64>,

    /// Exit with code 1 when a scenario regressed against --baseline
    #[arg(long, overrides_with = "no_fail_on_regression", help_heading = "Gating")]
    pub fail_on_regression: bool,

    /// Show regressions without failing (overrides `fail-on-regression = true` in Cargo.toml)
    #[arg(long, overrides_with = "fail_on_regression", help_heading = "Gating")]
    pub no_fail_on_regression: bool,

    /// What to print on stdout: table, json, csv, markdown or junit
    #[arg(
        long,
        value_name = "FORMAT",
        value_enum,
        default_value_t = Format::Table,
        hide_possible_values = true,
        help_heading = "Output"
    )]
    pub format: Format,

    /// Also write the results to FILE (repeatable), in the format its extension names (.json,
    /// .csv, .md, .xml for JUnit, .txt for the table) or the one given as FORMAT:FILE
    #[arg(long = "output", value_name = "[FORMAT:]FILE", value_parser = OutputSpec::parse, help_heading = "Output")]
    pub outputs: Vec<OutputSpec>,

    /// Also write the results as JSON to FILE (the same as --output json:FILE)
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub json: Option<PathBuf>,

    /// Only bench targets of this package (repeatable).
    #[arg(short, long = "package", value_name = "SPEC", help_heading = "Target Selection")]
    pub packages: Vec<String>,

    /// Only the bench target with this name (repeatable).
    #[arg(long = "bench", value_name = "NAME", help_heading = "Target Selection")]
    pub benches: Vec<String>,

    /// Path to Cargo.toml.
    #[arg(long, value_name = "PATH", help_heading = "Manifest Options")]
    pub manifest_path: Option<PathBuf>,
}

/// `--runs`: a whole number from 1 to [`settings::MAX_RUNS`].
fn parse_runs(text: &str) -> Result<u32, String> {
    let runs: u32 = text.parse().map_err(|_| format!("expected a whole number from 1 to {}", settings::MAX_RUNS))?;
    settings::check_runs(runs)
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

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(args.packages, ["shop"]);
        assert_eq!(args.benches, ["api"]);
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
            ("--threshold", "hello:p98<5ms", "unknown metric `p98`"),
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

    #[test]
    fn unknown_flags_are_usage_errors() {
        let Err(err) = Cargo::try_parse_from(["cargo-loadbench", "loadbench", "--frobnicate"]) else {
            panic!("--frobnicate was accepted")
        };
        assert_eq!(err.exit_code(), 2);
        assert!(err.to_string().contains("--frobnicate"), "{err}");
    }
}
