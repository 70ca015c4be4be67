//! Whether a scenario, or its rows of a name, met one threshold: an entry of
//! `ScenarioReport::thresholds`, and its words in every output.

use loadbench_grammar::Threshold;
use serde::{Deserialize, Serialize};

use super::latency::LatencyReport;
use super::units;

/// Whether a scenario, or its rows of a name, met one threshold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThresholdOutcome {
    /// The threshold.
    #[serde(flatten)]
    pub threshold: Threshold,
    /// The measured value, in the threshold's unit; `None` when the figure was not measured
    /// (no iteration succeeded; for `checks`, no check was made; no row of the name), which fails
    /// the threshold.
    pub actual: Option<f64>,
    /// Whether the threshold held.
    pub passed: bool,
    /// For a threshold on a row (`thresholds("login": …)`), the row's name: its step and its
    /// named request of that name are held to it, and `actual` is the figure of the one that
    /// failed it, or of the one nearest its limit; absent for a threshold on the scenario.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row: Option<String>,
    /// True when no step nor named request of [`ThresholdOutcome::row`]'s name was recorded,
    /// which fails the threshold (a misspelt name would otherwise pass unseen).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub row_missing: bool,
}

impl ThresholdOutcome {
    /// The outcome of `threshold` on the scenario: `actual`, and whether it `passed`.
    pub fn scenario(threshold: Threshold, actual: Option<f64>, passed: bool) -> ThresholdOutcome {
        ThresholdOutcome { threshold, actual, passed, row: None, row_missing: false }
    }

    /// The condition as written on the command line, without its figure: `p99 < 50ms`, or on a
    /// row `{login}: p99 < 50ms`.
    pub fn condition(&self) -> String {
        match &self.row {
            Some(row) => format!("{{{row}}}: {}", self.threshold),
            None => self.threshold.to_string(),
        }
    }
}

impl std::fmt::Display for ThresholdOutcome {
    /// `p99 < 50ms (was 61.2ms)`, or `p99 < 50ms (not measured: no iteration succeeded)`; on a
    /// row, `{login}: p99 < 50ms (was 61.2ms)`, or `{login}: p99 < 50ms (no row named `login`
    /// was recorded)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(row) = &self.row {
            write!(f, "{{{row}}}: ")?;
            if self.row_missing {
                return write!(f, "{} (no step or named request `{row}` was recorded)", self.threshold);
            }
            if self.actual.is_none() {
                return write!(f, "{} (not measured: no run of `{row}` succeeded)", self.threshold);
            }
        }
        match self.actual {
            Some(actual) => {
                write!(f, "{} (was {})", self.threshold, units::metric_value(self.threshold.metric, actual))
            }
            None if self.threshold.metric == loadbench_grammar::Metric::Checks => {
                write!(f, "{} (not measured: no check was made)", self.threshold)
            }
            None => match self.threshold.metric.percentile() {
                // Only a run asked for a percentile computes it; a report from another may lack it.
                Some(p) if !LatencyReport::FIXED.contains(&p) => {
                    write!(f, "{} (not measured: no iteration succeeded, or {p} was not computed)", self.threshold)
                }
                _ => write!(f, "{} (not measured: no iteration succeeded)", self.threshold),
            },
        }
    }
}
