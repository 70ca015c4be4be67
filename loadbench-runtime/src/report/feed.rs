//! The JSON of a scenario's feed: what it was (`config.feed`) and, for a feed with
//! `feed_end = "stop"`, when it ran out (`feed_ran_out`), with the table's line for it.

use serde::{Deserialize, Serialize};

use super::ScenarioReport;
use super::units::thousands;
use crate::feed::{FeedEnd, FeedMode};

/// A scenario's feed, as run (`config.feed`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FeedConfigReport {
    /// The file, as declared.
    pub path: String,
    /// How records were handed out.
    #[serde(default)]
    pub mode: FeedMode,
    /// What a sequential feed did at its end.
    #[serde(default)]
    pub end: FeedEnd,
    /// Records in the file.
    #[serde(default)]
    pub records: u64,
}

/// A feed with `feed_end = "stop"` that ran out: the scenario stopped starting iterations.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FeedRanOut {
    /// Records handed out: all of the file's.
    pub records: u64,
    /// Iterations asked for (`count`) that were never started because of it; 0 for a run
    /// bounded by time, which simply ended early.
    pub not_started: u64,
}

/// `feed data/users.csv ran out after 100 records (feed_end = "stop"): 900 iterations not
/// started`, when it did.
pub(super) fn ran_out_line(s: &ScenarioReport) -> Option<String> {
    let ran_out = s.feed_ran_out?;
    let path = s.config.feed.as_ref().map_or("", |f| f.path.as_str());
    let mut line = format!("feed {path} ran out after {} records (feed_end = \"stop\")", thousands(ran_out.records));
    if ran_out.not_started > 0 {
        let noun = if ran_out.not_started == 1 { "iteration" } else { "iterations" };
        line.push_str(&format!(": {} {noun} not started", thousands(ran_out.not_started)));
    }
    Some(line)
}
