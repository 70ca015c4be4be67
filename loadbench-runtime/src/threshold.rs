//! Thresholds: pass/fail conditions on a scenario's figures, as k6 has them.
//!
//! A threshold is typed data, [`Threshold`], built in a `const` by `#[scenario(thresholds(…))]`
//! or parsed from the command line (`p99<50ms`) by [`Threshold::from_str`]. [`evaluate`] is the
//! one place that decides whether a finished scenario meets its thresholds; the bench binary (run
//! on its own) and `cargo loadbench` both call it, so they can never disagree.
//!
//! ```
//! use loadbench::threshold::{Metric, Op, Threshold};
//!
//! let t: Threshold = "p99 < 50ms".parse().unwrap();
//! assert_eq!(t, Threshold { metric: Metric::P99, op: Op::Lt, value: 50_000.0 });
//! assert_eq!(t.to_string(), "p99 < 50ms");
//! assert!("p98<50ms".parse::<Threshold>().is_err());
//! ```

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::report::ScenarioReport;

/// A figure of a scenario that a threshold can test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Metric {
    /// Median latency of successful iterations.
    #[serde(rename = "p50")]
    P50,
    /// 90th percentile latency.
    #[serde(rename = "p90")]
    P90,
    /// 99th percentile latency.
    #[serde(rename = "p99")]
    P99,
    /// 99.9th percentile latency.
    #[serde(rename = "p99_9")]
    P999,
    /// Slowest successful iteration.
    #[serde(rename = "max")]
    Max,
    /// Mean latency of successful iterations.
    #[serde(rename = "mean")]
    Mean,
    /// Failed iterations as a fraction of finished ones, from 0 to 1.
    #[serde(rename = "error_rate")]
    ErrorRate,
    /// Finished iterations per second.
    #[serde(rename = "rps")]
    Rps,
    /// Failed iterations, a count.
    #[serde(rename = "failed")]
    Failed,
}

/// What kind of value a [`Metric`] takes, which decides how thresholds on it are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricKind {
    /// A latency: written as a duration (`"50ms"`), stored in microseconds.
    Latency,
    /// A fraction from 0 to 1 (`0.01`, or `1%` on the command line).
    Fraction,
    /// A rate per second (`1000`).
    Rate,
    /// A whole count (`0`).
    Count,
}

impl Metric {
    /// Every metric, in the order error messages list them.
    pub const ALL: [Metric; 9] = [
        Metric::P50,
        Metric::P90,
        Metric::P99,
        Metric::P999,
        Metric::Max,
        Metric::Mean,
        Metric::ErrorRate,
        Metric::Rps,
        Metric::Failed,
    ];

    /// The name used in the attribute, on the command line and in JSON (`p99`, `error_rate`).
    pub fn name(self) -> &'static str {
        match self {
            Metric::P50 => "p50",
            Metric::P90 => "p90",
            Metric::P99 => "p99",
            Metric::P999 => "p99_9",
            Metric::Max => "max",
            Metric::Mean => "mean",
            Metric::ErrorRate => "error_rate",
            Metric::Rps => "rps",
            Metric::Failed => "failed",
        }
    }

    /// How values of this metric are written.
    pub fn kind(self) -> MetricKind {
        match self {
            Metric::P50 | Metric::P90 | Metric::P99 | Metric::P999 | Metric::Max | Metric::Mean => MetricKind::Latency,
            Metric::ErrorRate => MetricKind::Fraction,
            Metric::Rps => MetricKind::Rate,
            Metric::Failed => MetricKind::Count,
        }
    }

    /// The metric's value in `scenario`, in the unit of [`Threshold::value`]; `None` when it was
    /// not measured (a latency when no iteration succeeded, a rate when none finished).
    pub fn measure(self, scenario: &ScenarioReport) -> Option<f64> {
        let latency = scenario.latency_us.as_ref();
        match self {
            Metric::P50 => latency.map(|l| l.p50),
            Metric::P90 => latency.map(|l| l.p90),
            Metric::P99 => latency.map(|l| l.p99),
            Metric::P999 => latency.map(|l| l.p99_9),
            Metric::Max => latency.map(|l| l.max),
            Metric::Mean => latency.map(|l| l.mean),
            Metric::ErrorRate => (scenario.iterations > 0).then(|| scenario.failed as f64 / scenario.iterations as f64),
            Metric::Rps => Some(scenario.rps),
            Metric::Failed => Some(scenario.failed as f64),
        }
    }

    /// `value` as a limit on this metric is written: `50ms`, `0.01`, `1000`.
    pub fn format_limit(self, value: f64) -> String {
        match self.kind() {
            MetricKind::Latency => format_latency_limit(value),
            MetricKind::Fraction | MetricKind::Rate | MetricKind::Count => format_number(value),
        }
    }

    /// A measured `value` of this metric as the results table shows it: `61.2ms`, `0.0123`,
    /// `12,345`.
    pub fn format_measured(self, value: f64) -> String {
        match self.kind() {
            MetricKind::Latency => crate::table::micros(value),
            MetricKind::Fraction => format_number((value * 10_000.0).round() / 10_000.0),
            MetricKind::Rate => crate::table::rate(value),
            MetricKind::Count => crate::table::thousands(value.max(0.0).round() as u64),
        }
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Op {
    /// `<`
    #[serde(rename = "<")]
    Lt,
    /// `<=`
    #[serde(rename = "<=")]
    Le,
    /// `>`
    #[serde(rename = ">")]
    Gt,
    /// `>=`
    #[serde(rename = ">=")]
    Ge,
}

impl Op {
    /// `<`, `<=`, `>` or `>=`.
    pub fn symbol(self) -> &'static str {
        match self {
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
        }
    }

    /// Whether `actual OP limit` holds.
    pub fn holds(self, actual: f64, limit: f64) -> bool {
        match self {
            Op::Lt => actual < limit,
            Op::Le => actual <= limit,
            Op::Gt => actual > limit,
            Op::Ge => actual >= limit,
        }
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.symbol())
    }
}

/// One condition a scenario must meet, such as `p99 < 50ms`.
///
/// Built in a `const` by the `#[scenario]` macro, so every field is public.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Threshold {
    /// The figure tested.
    pub metric: Metric,
    /// How it is compared with [`Threshold::value`].
    pub op: Op,
    /// The limit, in the unit of the metric's JSON field: microseconds for latencies, a fraction
    /// for `error_rate`, per second for `rps`, a count for `failed`.
    pub value: f64,
}

impl Threshold {
    /// Whether `scenario` meets this threshold, with the measured value.
    pub fn check(&self, scenario: &ScenarioReport) -> ThresholdOutcome {
        let actual = self.metric.measure(scenario);
        // An unmeasured figure fails: "p99 < 50ms" is not met by a run where nothing succeeded.
        let passed = actual.is_some_and(|a| self.op.holds(a, self.value));
        ThresholdOutcome { threshold: *self, actual, passed }
    }
}

impl fmt::Display for Threshold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} {}", self.metric, self.op, self.metric.format_limit(self.value))
    }
}

/// Why a threshold could not be parsed; each message names what to write instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ThresholdError {
    /// No comparison operator.
    #[error("expected METRIC OP VALUE, such as `p99<50ms` or `error_rate<0.01`")]
    Shape,
    /// An operator other than `<`, `<=`, `>`, `>=`.
    #[error("unsupported comparison `{0}`; use <, <=, > or >=")]
    Op(String),
    /// The metric is not one of [`Metric::ALL`].
    #[error("unknown metric `{0}`; expected one of: {names}", names = metric_names())]
    UnknownMetric(String),
    /// The value does not fit the metric.
    #[error("{metric} {expected}, not `{value}`")]
    Value {
        /// The metric.
        metric: Metric,
        /// What it takes, such as `takes a duration such as 50ms`.
        expected: &'static str,
        /// The value as written.
        value: String,
    },
}

/// `p50, p90, …` for messages.
fn metric_names() -> String {
    Metric::ALL.map(Metric::name).join(", ")
}

impl FromStr for Metric {
    type Err = ThresholdError;

    fn from_str(s: &str) -> Result<Metric, ThresholdError> {
        Metric::ALL.into_iter().find(|m| m.name() == s).ok_or_else(|| ThresholdError::UnknownMetric(s.to_owned()))
    }
}

impl FromStr for Threshold {
    type Err = ThresholdError;

    /// Parses `METRIC OP VALUE`, spaces optional: `p99<50ms`, `error_rate <= 1%`, `rps>1000`.
    fn from_str(s: &str) -> Result<Threshold, ThresholdError> {
        let at = s.find(['<', '>', '=', '!']).ok_or(ThresholdError::Shape)?;
        let (metric, rest) = (s[..at].trim(), &s[at..]);
        let op_len = rest.find(|c: char| !matches!(c, '<' | '>' | '=' | '!')).unwrap_or(rest.len());
        let op = match &rest[..op_len] {
            "<" => Op::Lt,
            "<=" => Op::Le,
            ">" => Op::Gt,
            ">=" => Op::Ge,
            other => return Err(ThresholdError::Op(other.to_owned())),
        };
        let value = rest[op_len..].trim();
        if metric.is_empty() || value.is_empty() {
            return Err(ThresholdError::Shape);
        }
        let metric: Metric = metric.parse()?;
        let value = parse_value(metric, value)?;
        Ok(Threshold { metric, op, value })
    }
}

/// A threshold's value as written on the command line, checked against what the metric takes.
fn parse_value(metric: Metric, text: &str) -> Result<f64, ThresholdError> {
    let bad = |expected| ThresholdError::Value { metric, expected, value: text.to_owned() };
    match metric.kind() {
        MetricKind::Latency => {
            // A bare number would be a guess at the unit; humantime insists on one too.
            let duration = humantime::parse_duration(text).map_err(|_| bad("takes a duration such as 50ms"))?;
            Ok(duration.as_nanos() as f64 / 1_000.0)
        }
        MetricKind::Fraction => {
            let value = match text.strip_suffix('%') {
                Some(percent) => percent.trim().parse::<f64>().map(|p| p / 100.0),
                None => text.parse::<f64>(),
            };
            match value {
                Ok(v) if (0.0..=1.0).contains(&v) => Ok(v),
                _ => Err(bad("is a fraction from 0 to 1, such as 0.01 or 1%")),
            }
        }
        MetricKind::Rate => match text.parse::<f64>() {
            Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
            _ => Err(bad("takes a number of iterations per second, such as 1000")),
        },
        MetricKind::Count => text.parse::<u64>().map(|n| n as f64).map_err(|_| bad("takes a whole number, such as 0")),
    }
}

/// Whether a scenario met one threshold.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ThresholdOutcome {
    /// The threshold.
    #[serde(flatten)]
    pub threshold: Threshold,
    /// The measured value, in the threshold's unit; `None` when the figure was not measured
    /// (no iteration succeeded), which fails the threshold.
    pub actual: Option<f64>,
    /// Whether the threshold held.
    pub passed: bool,
}

impl fmt::Display for ThresholdOutcome {
    /// `p99 < 50ms (was 61.2ms)`, or `p99 < 50ms (not measured)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.actual {
            Some(actual) => write!(f, "{} (was {})", self.threshold, self.threshold.metric.format_measured(actual)),
            None => write!(f, "{} (not measured: no iteration succeeded)", self.threshold),
        }
    }
}

/// Checks every threshold in `scenario.config.thresholds` against its figures.
///
/// A scenario that did not run at all ([`ScenarioReport::setup_error`]) has no outcomes: it is
/// reported as not run (exit code 3), which says more than a list of unmeasured figures.
pub fn evaluate(scenario: &ScenarioReport) -> Vec<ThresholdOutcome> {
    if scenario.setup_error.is_some() {
        return Vec::new();
    }
    scenario.config.thresholds.iter().map(|t| t.check(scenario)).collect()
}

/// Whether any threshold outcome recorded in `scenario` failed.
pub fn any_failed(scenario: &ScenarioReport) -> bool {
    scenario.thresholds.iter().any(|o| !o.passed)
}

/// A latency limit in microseconds as humantime writes it (`50ms`, `1s 500ms`), so that it reads
/// back as the same threshold.
fn format_latency_limit(us: f64) -> String {
    if !us.is_finite() || us < 0.0 {
        return format_number(us);
    }
    let nanos = (us * 1_000.0).round();
    humantime::format_duration(Duration::from_nanos(nanos as u64)).to_string()
}

/// A number without a needless fraction: `1000`, `0.01`.
fn format_number(value: f64) -> String {
    // `{}` on f64 already prints the shortest form that reads back exactly.
    format!("{value}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{ConfigReport, LatencyReport};

    fn parse(s: &str) -> Threshold {
        s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn error(s: &str) -> String {
        match s.parse::<Threshold>() {
            Ok(t) => panic!("{s} parsed as {t:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn parses_every_metric_and_operator() {
        assert_eq!(parse("p99<50ms"), Threshold { metric: Metric::P99, op: Op::Lt, value: 50_000.0 });
        assert_eq!(parse(" p50 <= 1s 500ms "), Threshold { metric: Metric::P50, op: Op::Le, value: 1_500_000.0 });
        assert_eq!(parse("p99_9<2ms").metric, Metric::P999);
        assert_eq!(parse("error_rate<0.01"), Threshold { metric: Metric::ErrorRate, op: Op::Lt, value: 0.01 });
        assert_eq!(parse("error_rate<=1%").value, 0.01);
        assert_eq!(parse("rps>1000"), Threshold { metric: Metric::Rps, op: Op::Gt, value: 1000.0 });
        assert_eq!(parse("rps >= 12.5").op, Op::Ge);
        assert_eq!(parse("failed<=0"), Threshold { metric: Metric::Failed, op: Op::Le, value: 0.0 });
        for metric in Metric::ALL {
            let value = if metric.kind() == MetricKind::Latency { "5ms" } else { "1" };
            assert_eq!(parse(&format!("{metric}<{value}")).metric, metric);
        }
    }

    #[test]
    fn display_reads_back_as_the_same_threshold() {
        for text in ["p99 < 50ms", "p50 <= 1s 500ms", "mean > 250us", "error_rate < 0.01", "rps >= 1000", "failed <= 0"]
        {
            let threshold = parse(text);
            assert_eq!(threshold.to_string(), text);
            assert_eq!(parse(&threshold.to_string()), threshold);
        }
    }

    #[test]
    fn mistakes_say_what_to_write() {
        assert_eq!(
            error("p98<50ms"),
            "unknown metric `p98`; expected one of: p50, p90, p99, p99_9, max, mean, error_rate, rps, failed"
        );
        assert_eq!(error("p99 50ms"), "expected METRIC OP VALUE, such as `p99<50ms` or `error_rate<0.01`");
        assert_eq!(error("<50ms"), "expected METRIC OP VALUE, such as `p99<50ms` or `error_rate<0.01`");
        assert_eq!(error("p99<"), "expected METRIC OP VALUE, such as `p99<50ms` or `error_rate<0.01`");
        assert_eq!(error("p99==50ms"), "unsupported comparison `==`; use <, <=, > or >=");
        assert_eq!(error("p99=<50ms"), "unsupported comparison `=<`; use <, <=, > or >=");
        assert_eq!(error("p99<50"), "p99 takes a duration such as 50ms, not `50`");
        assert_eq!(error("error_rate<2"), "error_rate is a fraction from 0 to 1, such as 0.01 or 1%, not `2`");
        assert_eq!(error("rps>-1"), "rps takes a number of iterations per second, such as 1000, not `-1`");
        assert_eq!(error("failed<0.5"), "failed takes a whole number, such as 0, not `0.5`");
    }

    fn scenario() -> ScenarioReport {
        let config = ConfigReport { concurrency: 1, count: Some(100), timeout_ms: 1_000, ..ConfigReport::default() };
        let mut s = ScenarioReport::not_started("hello", config);
        s.iterations = 100;
        s.ok = 98;
        s.failed = 2;
        s.rps = 1_500.0;
        s.latency_us = Some(LatencyReport {
            mean: 900.0,
            stdev: 10.0,
            min: 100.0,
            p50: 800.0,
            p90: 1_000.0,
            p99: 2_000.0,
            p99_9: 3_000.0,
            max: 4_000.0,
        });
        s
    }

    #[test]
    fn evaluation_compares_the_measured_figures() {
        let mut s = scenario();
        s.config.thresholds =
            ["p99<2ms", "p99<=2ms", "error_rate<0.01", "error_rate<=2%", "rps>1000", "failed<2", "mean<1ms"]
                .map(parse)
                .to_vec();
        let outcomes = evaluate(&s);
        let passed: Vec<bool> = outcomes.iter().map(|o| o.passed).collect();
        assert_eq!(passed, [false, true, false, true, true, false, true]);
        assert_eq!(outcomes[0].to_string(), "p99 < 2ms (was 2.00ms)");
        assert_eq!(outcomes[2].to_string(), "error_rate < 0.01 (was 0.02)");
        assert_eq!(outcomes[5].to_string(), "failed < 2 (was 2)");
    }

    #[test]
    fn unmeasured_figures_fail_and_scenarios_that_did_not_run_have_no_outcomes() {
        let mut s = scenario();
        s.latency_us = None;
        s.config.thresholds = vec![parse("p99<1s"), parse("failed<=100")];
        let outcomes = evaluate(&s);
        assert!(!outcomes[0].passed, "{outcomes:?}");
        assert_eq!(outcomes[0].to_string(), "p99 < 1s (not measured: no iteration succeeded)");
        assert!(outcomes[1].passed);

        s.setup_error = Some("target does not resolve".into());
        assert!(evaluate(&s).is_empty());
    }

    #[test]
    fn json_names_the_metric_and_operator() {
        let json = serde_json::to_string(&parse("p99_9 >= 2ms")).unwrap_or_default();
        assert_eq!(json, r#"{"metric":"p99_9","op":">=","value":2000.0}"#);
        let back: Threshold = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back, parse("p99_9>=2ms"));
    }
}
