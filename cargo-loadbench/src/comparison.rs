//! How a scenario compares with the same scenario in a saved baseline
//! (`cargo loadbench --baseline NAME`).

use serde::{Deserialize, Serialize};

/// The comparison of one scenario with its baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// The baseline's name (`--baseline NAME`); in [`ScenarioResult::side_by_side`](crate::ScenarioResult::side_by_side), the
    /// name of the first target, which the others are compared with.
    pub baseline: String,
    /// The overall verdict, the success rate first: [`Verdict::Regressed`] when the success
    /// rate regressed, whatever the speed, or when any other metric regressed, else
    /// [`Verdict::Improved`] when any improved, else [`Verdict::NoChange`]; or why there is no
    /// verdict.
    pub verdict: Verdict,
    /// Why the scenario is [`Verdict::NotComparable`] (different load, did not run, …).
    pub reason: Option<String>,
    /// How the verdict was reached.
    pub method: Method,
    /// Changes smaller than this fraction (0.05 for 5 %) count as noise.
    pub noise_threshold: f64,
    /// Runs of the scenario in the baseline.
    pub baseline_runs: u32,
    /// Runs of the scenario now.
    pub runs: u32,
    /// One entry per compared metric; empty when there is no verdict.
    pub metrics: Vec<MetricChange>,
    /// Each step (`ctx.step`) compared with the step of the same name in the baseline, in the
    /// scenario's order, by the same rule as the scenario but for req/s (a step runs once per
    /// iteration, so its rate is the scenario's and would blame every step for one slow step):
    /// p50, p99 and success rate. Empty when the scenario has no verdict (new, not comparable)
    /// or no steps, and in files from before steps were compared.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<RowComparison>,
    /// Each named request (`.name(…)`) compared as [`Comparison::steps`] are.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requests: Vec<RowComparison>,
    /// The baseline's latency spectrum ([`LatencyReport::spectrum`](loadbench::report::LatencyReport::spectrum)),
    /// which the HTML report draws under this run's; empty when the baseline had none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub baseline_spectrum: Vec<loadbench::report::SpectrumPoint>,
}

/// The comparison of one step or named request of a scenario with its baseline: its name and a
/// [`Comparison`] of its own (whose `steps` and `requests` are empty).
///
/// ```
/// # use cargo_loadbench::{RowComparison, Verdict};
/// let json = r#"{"name":"search","baseline":"main","verdict":"regressed","reason":null,
///   "method":"bootstrap","noise_threshold":0.05,"baseline_runs":3,"runs":3,"metrics":[]}"#;
/// let row: RowComparison = serde_json::from_str(json).unwrap();
/// assert_eq!((row.name.as_str(), row.comparison.verdict), ("search", Verdict::Regressed));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RowComparison {
    /// The step's or named request's name.
    pub name: String,
    /// Its comparison, as a scenario's.
    #[serde(flatten)]
    pub comparison: Comparison,
}

/// A verdict on a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Better beyond the noise.
    Improved,
    /// Worse beyond the noise.
    Regressed,
    /// No change larger than the noise.
    NoChange,
    /// The scenario is not in the baseline.
    New,
    /// The scenario cannot be compared with its baseline (see [`Comparison::reason`]).
    NotComparable,
}

impl Verdict {
    /// `improved`, `regressed`, `no change`, `new`, `not comparable`.
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Improved => "improved",
            Verdict::Regressed => "regressed",
            Verdict::NoChange => "no change",
            Verdict::New => "new",
            Verdict::NotComparable => "not comparable",
        }
    }
}

/// How a verdict was reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// A bootstrap confidence interval on the change of the median across runs, which must lie
    /// wholly beyond the noise threshold.
    Bootstrap,
    /// One run on one side or both: the plain change against the noise threshold, with no
    /// measure of the spread.
    SingleRun,
    /// No comparison was made (new or not comparable).
    None,
}

/// A figure that comparisons look at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ComparedMetric {
    /// Successful iterations per second; higher is better.
    Rps,
    /// Median latency; lower is better.
    P50,
    /// 99th percentile latency; lower is better.
    P99,
    /// Successful iterations as a fraction of finished ones; higher is better. Guards against
    /// a change that makes a server fail fast and so look quicker.
    SuccessRate,
}

impl ComparedMetric {
    /// Every compared metric, in display order.
    pub const ALL: [ComparedMetric; 4] =
        [ComparedMetric::Rps, ComparedMetric::P50, ComparedMetric::P99, ComparedMetric::SuccessRate];

    /// The name in tables: `req/s`, `p50`, `p99`, `success rate`.
    pub fn label(self) -> &'static str {
        match self {
            ComparedMetric::Rps => "req/s",
            ComparedMetric::P50 => "p50",
            ComparedMetric::P99 => "p99",
            ComparedMetric::SuccessRate => "success rate",
        }
    }

    /// Whether a larger value is an improvement.
    pub fn higher_is_better(self) -> bool {
        matches!(self, ComparedMetric::Rps | ComparedMetric::SuccessRate)
    }
}

/// How one metric changed.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MetricChange {
    /// The metric.
    pub metric: ComparedMetric,
    /// Median over the baseline's runs (microseconds for latencies).
    pub old: f64,
    /// Median over this run's runs.
    pub new: f64,
    /// Relative change of the median, `new / old - 1` (0.12 for +12 %).
    pub change: f64,
    /// The 95 % confidence interval of `change`, `[low, high]`; `None` with
    /// [`Method::SingleRun`].
    pub confidence_interval: Option<[f64; 2]>,
    /// Improved, regressed or no change, taking the direction of the metric into account.
    pub verdict: Verdict,
}
