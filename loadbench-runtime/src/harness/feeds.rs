//! [`Harness::feed`], and every selected scenario's feed loaded before the first load.

use std::sync::Arc;

use super::{Harness, HarnessError};
use crate::engine::registry::ScenarioEntry;
use crate::engine::{LoadPlan, Sizing};
use crate::feed::{Feed, FeedSource};

impl Harness {
    /// Gives scenario `scenario` the records of `source` for [`Ctx::feed`](crate::Ctx::feed),
    /// in place of the feed its attribute declares, if any. Like an attribute's feed, the file
    /// is read once, before any scenario runs; a missing or malformed one is a usage error
    /// (exit code 2) before any load.
    ///
    /// ```no_run
    /// use loadbench::feed::{FeedMode, FeedSource};
    ///
    /// fn main() -> std::process::ExitCode {
    ///     loadbench::Harness::new().feed("browse", FeedSource::new("data/products.jsonl").mode(FeedMode::Random)).run()
    /// }
    /// ```
    pub fn feed(mut self, scenario: impl Into<String>, source: FeedSource) -> Harness {
        self.feeds.push((scenario.into(), source));
        self
    }
}

/// Loads the feed of each selected scenario that has one: given to [`Harness::feed`], else
/// declared by its attribute. A per-user feed is checked against the users the run will have.
pub(super) fn load_feeds(
    selected: &[&'static ScenarioEntry],
    given: &[(String, FeedSource)],
    sizing: Sizing,
) -> Result<Vec<(&'static str, Arc<Feed>)>, HarnessError> {
    let mut feeds = Vec::new();
    for entry in selected {
        let source = match given.iter().rev().find(|(name, _)| name == entry.name) {
            Some((_, source)) => source.clone(),
            None => match &entry.config.feed {
                Some(config) => config.source(),
                None => continue,
            },
        };
        let users = LoadPlan::new(&entry.config, sizing).concurrency;
        feeds.push((entry.name, Arc::new(Feed::load(source, users)?)));
    }
    Ok(feeds)
}
