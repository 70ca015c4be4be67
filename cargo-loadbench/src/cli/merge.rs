//! The command line of `cargo loadbench merge`.

use std::path::PathBuf;

const MERGE_AFTER_HELP: &str = "\
Reads the results each shard of a distributed run wrote (`--shard I/N --output shard-I.json` on
each machine) and makes them one run's: iterations, failures, statuses and bytes added up;
latency percentiles from the shards' histograms added up, exactly as one machine would have
measured them; time from the first shard's start to the last one's end, and req/s over it;
timelines lined up by wall clock. The output, threshold and baseline options of `cargo
loadbench` apply, as after a run: `cargo loadbench merge shard-*.json --threshold p99<50ms
--output merged.html`.

Refused: a file that is not a shard, shards of different runs (count, --start-at instant,
--run-id, loadbench version, scenarios, a scenario's load), a shard missing or given twice,
latencies written without histograms, and figures no run could have written (counts that
disagree or do not add up within 64 bits, a histogram that does not hold the successes it
describes, a file past 64 MiB): one line, FILE: FIELD: what is wrong.

Exit codes: 0 merged, 1 a gate failed on the merged results (a threshold, a regression with
--fail-on-regression; never with --no-gate), 2 a file that cannot be read, shards that cannot
be merged, a flag that only applies to a run, or an output that cannot be written, 3 a scenario
could not run on some shard (its setup failed).";

/// Arguments of `cargo loadbench merge`.
#[derive(Debug, clap::Args)]
#[command(after_help = MERGE_AFTER_HELP)]
pub struct MergeArgs {
    /// The shards' results files, every shard of the run once, in any order
    #[arg(value_name = "SHARD.json", required = true)]
    pub files: Vec<PathBuf>,
}
