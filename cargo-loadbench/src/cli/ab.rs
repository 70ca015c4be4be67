//! The command line of `cargo loadbench ab`: the working tree (or `--head REV`) measured against
//! `BASE_REV`, both on this machine, in interleaved rounds.

use std::time::Duration;

use super::{TargetSelection, parse_duration};
use crate::settings;

const AB_AFTER_HELP: &str = "\
BASE_REV is checked out into a git worktree of its own under the target directory
(target/loadbench/ab/), reused and refreshed on the next run; the working tree, its index and
branches are only read. Both sides are built by the same toolchain, the head's, into the same
target directory, so cargo builds their common dependencies once.

Where requests go, for each side its own server:
  - without --serve, each side runs its own bench binary, which starts its own server
    (`Harness::default_target`, a server process: docs/scenarios.md);
  - with --serve CMD, CMD starts each side's service in the root of that side's checkout
    (`sh -c`), with a free port in $PORT and in {port}; the head's scenarios (--scenarios head)
    run against both services, so a base without any scenario is still measured.

Each round runs every selected scenario once on each side, back to back, the side that goes
first alternating as AB BA BA AB BA AB AB BA …. The verdict is on the rounds' ratios head / base:
a change counts when the 95% bootstrap confidence interval of their median lies wholly beyond
--noise-threshold (three times it for p99), as for a baseline; --threshold applies to the head.

Exit codes:
  0    no regression (or an improvement); also when the base has no scenario to compare
  1    a regression, or a threshold the head missed (not with --no-gate)
  2    usage: a bad flag, a revision that is not a commit, a path outside the repository
  3    a side could not be built or served: which side, and why, in one line
  130  interrupted by Ctrl-C (SIGINT), 143 stopped by SIGTERM, 129 by SIGHUP (a closed
       terminal): the services are stopped and the rounds so far are reported";

/// Arguments of `cargo loadbench ab`.
#[derive(Debug, clap::Args)]
#[command(after_help = AB_AFTER_HELP)]
pub struct AbArgs {
    /// The commit to compare with: a sha, a branch, a tag, or any revision git names (origin/main,
    /// HEAD~1)
    #[arg(value_name = "BASE_REV")]
    pub base: String,

    /// Run only scenarios whose name contains one of these strings
    #[arg(value_name = "FILTER")]
    pub filters: Vec<String>,

    /// Match filters against whole scenario names
    #[arg(long)]
    pub exact: bool,

    /// The commit to measure [default: the working tree, uncommitted changes included]
    #[arg(long, value_name = "REV")]
    pub head: Option<String>,

    /// Start each side's service with CMD (`sh -c`, in the root of that side's checkout, a free
    /// port in $PORT and {port}) and send its scenarios there, such as 'python3 app.py' or 'cargo
    /// run --release -p server'
    #[arg(long, value_name = "CMD", value_parser = parse_command, help_heading = "Services")]
    pub serve: Option<String>,

    /// How long a --serve service may take to accept connections, building included [default:
    /// 5m]
    #[arg(long, value_name = "TIME", value_parser = parse_duration, requires = "serve", help_heading = "Services")]
    pub serve_timeout: Option<Duration>,

    /// With --serve: whose scenarios run against both services, the head's or the base's
    #[arg(
        long,
        value_enum,
        value_name = "SIDE",
        default_value_t = ScenarioSide::Head,
        requires = "serve",
        help_heading = "Services"
    )]
    pub scenarios: ScenarioSide,

    /// Paired rounds, each running every selected scenario once on each side [default: 6]
    #[arg(long, value_name = "N", value_parser = parse_rounds, help_heading = "Gating")]
    pub rounds: Option<u32>,

    /// Rounds run first, alike on both sides, and not counted [default: 1 with --serve, whose
    /// services live through every round; else 0]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(0..=100), help_heading = "Gating")]
    pub warmup_rounds: Option<u32>,

    // `-p`, `--bench`, `--manifest-path` (after `ab`; before it they count too).
    #[command(flatten)]
    pub selection: TargetSelection,
}

/// Whose scenarios run against both services with `--serve`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ScenarioSide {
    /// The head's: a base that has none yet (the pull request that brings loadbench in) is still
    /// measured.
    Head,
    /// The base's: the head changed its scenarios, and the old ones are the yardstick.
    Base,
}

/// The rounds when `--rounds` is not given.
pub const DEFAULT_ROUNDS: u32 = 6;

/// `--serve`: a command, not blanks (an unset variable in a script: `--serve "$SERVE"`).
fn parse_command(text: &str) -> Result<String, String> {
    if text.trim().is_empty() {
        return Err("the command is empty; leave --serve out when the bench binary starts the server".to_owned());
    }
    Ok(text.to_owned())
}

/// `--rounds`: a whole number from 1 to [`settings::MAX_RUNS`].
fn parse_rounds(text: &str) -> Result<u32, String> {
    let rounds: u32 = text.parse().map_err(|_| format!("expected a whole number from 1 to {}", settings::MAX_RUNS))?;
    settings::check_runs(rounds).map_err(|e| e.replace("runs must", "rounds must"))
}

#[cfg(test)]
mod tests {
    use crate::cli::{Cargo, Command};
    use clap::Parser;

    fn parse(flags: &[&str]) -> Result<(crate::cli::Args, super::AbArgs), clap::Error> {
        let argv = ["cargo-loadbench", "loadbench"].iter().chain(flags).copied();
        let Cargo::Loadbench(mut args) = Cargo::try_parse_from(argv)?;
        match args.command.take() {
            Some(Command::Ab(ab)) => Ok((args, *ab)),
            other => panic!("{flags:?} parsed as {other:?}"),
        }
    }

    #[test]
    fn the_base_filters_and_the_selection_go_after_ab_and_shared_flags_on_either_side() {
        let (args, ab) = parse(&[
            "--quiet",
            "ab",
            "origin/main",
            "hello",
            "--serve",
            "python3 app.py --port {port}",
            "--manifest-path",
            "bench/Cargo.toml",
            "-p",
            "shop",
            "--bench",
            "api",
            "--rounds",
            "8",
            "--threshold",
            "p99<50ms",
            "--output",
            "ab.json",
        ])
        .unwrap_or_else(|e| panic!("{e}"));
        assert!(args.quiet);
        assert_eq!(args.thresholds.len(), 1);
        assert_eq!(args.outputs.len(), 1);
        assert_eq!((ab.base.as_str(), ab.filters.as_slice()), ("origin/main", ["hello".to_owned()].as_slice()));
        assert_eq!(ab.serve.as_deref(), Some("python3 app.py --port {port}"));
        assert_eq!(ab.selection.manifest_path.as_deref(), Some(std::path::Path::new("bench/Cargo.toml")));
        assert_eq!(
            (ab.selection.packages.as_slice(), ab.selection.benches.as_slice()),
            (["shop".to_owned()].as_slice(), ["api".to_owned()].as_slice())
        );
        assert_eq!((ab.rounds, ab.warmup_rounds, ab.scenarios), (Some(8), None, super::ScenarioSide::Head));
    }

    #[test]
    fn bad_values_are_one_line_usage_errors() {
        for (flags, message) in [
            (&["ab"][..], "the following required arguments were not provided"),
            (&["ab", "main", "--rounds", "0"], "rounds must be from 1 to 1000, not 0"),
            (&["ab", "main", "--warmup-rounds", "101"], "101 is not in 0..=100"),
            (&["ab", "main", "--scenarios", "base"], "the following required arguments were not provided"),
            (&["ab", "main", "--serve-timeout", "1m"], "the following required arguments were not provided"),
            (&["ab", "main", "--serve", "x", "--scenarios", "both"], "invalid value 'both'"),
            (&["ab", "main", "--serve", " "], "the command is empty; leave --serve out"),
        ] {
            let Err(err) = parse(flags) else { panic!("{flags:?} was accepted") };
            assert_eq!(err.exit_code(), 2);
            let first = err.to_string().lines().next().unwrap_or_default().to_owned();
            assert!(first.contains(message), "{flags:?}: {first}");
        }
    }
}
