//! `cargo loadbench report RESULTS.json…`: saved results rendered again, running nothing, through
//! the same tail as a run ([`crate::finish`]: thresholds, baselines, outputs, exit code), so an
//! HTML report, a Markdown summary or a verdict can be made from a CI artifact.
//!
//! Several files are read in the order given and shown as one document. A scenario found in more
//! than one of them (the same benchmark on two commits) is told apart by the file it came from,
//! as the targets of a side-by-side run are, so that the HTML report draws them on shared axes.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use cargo_loadbench::{Results, ScenarioResult};

use crate::cli::{Args, ReportArgs};
use crate::error::Error;
use crate::finish::{self, Gating};
use crate::plausible::{self, Implausible};
use crate::versioned;

/// Runs `cargo loadbench report` and returns the exit code; a flag that only applies to a run,
/// a file that cannot be read or an output that cannot be written stop it first.
pub fn run(args: &Args, report: &ReportArgs) -> Result<u8, Error> {
    if let Some(flag) = args.run_flag() {
        return Err(Error::NotForReport { flag });
    }
    finish::check_not_inputs(args, &report.files)?;
    let documents = report
        .files
        .iter()
        .map(|path| read_saved(path).map(|results| (path.clone(), results)))
        .collect::<Result<Vec<_>, Error>>()?;
    let results = merge(documents);
    let names: Vec<&str> = results.scenarios.iter().map(|s| s.name.as_str()).collect();
    crate::gate::check_scenarios(&args.thresholds, &names)?;

    let (target_dir, settings) = super::url::workspace_defaults()?;
    let mut gating = Gating::resolve(args, &target_dir, &settings).saved(args, results.gate.as_ref());
    // The runs the files hold, not `--runs` (refused): the notes under the table say how many.
    gating.runs = results.scenarios.iter().map(|s| s.runs.len()).max().unwrap_or(0).max(1) as u32;
    finish::check_outputs(args, &gating)?;
    let baseline = args.baseline.as_deref().map(|name| gating.baselines.load(name)).transpose()?;
    Ok(finish::finish_saved(args, &gating, baseline.as_ref(), results, Vec::new()))
}

/// The results document at `path`, as `--output FILE.json` or `--json` wrote it (a bench
/// binary's own too): one line naming the file when it cannot be read or is not one, and naming
/// the field too when its figures are not a run's ([`plausible::check_results`]).
pub fn read_saved(path: &Path) -> Result<Results, Error> {
    let results = versioned::read::<Results>(path)
        .map_err(|err| Error::SavedResults { path: path.to_owned(), reason: err.to_string() })?;
    plausible::check_results(&results).map_err(|Implausible { field, what }| Error::Implausible {
        path: path.to_owned(),
        field,
        what,
    })?;
    Ok(results)
}

/// One document from several: the first file's header (tool, machine, start), every file's
/// scenarios in order, marked interrupted when any file was. A scenario that more than one file
/// holds (same package, bench, name and target) gets the file's name as its target's, so that
/// tables, comparisons and charts tell the entries apart.
fn merge(documents: Vec<(PathBuf, Results)>) -> Results {
    let key = |s: &ScenarioResult| (s.package.clone(), s.bench.clone(), s.name.clone(), s.target_name.clone());
    let mut files_of: HashMap<_, Vec<usize>> = HashMap::new();
    for (index, (_, results)) in documents.iter().enumerate() {
        for scenario in &results.scenarios {
            let files = files_of.entry(key(scenario)).or_default();
            if files.last() != Some(&index) {
                files.push(index);
            }
        }
    }
    let labels = file_labels(documents.iter().map(|(path, _)| path.as_path()));
    let mut documents = documents.into_iter().enumerate();
    let Some((_, (_, mut merged))) = documents.next() else {
        return Results::new(std::time::SystemTime::now());
    };
    let first = std::mem::take(&mut merged.scenarios);
    let rest = documents.flat_map(|(index, (_, results))| {
        merged.interrupted |= results.interrupted;
        results.scenarios.into_iter().map(move |s| (index, s))
    });
    let mut scenarios: Vec<(usize, ScenarioResult)> = first.into_iter().map(|s| (0, s)).collect();
    scenarios.extend(rest.collect::<Vec<_>>());
    merged.scenarios = scenarios
        .into_iter()
        .map(|(index, mut scenario)| {
            if files_of.get(&key(&scenario)).is_some_and(|files| files.len() > 1) {
                let file = &labels[index];
                scenario.target_name = Some(match scenario.target_name.take() {
                    Some(target) => format!("{target} ({file})"),
                    None => file.clone(),
                });
            }
            scenario
        })
        .collect();
    merged
}

/// Short names for the files: their stems (`main` for `out/main.json`), or their paths when two
/// stems are the same.
fn file_labels<'a>(paths: impl Iterator<Item = &'a Path>) -> Vec<String> {
    let paths: Vec<&Path> = paths.collect();
    let stem = |p: &Path| p.file_stem().map_or_else(|| p.display().to_string(), |s| s.to_string_lossy().into_owned());
    let stems: Vec<String> = paths.iter().map(|p| stem(p)).collect();
    stems
        .iter()
        .zip(&paths)
        .map(|(s, p)| if stems.iter().filter(|t| *t == s).count() > 1 { p.display().to_string() } else { s.clone() })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::tests::sample_report;

    #[test]
    fn a_scenario_in_several_files_is_named_after_each_file() {
        let mut main = sample_report();
        main.scenarios.truncate(2);
        let mut head = sample_report();
        head.scenarios.truncate(1);
        head.interrupted = true;
        let merged = merge(vec![(PathBuf::from("ci/main.json"), main), (PathBuf::from("head.json"), head)]);
        let names: Vec<(String, Option<String>)> =
            merged.scenarios.iter().map(|s| (s.name.clone(), s.target_name.clone())).collect();
        assert_eq!(
            names,
            [
                ("hello".to_owned(), Some("main".to_owned())),
                ("guarded|pipe".to_owned(), None),
                ("hello".to_owned(), Some("head".to_owned())),
            ]
        );
        assert!(merged.interrupted, "one file was interrupted");
    }

    #[test]
    fn files_with_the_same_stem_are_named_by_path() {
        let labels =
            file_labels([Path::new("a/results.json"), Path::new("b/results.json"), Path::new("c.json")].into_iter());
        assert_eq!(labels, ["a/results.json", "b/results.json", "c"]);
    }
}
