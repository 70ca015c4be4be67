//! The command line of `cargo loadbench`.

use std::path::PathBuf;

use clap::Parser;

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

Exit codes:
  0    every selected scenario ran (failed requests are counted in the results, not fatal)
  1    reserved for failed gates (thresholds, regressions against a baseline)
  2    usage, configuration or build error, or no scenario matched the filters
  3    some scenario could not run (its setup failed or its bench binary crashed)
  130  interrupted by Ctrl-C (the results so far are still printed and written)";

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
    #[arg(long, value_name = "URL")]
    pub target: Option<String>,

    /// Also write the results as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Do not show progress while scenarios run.
    #[arg(short, long)]
    pub quiet: bool,

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
        assert_eq!(args.target.as_deref(), Some("http://127.0.0.1:1"));
        assert!(!args.list && !args.exact && !args.quiet);
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
