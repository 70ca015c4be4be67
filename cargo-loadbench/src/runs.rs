//! The figures of one run of a scenario, kept when `cargo loadbench --runs N` repeats it.

use serde::{Deserialize, Serialize};

use loadbench::report::{LatencyReport, ScenarioReport, StepReport};

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
    /// The figures of each step in this run, for comparing steps with a baseline; absent in
    /// files from before steps were compared (their steps are then compared as one run).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<RowSample>,
    /// The figures of each named request in this run, as [`RunSample::steps`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requests: Vec<RowSample>,
}

/// What one run of a step or named request measured, for its comparison with a baseline.
///
/// ```
/// # use cargo_loadbench::RowSample;
/// let row: RowSample = serde_json::from_str(r#"{"name":"login","iterations":10,"ok":9,"failed":1,"latency_us":null}"#).unwrap();
/// assert_eq!((row.ok, row.failed), (9, 1));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RowSample {
    /// The step's or named request's name.
    pub name: String,
    /// Times it ran to its end.
    pub iterations: u64,
    /// Times it succeeded.
    pub ok: u64,
    /// Times it failed.
    pub failed: u64,
    /// Latency of its successful runs; `None` when none succeeded.
    pub latency_us: Option<LatencyReport>,
}

impl RowSample {
    /// The figures of `row` (a step or named request of one run).
    pub fn of(row: &StepReport) -> RowSample {
        RowSample {
            name: row.name.clone(),
            iterations: row.iterations,
            ok: row.ok,
            failed: row.failed,
            latency_us: row.latency_us.clone(),
        }
    }
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
            steps: scenario.steps.iter().map(RowSample::of).collect(),
            requests: scenario.requests.iter().map(RowSample::of).collect(),
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
