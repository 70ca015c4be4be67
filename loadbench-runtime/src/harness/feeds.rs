//! [`Harness::feed`], and every selected scenario's feed loaded before the first load.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use super::batches::Selected;
use super::{Harness, HarnessError};
use crate::feed::{Feed, FeedSource, LoadError};

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

/// Each selected scenario's feed, by scenario name.
pub(super) type Feeds = Vec<(&'static str, Arc<Feed>)>;

/// Loads the feed of each selected scenario that has one: given to [`Harness::feed`], else
/// declared by its attribute. A per-user feed is checked against the users of the scenario's plan.
/// `Ok(Err(file))` when `stop` was set while `file` was being read (a blocked FIFO, a long file):
/// the run ends there, interrupted.
pub(super) fn load_feeds(
    selected: &[Selected],
    given: &[(String, FeedSource)],
    stop: &AtomicBool,
) -> Result<Result<Feeds, String>, HarnessError> {
    let mut feeds = Vec::new();
    for Selected { entry, plan, .. } in selected {
        let source = match given.iter().rev().find(|(name, _)| name == entry.name) {
            Some((_, source)) => source.clone(),
            None => match &entry.config.feed {
                Some(config) => config.source(),
                None => continue,
            },
        };
        let users = plan.concurrency;
        let file = source.path().display().to_string();
        match Feed::load(source, users, stop) {
            Ok(feed) => feeds.push((entry.name, Arc::new(feed))),
            Err(LoadError::Refused(err)) => return Err(err.into()),
            Err(LoadError::Stopped) => return Ok(Err(file)),
        }
    }
    Ok(Ok(feeds))
}
