//! The command line of a bench binary: `cargo bench --bench NAME -- …`, or as `cargo loadbench`
//! runs it.

use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;
use loadbench_grammar::Percentile;

use crate::engine::parse_scale;

/// Command line of a bench binary.
#[derive(Debug, Parser)]
#[command(about = "Runs the loadbench scenarios of this bench target.", disable_version_flag = true)]
pub(super) struct BenchArgs {
    /// Run only scenarios whose name contains one of these strings.
    pub(super) filters: Vec<String>,
    /// Match filters against whole scenario names.
    #[arg(long)]
    pub(super) exact: bool,
    /// List the scenarios instead of running them.
    #[arg(long)]
    pub(super) list: bool,
    /// Run the full load; passed by `cargo bench`. Without it (as under `cargo test --benches`)
    /// each scenario runs once, as a smoke test.
    #[arg(long)]
    pub(super) bench: bool,
    /// Base URL of the server under test; overrides LOADBENCH_TARGET and the attribute.
    #[arg(long, value_name = "URL")]
    pub(super) target: Option<String>,
    /// Run every scenario at this fraction (above 0, at most 1) of its load: users, count,
    /// duration and rate, each at least 1 (100 ms); overrides LOADBENCH_SCALE. Without --bench,
    /// the scaled load replaces the single smoke-test iteration.
    #[arg(long, value_name = "FACTOR", value_parser = parse_scale)]
    pub(super) scale: Option<f64>,
    /// How long iterations in flight may go on after a duration-bound run's end, or after the
    /// first Ctrl-C or SIGTERM, before they are cancelled, such as 2s [default: the scenario's
    /// `grace`, else 5s]
    #[arg(long, value_name = "TIME", value_parser = parse_grace)]
    pub(super) grace: Option<Duration>,
    #[command(flatten)]
    pub(super) client: crate::cli::ClientArgs,
    #[command(flatten)]
    pub(super) distributed: crate::cli::DistributedArgs,
    #[command(flatten)]
    pub(super) remote_write: crate::cli::RemoteWriteArgs,
    /// The latency percentiles the table shows, as columns before `max`, such as 50,95,99.9
    /// (also measured, and in the JSON) [default: 50,95,99]
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = parse_percentile)]
    pub(super) percentiles: Option<Vec<Percentile>>,
    /// Exit with code 1 when a scenario measured nothing: no HTTP exchange, or iterations faster
    /// than a network round trip (a body that forgot `.send().await`)
    #[arg(long)]
    pub(super) fail_on_warning: bool,
    /// Exit with code 0, not 4, when a run is inconclusive: the generator was saturated, dropped
    /// more than 1% of the arrivals, or reached more than 5% below the asked rate
    #[arg(long)]
    pub(super) allow_inconclusive: bool,
    /// Exit with code 0, not 1, when a scenario had no successful iteration (a chaos test)
    #[arg(long)]
    pub(super) allow_failures: bool,
    /// Also write the results as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    pub(super) json: Option<PathBuf>,
    /// No progress output.
    #[arg(long, short)]
    pub(super) quiet: bool,
    // Passed by cargo's test harness conventions; accepted and ignored.
    #[arg(long, hide = true)]
    nocapture: bool,
    #[arg(long, hide = true)]
    show_output: bool,
}

/// One percentile of a list such as `50,95,99.9`, read as `LOADBENCH_PERCENTILES` is.
fn parse_percentile(text: &str) -> Result<Percentile, String> {
    Percentile::parse_percent(text).map_err(|e| e.to_string())
}

/// A time such as `2s` or `500ms`, read by the grammar as every duration is.
fn parse_grace(text: &str) -> Result<Duration, String> {
    crate::load::parse_duration(text).map_err(|e| e.to_string())
}
