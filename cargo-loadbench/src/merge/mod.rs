//! `cargo loadbench merge`: the shards of a distributed run (`--shard I/N` on N machines) made
//! one results document, as if one machine had run the whole load. What it takes and refuses is
//! here; one scenario's figures are in [`scenario`], its timeline in [`timeline`], and the
//! histograms that make the percentiles exact in [`histograms`].
//!
//! Merging is only exact between parts of one run, so anything that says otherwise is refused,
//! naming the files: a file that is not a shard, shards of different counts, a shard missing or
//! given twice, shards of another run (a different `--start-at` instant or `--run-id`: shards
//! that say neither are taken as one run when all else agrees), different loadbench versions
//! (their figures may not mean the same), different scenarios or loads, latencies without
//! histograms (percentiles do not average), and counts whose sum would not fit. Each shard has
//! passed [`crate::plausible::check_results`] as it was read. Each refusal is one line, exit
//! code 2, before anything is written.

mod histograms;
mod scenario;
mod timeline;

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

use cargo_loadbench::{Results, RunSample, ScenarioResult};
use loadbench::threshold::Percentile;

use self::scenario::Part;

/// One file given to `cargo loadbench merge`, read.
#[derive(Debug)]
pub struct Shard {
    /// The file as given.
    pub path: PathBuf,
    /// What it holds.
    pub results: Results,
}

/// The merged document, and the notes to print about it.
#[derive(Debug)]
pub struct Merged {
    /// The whole run: no `shard`, one entry per scenario.
    pub results: Results,
    /// Lines worth reading: how many machines ran it, figures that could not be merged exactly.
    pub notes: Vec<String>,
}

/// Why the files given are not the shards of one run, or cannot be merged exactly.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// A flag that only applies to a run.
    #[error("{flag} only applies to a run; `cargo loadbench merge` merges saved shards and takes no {flag}")]
    RunFlag {
        /// The flag, such as `--runs`.
        flag: &'static str,
    },
    /// Nothing to merge (the command line requires a file; kept for callers in code).
    #[error("no shard to merge")]
    NoShards,
    /// A file without `shard`.
    #[error("{} is not a shard: it has no `shard` (run each part of a distributed run with --shard I/N)", .0.display())]
    NotAShard(PathBuf),
    /// Shards of runs split differently.
    #[error("{} is shard {} of {} but {} is shard {} of {}: shards of different runs", .a.display(), .a_index, .a_count, .b.display(), .b_index, .b_count)]
    Counts {
        /// The first shard's file.
        a: PathBuf,
        /// Its index.
        a_index: u32,
        /// Its count.
        a_count: u32,
        /// The file that disagrees.
        b: PathBuf,
        /// Its index.
        b_index: u32,
        /// Its count.
        b_count: u32,
    },
    /// An index past the count.
    #[error("{} says it is shard {index} of {count}: shards are numbered from 0 to {}", .path.display(), .count.saturating_sub(1))]
    OutOfRange {
        /// The file.
        path: PathBuf,
        /// Its index.
        index: u32,
        /// Its count.
        count: u32,
    },
    /// The same shard twice.
    #[error("shard {index}/{count} given twice: {} and {}", .first.display(), .second.display())]
    Duplicate {
        /// The index.
        index: u32,
        /// The count.
        count: u32,
        /// The first file that holds it.
        first: PathBuf,
        /// The second.
        second: PathBuf,
    },
    /// Shards not given.
    #[error("{}", missing_message(.missing, *.count))]
    Missing {
        /// The indexes not given, in order.
        missing: Vec<u32>,
        /// The count.
        count: u32,
    },
    /// A field of one shard that says it is not part of the same run as the others, or whose
    /// counts cannot be added to theirs.
    #[error("{}: {field}: {what}", .path.display())]
    Field {
        /// The file.
        path: PathBuf,
        /// The field, as a JSON path.
        field: String,
        /// What is wrong with it.
        what: String,
    },
    /// Different loadbench versions wrote the shards.
    #[error("{} was written by {a_tool} but {} by {b_tool}: run every shard with the same loadbench", .a.display(), .b.display())]
    Tool {
        /// Shard 0's file.
        a: PathBuf,
        /// Its tool and version.
        a_tool: String,
        /// The file that disagrees.
        b: PathBuf,
        /// Its tool and version.
        b_tool: String,
    },
    /// Different scenarios, or in another order.
    #[error("{} and {} hold different scenarios ({a_list}; {b_list}): every shard runs the same scenarios, in the same order", .a.display(), .b.display())]
    Scenarios {
        /// Shard 0's file.
        a: PathBuf,
        /// Its scenarios.
        a_list: String,
        /// The file that disagrees.
        b: PathBuf,
        /// Its scenarios.
        b_list: String,
    },
    /// One scenario's load differs between shards.
    #[error("`{scenario}` has config.{field} {} in {} but {} in {}: every shard holds the whole scenario's load, the same in each", .values.0, .a.display(), .values.1, .b.display())]
    Config {
        /// The scenario.
        scenario: String,
        /// The first field of `config` that differs.
        field: String,
        /// Shard 0's file.
        a: PathBuf,
        /// The file that disagrees.
        b: PathBuf,
        /// The field's value in each, as JSON (boxed: the error stays small).
        values: Box<(String, String)>,
    },
    /// A shard ran `--runs N`: its figures are medians of runs, with no histogram of them.
    #[error("{} holds {runs} runs of `{scenario}` (--runs {runs}): merge shards of single runs", .path.display())]
    Runs {
        /// The file.
        path: PathBuf,
        /// The scenario.
        scenario: String,
        /// Its runs.
        runs: usize,
    },
    /// A latency with successes but no histogram.
    #[error("{}: {what} was written without histograms: run the shards with a loadbench that writes them", .path.display())]
    NoHistogram {
        /// The file.
        path: PathBuf,
        /// Which latency.
        what: String,
    },
    /// A histogram that does not decode or add.
    #[error("{}: {what} has an unreadable histogram: {reason}", .path.display())]
    BadHistogram {
        /// The file.
        path: PathBuf,
        /// Which latency.
        what: String,
        /// Why.
        reason: String,
    },
    /// A scenario that ran without `started_unix_ms`: its timeline cannot be placed.
    #[error("{}: `{scenario}` has no started_unix_ms, so its time cannot be lined up with the other shards': run the shards with a loadbench that writes it", .path.display())]
    NoStart {
        /// The file.
        path: PathBuf,
        /// The scenario.
        scenario: String,
    },
    /// Shards of a scenario that started too far apart to be one run.
    #[error(
        "the shards of `{scenario}` started {hours} hours apart: not one run (start them together, with --start-at)"
    )]
    StartsApart {
        /// The scenario.
        scenario: String,
        /// How far apart, in whole hours.
        hours: u64,
    },
}

/// `shard 1 of 3 is missing`, or `shards 1, 2 of 4 are missing`.
fn missing_message(missing: &[u32], count: u32) -> String {
    match missing {
        [one] => format!("shard {one} of {count} is missing"),
        _ => {
            let list: Vec<String> = missing.iter().map(u32::to_string).collect();
            format!("shards {} of {count} are missing", list.join(", "))
        }
    }
}

/// The document of the whole run from its `shards`, in any order: refused unless they are every
/// shard of one run, once each. Latencies report the percentiles `asked` for beside the fixed
/// ones and those of each scenario's thresholds.
pub fn merge(shards: Vec<Shard>, asked: &[Percentile]) -> Result<Merged, MergeError> {
    let mut shards = in_order(shards)?;
    same_run(&shards)?;
    let mut as_runs = false;
    for shard in &mut shards {
        for s in &mut shard.results.scenarios {
            as_runs |= single_run(&shard.path, s)?;
        }
    }
    let Some(first) = shards.first() else { return Err(MergeError::NoShards) };

    let mut notes = vec![machines_note(&shards)];
    let mut scenarios = Vec::with_capacity(first.results.scenarios.len());
    for position in 0..first.results.scenarios.len() {
        let parts: Vec<Part<'_>> = shards
            .iter()
            .filter_map(|shard| {
                let index = shard.results.shard.map_or(0, |s| s.index);
                let scenario = shard.results.scenarios.get(position)?;
                Some(Part { index, path: &shard.path, scenario })
            })
            .collect();
        same_config(&parts)?;
        let counted: Vec<(&Path, &ScenarioResult)> = parts.iter().map(|p| (p.path, p.scenario)).collect();
        crate::plausible::sums_fit(&format!("scenarios[{position}]"), &counted)
            .map_err(|(path, wrong)| MergeError::Field { path, field: wrong.field, what: wrong.what })?;
        let mut merged = scenario::merge(&parts, asked)?;
        notes.extend(merged.notes);
        if as_runs {
            // As the shards held it: the one run in `runs` too.
            merged.scenario.runs = vec![RunSample::of(&merged.scenario)];
        }
        scenarios.push(merged.scenario);
    }

    let mut results = first.results.clone().with_scenarios(scenarios);
    results.started_at = shards.iter().map(|s| &s.results.started_at).min().cloned().unwrap_or(results.started_at);
    results.interrupted = shards.iter().any(|s| s.results.interrupted);
    // Whole again; `start` stays shard 0's: the instant every shard waited for.
    results.shard = None;
    Ok(Merged { results, notes })
}

/// Refuses shards of different runs (another `--start-at` instant, another `--run-id`), written
/// by different loadbench versions, or holding different scenarios.
fn same_run(shards: &[Shard]) -> Result<(), MergeError> {
    let Some((first, rest)) = shards.split_first() else { return Err(MergeError::NoShards) };
    for shard in rest {
        same_identity(first, shard)?;
        let tool = |s: &Shard| format!("{} {}", s.results.tool.name, s.results.tool.version);
        if shard.results.tool != first.results.tool {
            return Err(MergeError::Tool {
                a: first.path.clone(),
                a_tool: tool(first),
                b: shard.path.clone(),
                b_tool: tool(shard),
            });
        }
        if !shard.results.scenarios.iter().map(key).eq(first.results.scenarios.iter().map(key)) {
            return Err(MergeError::Scenarios {
                a: first.path.clone(),
                a_list: list(&first.results.scenarios),
                b: shard.path.clone(),
                b_list: list(&shard.results.scenarios),
            });
        }
    }
    Ok(())
}

/// Refuses `shard` unless it names its run as `first` does: the same `--start-at` instant
/// (`start.at`) and the same `--run-id` (`run_id`), each present in both or in neither.
fn same_identity(first: &Shard, shard: &Shard) -> Result<(), MergeError> {
    let at = |s: &Shard| s.results.start.as_ref().map(|start| start.at.clone());
    let fields = [
        ("start.at", at(first), at(shard), "each shard of a run waits for the same --start-at"),
        (
            "run_id",
            first.results.run_id.clone(),
            shard.results.run_id.clone(),
            "each shard of a run has the same --run-id",
        ),
    ];
    for (field, theirs, mine, rule) in fields {
        if theirs != mine {
            let show = |v: &Option<String>| v.as_ref().map_or_else(|| "absent".to_owned(), |v| format!("`{v}`"));
            return Err(MergeError::Field {
                path: shard.path.clone(),
                field: field.to_owned(),
                what: format!(
                    "{}, but {} in {}: shards of different runs ({rule})",
                    show(&mine),
                    show(&theirs),
                    first.path.display()
                ),
            });
        }
    }
    Ok(())
}

/// Whether `s` holds its one run in `runs`, as `cargo loadbench` writes a run (a round of one,
/// whose summary is that run, histograms included: see `rounds.rs`); refuses several runs
/// (`--runs N`), whose medians do not add up. The run's entry is made again from the merge.
fn single_run(path: &Path, s: &mut ScenarioResult) -> Result<bool, MergeError> {
    match s.runs.len() {
        0 => Ok(false),
        1 => {
            s.runs.clear();
            Ok(true)
        }
        runs => Err(MergeError::Runs { path: path.to_owned(), scenario: scenario::label(s), runs }),
    }
}

/// `shards` by index, once each, all of one count: refused when one is not a shard, or they do
/// not make a whole run.
fn in_order(shards: Vec<Shard>) -> Result<Vec<Shard>, MergeError> {
    let mut count_from: Option<(&Path, u32, u32)> = None;
    for shard in &shards {
        let Some(s) = shard.results.shard else { return Err(MergeError::NotAShard(shard.path.clone())) };
        match count_from {
            Some((path, index, count)) if count != s.count => {
                return Err(MergeError::Counts {
                    a: path.to_owned(),
                    a_index: index,
                    a_count: count,
                    b: shard.path.clone(),
                    b_index: s.index,
                    b_count: s.count,
                });
            }
            Some(_) => {}
            None => count_from = Some((&shard.path, s.index, s.count)),
        }
        if s.index >= s.count {
            return Err(MergeError::OutOfRange { path: shard.path.clone(), index: s.index, count: s.count });
        }
    }
    let Some((_, _, count)) = count_from else { return Err(MergeError::NoShards) };
    let mut by_index: Vec<Option<Shard>> = (0..count).map(|_| None).collect();
    for shard in shards {
        let index = shard.results.shard.map_or(0, |s| s.index);
        match by_index.get_mut(index as usize) {
            Some(Some(first)) => {
                return Err(MergeError::Duplicate { index, count, first: first.path.clone(), second: shard.path });
            }
            Some(slot) => *slot = Some(shard),
            None => {}
        }
    }
    let missing: Vec<u32> = (0..count).filter(|&i| by_index.get(i as usize).is_some_and(Option::is_none)).collect();
    if !missing.is_empty() {
        return Err(MergeError::Missing { missing, count });
    }
    Ok(by_index.into_iter().flatten().collect())
}

/// What tells two scenarios apart in one document: package, bench target, name, target.
fn key(s: &ScenarioResult) -> (Option<&str>, Option<&str>, &str, Option<&str>) {
    (s.package.as_deref(), s.bench.as_deref(), s.name.as_str(), s.target_name.as_deref())
}

/// A document's scenarios for a refusal: `shop/api/hello, shop/api/other [fast]`.
fn list(scenarios: &[ScenarioResult]) -> String {
    if scenarios.is_empty() {
        return "none".to_owned();
    }
    let names: Vec<String> = scenarios
        .iter()
        .map(|s| {
            let place: String =
                [s.package.as_deref(), s.bench.as_deref()].into_iter().flatten().map(|p| format!("{p}/")).collect();
            format!("{place}{}", scenario::label(s))
        })
        .collect();
    names.join(", ")
}

/// Refuses a scenario whose `config` differs between shards (`parts`, shard 0's first), naming
/// the first field that does.
fn same_config(parts: &[Part<'_>]) -> Result<(), MergeError> {
    let Some((first, rest)) = parts.split_first() else { return Ok(()) };
    let Some(other) = rest.iter().find(|p| p.scenario.config != first.scenario.config) else { return Ok(()) };
    let json = |part: &Part<'_>| serde_json::to_value(&part.scenario.config).unwrap_or_default();
    let (a, b) = (json(first), json(other));
    let fields =
        |v: &serde_json::Value| v.as_object().map(|o| o.keys().cloned().collect::<Vec<_>>()).unwrap_or_default();
    let field = fields(&a).into_iter().chain(fields(&b)).find(|f| a.get(f) != b.get(f)).unwrap_or_default();
    let value = |v: &serde_json::Value| v.get(&field).map_or_else(|| "absent".to_owned(), ToString::to_string);
    Err(MergeError::Config {
        scenario: scenario::label(first.scenario),
        a: first.path.to_owned(),
        b: other.path.to_owned(),
        values: Box::new((value(&a), value(&b))),
        field,
    })
}

/// Says how many shards and machines ran the merged run: the header describes one machine only,
/// shard 0's.
fn machines_note(shards: &[Shard]) -> String {
    let n = shards.len();
    let noun = if n == 1 { "shard" } else { "shards" };
    let mut hosts: Vec<&str> = Vec::new();
    for host in shards.iter().map(|s| s.results.machine.hostname.as_deref()) {
        match host {
            Some(host) if !hosts.contains(&host) => hosts.push(host),
            Some(_) => {}
            // Unnamed machines cannot be counted.
            None => return format!("{n} {noun} merged; the machine described is shard 0's"),
        }
    }
    let machines = if hosts.len() == 1 { "one machine".to_owned() } else { format!("{} machines", hosts.len()) };
    format!("{n} {noun} merged, run on {machines} ({}); the machine described is shard 0's", hosts.join(", "))
}
