//! The figures of one run of a scenario, kept when `cargo loadbench --runs N` repeats it.

use serde::{Deserialize, Serialize};

use loadbench::report::{LatencyReport, ScenarioReport};

/// What one run of a scenario measured: the figures a comparison with a baseline needs, and the
/// counts that explain them.
///
/// With `--runs N`, [`ScenarioResult::runs`](crate::ScenarioResult::runs) holds N of these, in the order they ran, and the
/// scenario's own figures summarise them (see "Repeated runs" in docs/ci.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSample {
    /// Wall-clock start of this run, RFC 3339 in UTC.
    pub started_at: String,
    /// Wall time of this run, in microseconds.
    pub duration_us: u64,
    /// Iterations that finished.
    pub iterations: u64,
    /// Iterations that failed.
    pub failed: u64,
    /// Iterations that succeeded; absent in files from before it was kept, where it is taken as
    /// `iterations - failed`.
    #[serde(default)]
    pub ok: Option<u64>,
    /// Successful iterations per second of wall time (see `ScenarioReport::rps`).
    pub rps: f64,
    /// Latency of this run's successful iterations; `None` when none succeeded.
    pub latency_us: Option<LatencyReport>,
}

impl RunSample {
    /// The figures of `scenario`, as one run.
    pub fn of(scenario: &ScenarioReport) -> RunSample {
        RunSample {
            started_at: scenario.started_at.clone(),
            duration_us: scenario.duration_us,
            iterations: scenario.iterations,
            failed: scenario.failed,
            ok: Some(scenario.ok),
            rps: scenario.rps,
            latency_us: scenario.latency_us.clone(),
        }
    }

    /// Successful iterations as a fraction of those that succeeded or failed (an iteration
    /// cancelled at the end of a run is neither); `None` when none did.
    pub fn success_rate(&self) -> Option<f64> {
        let ok = self.ok.unwrap_or(self.iterations.saturating_sub(self.failed));
        let attempts = ok.saturating_add(self.failed);
        (attempts > 0).then(|| ok as f64 / attempts as f64)
    }
}
