//! The scenarios registered by `#[scenario]` in this binary.
//!
//! Registration uses `inventory`: each attribute submits a `const` [`ScenarioEntry`] that is
//! collected before `main`, so users never list their scenarios by hand. We chose it over
//! `linkme` because its link sections live inside inventory's own `macro_rules` (so our proc
//! macro emits no platform-specific attributes into user crates) and it has no history of
//! breaking under LLD's section garbage collection; over a generated `main!(a, b, c)` because
//! that makes users name each scenario twice.

use std::sync::Arc;

use super::vu::{Hook, VirtualUser, VuFuture};
use crate::cli::Filter;
use crate::config::ScenarioConfig;
use crate::feed::Feed;

/// One `#[scenario]` function, as registered by the macro.
#[derive(Debug)]
pub struct ScenarioEntry {
    /// Display name: the function name, or `name = "…"`.
    pub name: &'static str,
    /// `module_path!()` at the definition.
    pub module_path: &'static str,
    /// `file!()` at the definition.
    pub file: &'static str,
    /// `line!()` at the definition.
    pub line: u32,
    /// The load declared by the attribute.
    pub config: ScenarioConfig,
    /// Starts one virtual user's loop over the scenario body.
    pub run: fn(VirtualUser) -> VuFuture,
    /// `setup = f`: runs once per virtual user before the run starts, outside the figures.
    pub setup: Option<Hook>,
    /// `teardown = f`: runs once per virtual user after its last iteration, outside the figures.
    pub teardown: Option<Hook>,
}

inventory::collect!(ScenarioEntry);

/// What the executor runs: a registered [`ScenarioEntry`], or a body built at run time (a
/// one-shot `cargo loadbench url …` request), which a `fn` pointer cannot carry.
///
/// `run` is called once per virtual user, never per iteration, so the dynamic call costs
/// nothing measurable; it is shared by the worker threads, hence `Send + Sync`.
#[derive(Clone)]
pub(crate) struct Workload {
    /// Display name, for progress.
    pub(crate) name: Arc<str>,
    /// Starts one virtual user's loop over the body.
    pub(crate) run: Arc<dyn Fn(VirtualUser) -> VuFuture + Send + Sync>,
    /// Runs once per virtual user before the run starts.
    pub(crate) setup: Option<Hook>,
    /// Runs once per virtual user after its last iteration.
    pub(crate) teardown: Option<Hook>,
    /// The scenario's feed, loaded before the run; each user gets a cursor into it.
    pub(crate) feed: Option<Arc<Feed>>,
}

impl std::fmt::Debug for Workload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Workload").field("name", &self.name).finish_non_exhaustive()
    }
}

impl From<&'static ScenarioEntry> for Workload {
    fn from(entry: &'static ScenarioEntry) -> Workload {
        Workload {
            name: Arc::from(entry.name),
            run: Arc::new(entry.run),
            setup: entry.setup,
            teardown: entry.teardown,
            // Loaded by the harness, before any scenario runs.
            feed: None,
        }
    }
}

/// Every registered scenario, in source order: by file (as `file!()` names it), then by line,
/// then by name (two scenarios a macro declares on one line). Inventory's own order is
/// unspecified, and people read a table in the order they wrote the scenarios, so every output
/// (the table, JSON, CSV, Markdown, JUnit, `--list`) lists them in this order.
pub fn all() -> Vec<&'static ScenarioEntry> {
    let mut entries: Vec<&'static ScenarioEntry> = inventory::iter::<ScenarioEntry>().collect();
    entries.sort_by_key(|e| (e.file, e.line, e.name));
    entries
}

/// The first name that two registered scenarios share, with both locations.
///
/// Names are how scenarios are selected, reported and compared with baselines, so they must be
/// unique within a binary. The first of the two is the earlier in `entries`' order (source
/// order, as [`all`] returns them).
pub fn duplicate_name(entries: &[&'static ScenarioEntry]) -> Option<(&'static ScenarioEntry, &'static ScenarioEntry)> {
    let mut by_name = entries.to_vec();
    // Stable: entries of one name keep `entries`' order.
    by_name.sort_by_key(|e| e.name);
    by_name.windows(2).find(|pair| pair[0].name == pair[1].name).map(|pair| (pair[0], pair[1]))
}

/// The scenarios `filter` selects, in the order of `entries`.
pub fn select(entries: &[&'static ScenarioEntry], filter: &Filter) -> Vec<&'static ScenarioEntry> {
    entries.iter().copied().filter(|e| filter.matches(e.name)).collect()
}
