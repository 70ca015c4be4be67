//! What load a scenario applies, as declared by its attribute.

use std::time::Duration;

/// Per-request timeout used when the attribute gives none (k6 uses 60 s, wrk 2 s; 30 s keeps a
/// stalled server from holding a run for a minute while leaving room for slow endpoints).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a scenario runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Load {
    /// Run the body exactly this many times in total, across all virtual users.
    Count(u64),
    /// Keep starting iterations until this much time has passed.
    Duration(Duration),
}

/// The settings of one scenario, built by `#[scenario]` in a `const` context.
// Not `Eq`: thresholds hold `f64` limits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScenarioConfig {
    /// Virtual users: at most this many bodies in flight, and this many whenever there is work.
    pub concurrency: u32,
    /// When the scenario stops.
    pub load: Load,
    /// Per-request timeout; [`DEFAULT_TIMEOUT`] when `None`.
    pub timeout: Option<Duration>,
    /// Base URL from the attribute; the command line and `LOADBENCH_TARGET` take precedence.
    pub target: Option<&'static str>,
    /// `thresholds(…)` from the attribute: conditions checked after a full run.
    pub thresholds: &'static [crate::threshold::Threshold],
}

impl ScenarioConfig {
    /// The per-request timeout in force.
    pub fn timeout(&self) -> Duration {
        self.timeout.unwrap_or(DEFAULT_TIMEOUT)
    }
}
