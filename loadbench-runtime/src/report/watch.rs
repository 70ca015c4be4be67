//! [`WatchReport`]: what was seen of a watched server process while a scenario ran.

use serde::{Deserialize, Serialize};

/// What `cargo loadbench --watch NAME=PID` (or the bench binary itself: `Harness::watch`,
/// `Harness::default_target_process`) saw of a server process and its children while a scenario
/// ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WatchReport {
    /// The label given on the command line.
    pub name: String,
    /// The process id.
    pub pid: u32,
    /// Average CPU use over the scenario, in percent of one core (two busy cores: 200).
    pub cpu_avg_percent: Option<f64>,
    /// Highest CPU use over any sampling interval (250 ms), in percent of one core.
    pub cpu_peak_percent: Option<f64>,
    /// Resident memory when the scenario started, in bytes.
    pub rss_start_bytes: Option<u64>,
    /// Highest resident memory seen, in bytes.
    pub rss_peak_bytes: Option<u64>,
    /// Resident memory when the scenario ended, in bytes.
    pub rss_end_bytes: Option<u64>,
    /// Why figures are missing or partial (no such process, it exited mid-run).
    pub note: Option<String>,
    /// The process's CPU and memory second by second of the run, for the HTML report; empty in
    /// files from before it was kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub series: Vec<WatchSample>,
}

/// One second of a [`WatchReport::series`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct WatchSample {
    /// Seconds since the scenario started (0 is the first), as in the timeline.
    pub second: u64,
    /// CPU use over the second, in percent of one core; `None` when it could not be read.
    pub cpu_percent: Option<f64>,
    /// Resident memory at the end of the second, in bytes; `None` when it could not be read.
    pub rss_bytes: Option<u64>,
}
