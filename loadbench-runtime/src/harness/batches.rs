//! The selected scenarios in runs: each alone, except that the scenarios of one `group` run
//! together, as one workload, at the place of the first of them.

use crate::engine::registry::ScenarioEntry;
use crate::engine::{LoadPlan, Position};

/// A selected scenario, the URL it runs against, and its load plan: built once, from its
/// attribute and the run's sizing, and read by every step after (the shard check, its feed, its
/// run).
#[derive(Debug)]
pub(super) struct Selected {
    pub(super) entry: &'static ScenarioEntry,
    pub(super) url: String,
    pub(super) plan: LoadPlan,
}

/// `selected` in batches, in order.
pub(super) fn batches(selected: Vec<Selected>) -> Vec<Vec<Selected>> {
    let mut batches: Vec<Vec<Selected>> = Vec::new();
    for scenario in selected {
        let joins = scenario.entry.config.group.and_then(|group| {
            batches.iter_mut().find(|b| b.first().is_some_and(|first| first.entry.config.group == Some(group)))
        });
        match joins {
            Some(batch) => batch.push(scenario),
            None => batches.push(vec![scenario]),
        }
    }
    batches
}

/// The `[i/n]` of each selected scenario's progress line: its place in the run order, after
/// `offset` scenarios of a larger run of `of` (what `cargo loadbench` passes in
/// [`crate::cli::PROGRESS_ENV`]), else of this binary's selection alone.
#[derive(Debug, Clone)]
pub(super) struct Numbering {
    names: Vec<&'static str>,
    offset: usize,
    of: usize,
}

impl Numbering {
    /// Numbers `selected`, in order; `run` is the larger run's `(offset, total)`, if any.
    pub(super) fn new<'a>(selected: impl Iterator<Item = &'a Selected>, run: Option<(usize, usize)>) -> Numbering {
        let names: Vec<&'static str> = selected.map(|scenario| scenario.entry.name).collect();
        let (offset, of) = match run {
            Some((offset, total)) if offset + names.len() <= total => (offset, total),
            _ => (0, names.len()),
        };
        Numbering { names, offset, of }
    }

    /// The place of the scenario named `name` (1 past the last when not selected).
    pub(super) fn position(&self, name: &str) -> Position {
        let index = self.names.iter().position(|n| *n == name).unwrap_or(self.names.len());
        Position { index: self.offset + index + 1, of: self.of.max(self.offset + index + 1) }
    }
}
