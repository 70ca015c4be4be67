//! `cargo loadbench merge SHARD.json…`: the shards of a distributed run read, checked and merged
//! into one run's results ([`crate::merge`]), then through the same tail as saved results
//! ([`crate::finish::finish_saved`], as `cargo loadbench report` does): thresholds, baselines,
//! verdicts and every output format work on the whole run as on a local one.

use crate::cli::{Args, MergeArgs};
use crate::error::Error;
use crate::finish::{self, Gating};
use crate::merge::{self, MergeError, Shard};

/// Runs `cargo loadbench merge` and returns the exit code; a flag that only applies to a run, a
/// file that cannot be read, shards that do not make one run or an output that cannot be written
/// stop it first.
pub fn run(args: &Args, files: &MergeArgs) -> Result<u8, Error> {
    if let Some(flag) = args.run_flag() {
        return Err(MergeError::RunFlag { flag }.into());
    }
    finish::check_not_inputs(args, &files.files)?;
    let shards = files
        .files
        .iter()
        .map(|path| super::report::read_saved(path).map(|results| Shard { path: path.clone(), results }))
        .collect::<Result<Vec<_>, Error>>()?;
    let merged = merge::merge(shards, &args.measured_percentiles())?;
    let results = merged.results;
    let names: Vec<&str> = results.scenarios.iter().map(|s| s.name.as_str()).collect();
    crate::gate::check_scenarios(&args.thresholds, &names)?;

    let (target_dir, settings) = super::url::workspace_defaults()?;
    let mut gating = Gating::resolve(args, &target_dir, &settings);
    // Shards of single runs (others are refused): `--runs` is refused, not taken from settings.
    gating.runs = 1;
    finish::check_outputs(args, &gating)?;
    let baseline = args.baseline.as_deref().map(|name| gating.baselines.load(name)).transpose()?;
    Ok(finish::finish_saved(args, &gating, baseline.as_ref(), results, merged.notes))
}
