//! How a scenario compares with the same scenario in a saved baseline
//! (`cargo loadbench --baseline NAME`), or with the base commit (`cargo loadbench ab BASE`).

use loadbench::report::units;
use serde::{Deserialize, Serialize};

use crate::runs::RunSample;

/// The comparison of one scenario with its baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// The baseline's name (`--baseline NAME`); in [`ScenarioResult::side_by_side`](crate::ScenarioResult::side_by_side), the
    /// name of the first target, which the others are compared with; with `cargo loadbench ab`,
    /// the base commit's short name ([`Commit::short`]).
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
    /// scenario's order, by the same rule as the scenario but for it/s (a step runs once per
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
    /// With `cargo loadbench ab`: the two commits compared; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commits: Option<Commits>,
    /// With `cargo loadbench ab`: the base's runs, in the order they ran, each paired with the
    /// head's run of the same round ([`ScenarioResult::runs`](crate::ScenarioResult::runs), by
    /// position); absent otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub base_runs: Vec<RunSample>,
}

impl Comparison {
    /// What the figures are compared with, as the outputs name it: ``baseline `main` `` or, with
    /// `cargo loadbench ab`, ``base `1a2b3c4` ``.
    ///
    /// ```
    /// # use cargo_loadbench::Comparison;
    /// let json = r#"{"baseline":"main","verdict":"no_change","reason":null,"method":"bootstrap",
    ///   "noise_threshold":0.05,"baseline_runs":3,"runs":3,"metrics":[]}"#;
    /// let comparison: Comparison = serde_json::from_str(json).unwrap();
    /// assert_eq!(comparison.reference(), "baseline `main`");
    /// ```
    pub fn reference(&self) -> String {
        match &self.commits {
            Some(commits) => format!("base `{}`", commits.base.short),
            None => format!("baseline `{}`", self.baseline),
        }
    }
}

/// The two commits `cargo loadbench ab` measured.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Commits {
    /// The commit compared with, `BASE_REV`.
    pub base: Commit,
    /// The commit measured against it: `--head REV`, or the working tree.
    pub head: Commit,
}

/// One side of `cargo loadbench ab`, as git names it.
///
/// ```
/// # use cargo_loadbench::Commit;
/// let json = r#"{"sha":"1a2b3c4d5e6f","short":"1a2b3c4","subject":"Add a cache"}"#;
/// let commit: Commit = serde_json::from_str(json).unwrap();
/// assert_eq!(commit.to_string(), "1a2b3c4 (Add a cache)");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Commit {
    /// The commit's full object name; for the working tree, that of the commit it was checked
    /// out from (`HEAD`).
    pub sha: String,
    /// The name abbreviated as `git rev-parse --short` gives it.
    pub short: String,
    /// The first line of the commit's message.
    pub subject: String,
    /// Whether this is the working tree with changes to tracked files that are not committed,
    /// which were measured with the rest.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub uncommitted: bool,
}

impl std::fmt::Display for Commit {
    /// `1a2b3c4 (Add a cache)`, and `1a2b3c4 (Add a cache) with uncommitted changes`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.short, self.subject)?;
        if self.uncommitted {
            f.write_str(" with uncommitted changes")?;
        }
        Ok(())
    }
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
    /// `cargo loadbench ab`: the head's and the base's runs paired by round (they ran back to
    /// back, in alternating order), and a bootstrap confidence interval on the median of the
    /// per-round ratios head / base, which must lie wholly beyond the noise threshold.
    Paired,
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

    /// The name in tables: `it/s`, `p50`, `p99`, `success rate`. The rate compared is of
    /// successful iterations (`rps` in the JSON), which a journey of several requests counts once
    /// per iteration: `it/s`, so as not to read as the results table's HTTP `req/s`.
    pub fn label(self) -> &'static str {
        match self {
            ComparedMetric::Rps => "it/s",
            ComparedMetric::P50 => "p50",
            ComparedMetric::P99 => "p99",
            ComparedMetric::SuccessRate => "success rate",
        }
    }

    /// Whether a larger value is an improvement.
    pub fn higher_is_better(self) -> bool {
        matches!(self, ComparedMetric::Rps | ComparedMetric::SuccessRate)
    }

    /// A value of this metric as the tables show it: `1,234` (it/s), `5.21ms`, `99.5%`.
    pub fn show(self, value: f64) -> String {
        match self {
            ComparedMetric::Rps => units::rate(value),
            ComparedMetric::P50 | ComparedMetric::P99 => units::micros(value),
            ComparedMetric::SuccessRate => format!("{:.1}%", value * 100.0),
        }
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
    /// Relative change of the median, `new / old - 1` (0.12 for +12 %); with [`Method::Paired`],
    /// the median of the per-round ratios head / base, less one.
    pub change: f64,
    /// The 95 % confidence interval of `change`, `[low, high]`; `None` with
    /// [`Method::SingleRun`].
    pub confidence_interval: Option<[f64; 2]>,
    /// Improved, regressed or no change, taking the direction of the metric into account.
    pub verdict: Verdict,
}

impl MetricChange {
    /// `p50 5.21ms → 10.4ms (+99.6%)`: old, new and the change, as the gate's line names a
    /// regression.
    ///
    /// ```
    /// # use cargo_loadbench::{ComparedMetric, MetricChange, Verdict};
    /// let p50 = MetricChange { metric: ComparedMetric::P50, old: 5_210.0, new: 10_400.0, change: 0.996,
    ///     confidence_interval: None, verdict: Verdict::Regressed };
    /// assert_eq!(p50.summary(), "p50 5.21ms → 10.4ms (+99.6%)");
    /// ```
    pub fn summary(&self) -> String {
        format!(
            "{} {} → {} ({})",
            self.metric.label(),
            self.metric.show(self.old),
            self.metric.show(self.new),
            units::change(self.change)
        )
    }

    /// [`MetricChange::summary`] with what made it count, for a failure's message: its 95 %
    /// confidence interval when there is one, and the noise threshold (`noise`, a fraction) it
    /// lies beyond.
    ///
    /// ```
    /// # use cargo_loadbench::{ComparedMetric, MetricChange, Verdict};
    /// let p99 = MetricChange { metric: ComparedMetric::P99, old: 5_000.0, new: 6_000.0, change: 0.2,
    ///     confidence_interval: Some([0.15, 0.26]), verdict: Verdict::Regressed };
    /// assert_eq!(p99.summary_with_interval(0.05), "p99 5.00ms → 6.00ms (+20.0%, 95% CI +15.0% to +26.0%, beyond ±5%)");
    /// ```
    pub fn summary_with_interval(&self, noise: f64) -> String {
        let interval = self
            .confidence_interval
            .map(|[low, high]| format!(", 95% CI {} to {}", units::change(low), units::change(high)))
            .unwrap_or_default();
        format!(
            "{} {} → {} ({}{interval}, beyond ±{}%)",
            self.metric.label(),
            self.metric.show(self.old),
            self.metric.show(self.new),
            units::change(self.change),
            format_percent(noise)
        )
    }
}

/// `5`, `2.5`: a fraction as a percentage without trailing zeros.
fn format_percent(fraction: f64) -> String {
    let p = (fraction * 1000.0).round() / 10.0;
    if p.fract() == 0.0 { format!("{p:.0}") } else { format!("{p}") }
}

impl Comparison {
    /// The metrics that regressed, the success rate first, as the verdict weighs it.
    fn regressed_metrics(&self) -> Vec<&MetricChange> {
        let mut regressed: Vec<&MetricChange> =
            self.metrics.iter().filter(|m| m.verdict == Verdict::Regressed).collect();
        regressed.sort_by_key(|m| m.metric != ComparedMetric::SuccessRate);
        regressed
    }

    /// What regressed, old → new ([`MetricChange::summary`]): `p50 5.21ms → 10.4ms (+99.6%),
    /// it/s 761 → 382 (-49.8%)`; empty when nothing regressed.
    pub fn regressed_summary(&self) -> String {
        self.regressed_metrics().iter().map(|m| m.summary()).collect::<Vec<_>>().join(", ")
    }

    /// [`Comparison::regressed_summary`] with each change's interval and the noise threshold
    /// ([`MetricChange::summary_with_interval`]), for a failure's message.
    pub fn regressed_figures(&self) -> String {
        let metrics = self.regressed_metrics();
        metrics.iter().map(|m| m.summary_with_interval(self.noise_threshold)).collect::<Vec<_>>().join(", ")
    }
}
