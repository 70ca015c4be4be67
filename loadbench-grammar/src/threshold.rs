//! Thresholds: `METRIC OP LIMIT`, such as `p99 < 50ms`, `error_rate <= 1%` or `rps > 1000`.

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;
use std::str::FromStr;
use std::time::Duration;

use crate::duration::{self, DurationError};
use crate::number;
use crate::percentile::Percentile;

/// A figure of a scenario that a threshold can test.
///
/// Latency percentiles are one variant, [`Metric::Percentile`], of any percentile (`p95`, `p75`,
/// `p99_99`); the common ones have names of their own (`Metric::P99`), usable in `match` arms.
/// Written, and in JSON, by [`Metric::name`]: `p99`, `error_rate`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Metric {
    /// A latency percentile of successful iterations: `p50`, `p95`, `p99_9`.
    Percentile(Percentile),
    /// Slowest successful iteration.
    Max,
    /// Mean latency of successful iterations.
    Mean,
    /// Failed iterations as a fraction of finished ones, from 0 to 1.
    ErrorRate,
    /// Finished iterations per second.
    Rps,
    /// Failed iterations, a count.
    Failed,
    /// Passed checks (`ctx.check`) as a fraction of all checks made, from 0 to 1; higher is
    /// better.
    Checks,
    /// Open model: arrivals dropped (every virtual user busy) as a fraction of those due, from 0
    /// to 1. A condition on the generator: failing it makes the run inconclusive, not failed.
    Dropped,
    /// Open model: the achieved arrival rate as a fraction of the rate asked for (`rate >= 95%`).
    /// A condition on the generator.
    Rate,
    /// 1 when the generator's self-check found it saturated, else 0 (`saturated < 1`). A
    /// condition on the generator.
    Saturated,
}

/// What kind of value a [`Metric`] takes, which decides how limits on it are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricKind {
    /// A latency: written as a duration (`50ms`), stored in microseconds.
    Latency,
    /// A fraction from 0 to 1 (`0.01` or `1%`).
    Fraction,
    /// A rate per second (`1000`).
    Rate,
    /// A whole count (`0`).
    Count,
}

impl Metric {
    /// Median latency of successful iterations.
    pub const P50: Metric = Metric::Percentile(Percentile::P50);
    /// 90th percentile latency.
    pub const P90: Metric = Metric::Percentile(Percentile::P90);
    /// 95th percentile latency.
    pub const P95: Metric = Metric::Percentile(Percentile::P95);
    /// 99th percentile latency.
    pub const P99: Metric = Metric::Percentile(Percentile::P99);
    /// 99.9th percentile latency.
    pub const P999: Metric = Metric::Percentile(Percentile::P999);

    /// The metrics with names of their own, in the order messages list them; any other
    /// percentile (`p75`, `p99_99`) is a metric too.
    pub const ALL: [Metric; 14] = [
        Metric::P50,
        Metric::P90,
        Metric::P95,
        Metric::P99,
        Metric::P999,
        Metric::Max,
        Metric::Mean,
        Metric::ErrorRate,
        Metric::Rps,
        Metric::Failed,
        Metric::Checks,
        Metric::Dropped,
        Metric::Rate,
        Metric::Saturated,
    ];

    /// The name written in the attribute, on the command line and in JSON (`p99`, `p99_9`,
    /// `error_rate`).
    ///
    /// ```
    /// use loadbench_grammar::Metric;
    /// assert_eq!(Metric::P999.name(), "p99_9");
    /// assert_eq!(Metric::ErrorRate.name(), "error_rate");
    /// ```
    pub fn name(self) -> Cow<'static, str> {
        Cow::Borrowed(match self {
            Metric::Percentile(p) => return Cow::Owned(p.name()),
            Metric::Max => "max",
            Metric::Mean => "mean",
            Metric::ErrorRate => "error_rate",
            Metric::Rps => "rps",
            Metric::Failed => "failed",
            Metric::Checks => "checks",
            Metric::Dropped => "dropped",
            Metric::Rate => "rate",
            Metric::Saturated => "saturated",
        })
    }

    /// The percentile this metric is, if it is one.
    pub fn percentile(self) -> Option<Percentile> {
        match self {
            Metric::Percentile(p) => Some(p),
            _ => None,
        }
    }

    /// How limits on this metric are written.
    pub fn kind(self) -> MetricKind {
        match self {
            Metric::Percentile(_) | Metric::Max | Metric::Mean => MetricKind::Latency,
            Metric::ErrorRate | Metric::Checks | Metric::Dropped | Metric::Rate => MetricKind::Fraction,
            Metric::Rps => MetricKind::Rate,
            Metric::Failed | Metric::Saturated => MetricKind::Count,
        }
    }

    /// Whether this metric is a condition on the generator rather than on the server (`dropped`,
    /// `rate`, `saturated`): when one fails, the figures are not the server's, and the run is
    /// inconclusive rather than failed.
    ///
    /// ```
    /// use loadbench_grammar::Metric;
    /// assert!(Metric::Dropped.is_generator());
    /// assert!(!Metric::P99.is_generator());
    /// ```
    pub fn is_generator(self) -> bool {
        matches!(self, Metric::Dropped | Metric::Rate | Metric::Saturated)
    }

    /// Parses a limit on this metric, in the unit of [`Threshold::value`]: microseconds for a
    /// latency (`50ms`), a fraction for `error_rate`, `checks`, `dropped` and `rate` (`0.01` or `1%`), per
    /// second for `rps`, a count for `failed` and `saturated`.
    ///
    /// ```
    /// use loadbench_grammar::Metric;
    /// assert_eq!(Metric::P99.parse_limit("1s 500ms"), Ok(1_500_000.0));
    /// assert_eq!(Metric::ErrorRate.parse_limit("1%"), Ok(0.01));
    /// assert!(Metric::P99.parse_limit("0s").is_err());
    /// ```
    pub fn parse_limit(self, text: &str) -> Result<f64, ThresholdError> {
        let text = text.trim();
        let bad = |expected| ThresholdError::Limit { metric: self, expected, limit: text.to_owned() };
        match self.kind() {
            MetricKind::Latency => match duration::parse_positive(text) {
                Ok(limit) => Ok(limit.as_nanos() as f64 / 1_000.0),
                // A latency is never zero: `p99 < 0s` could not be met, `p99 <= 0s` only by nothing.
                Err(DurationError::Zero) => Err(bad("takes a duration above zero, such as 50ms")),
                Err(DurationError::TooLong) => Err(bad("takes a duration of at most about 584 years")),
                // A bare number would be a guess at the unit; humantime insists on one too.
                Err(_) => Err(bad("takes a duration such as 50ms")),
            },
            MetricKind::Fraction => {
                let value = match text.strip_suffix('%') {
                    Some(percent) => number::decimal(percent).map(|p| p / 100.0),
                    None => number::decimal(text),
                };
                match value {
                    Some(v) if (0.0..=1.0).contains(&v) => Ok(v),
                    _ => Err(bad("is a fraction from 0 to 1, such as 0.01 or 1%")),
                }
            }
            MetricKind::Rate => match number::decimal(text) {
                Some(v) if v.is_finite() && v >= 0.0 => Ok(v),
                _ => Err(bad("takes a number of iterations per second, such as 1000")),
            },
            MetricKind::Count => {
                number::whole(text).map(|n| n as f64).ok_or_else(|| bad("takes a whole number, such as 0"))
            }
        }
    }

    /// `value` as a limit on this metric is written: `50ms`, `0.01`, `1000`; it parses back as the
    /// same limit.
    pub fn format_limit(self, value: f64) -> String {
        match self.kind() {
            MetricKind::Latency if value.is_finite() && value >= 0.0 => {
                let nanos = (value * 1_000.0).round();
                humantime::format_duration(Duration::from_nanos(nanos as u64)).to_string()
            }
            // `{}` on f64 prints the shortest form that reads back exactly.
            _ => format!("{value}"),
        }
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

impl FromStr for Metric {
    type Err = ThresholdError;

    /// A name of [`Metric::ALL`], or any percentile: `p75`, `p99_99`.
    fn from_str(s: &str) -> Result<Metric, ThresholdError> {
        let s = s.trim();
        if let Some(metric) = Metric::ALL.into_iter().find(|m| m.name() == s) {
            return Ok(metric);
        }
        s.parse::<Percentile>().map(Metric::Percentile).map_err(|_| ThresholdError::UnknownMetric(s.to_owned()))
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for Metric {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.name())
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for Metric {
    /// By [`Metric::name`], as the attribute and the command line read it.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Metric, D::Error> {
        let name = <Cow<'de, str>>::deserialize(deserializer)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

/// A comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Op {
    /// `<`
    #[cfg_attr(feature = "serde", serde(rename = "<"))]
    Lt,
    /// `<=`
    #[cfg_attr(feature = "serde", serde(rename = "<="))]
    Le,
    /// `>`
    #[cfg_attr(feature = "serde", serde(rename = ">"))]
    Gt,
    /// `>=`
    #[cfg_attr(feature = "serde", serde(rename = ">="))]
    Ge,
}

impl Op {
    /// Every comparison.
    pub const ALL: [Op; 4] = [Op::Lt, Op::Le, Op::Gt, Op::Ge];

    /// The characters comparisons are made of (with the `=` and `!` of mistyped ones, such as
    /// `==` and `!=`): the first of them in a threshold ends its metric.
    pub const CHARS: [char; 4] = ['<', '>', '=', '!'];

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

impl FromStr for Op {
    type Err = ThresholdError;

    fn from_str(s: &str) -> Result<Op, ThresholdError> {
        let s = s.trim();
        Op::ALL.into_iter().find(|op| op.symbol() == s).ok_or_else(|| ThresholdError::Op(s.to_owned()))
    }
}

/// One condition a scenario must meet, such as `p99 < 50ms`.
///
/// The `#[scenario]` attribute builds these in a `const`, so every field is public.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Threshold {
    /// The figure tested.
    pub metric: Metric,
    /// How it is compared with [`Threshold::value`].
    pub op: Op,
    /// The limit, in the unit of the metric's JSON field: microseconds for latencies, a fraction
    /// for `error_rate`, `checks`, `dropped` and `rate`, per second for `rps`, a count for
    /// `failed` and `saturated`.
    pub value: f64,
}

impl fmt::Display for Threshold {
    /// `p99 < 50ms`: parses back as the same threshold.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} {}", self.metric, self.op, self.metric.format_limit(self.value))
    }
}

/// Why a threshold was refused; each message says what to write instead.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ThresholdError {
    /// Not `METRIC OP LIMIT`: no comparison, or nothing on one side of it.
    Shape,
    /// A comparison other than `<`, `<=`, `>`, `>=`.
    Op(String),
    /// A metric not in [`Metric::ALL`].
    UnknownMetric(String),
    /// A limit the metric does not take.
    Limit {
        /// The metric.
        metric: Metric,
        /// What it takes, such as `takes a duration such as 50ms`.
        expected: &'static str,
        /// The limit as written.
        limit: String,
    },
}

impl fmt::Display for ThresholdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ThresholdError::Shape => f.write_str("expected METRIC OP VALUE, such as `p99<50ms` or `error_rate<0.01`"),
            ThresholdError::Op(op) => write!(f, "unsupported comparison `{op}`; use <, <=, > or >="),
            ThresholdError::UnknownMetric(name) => {
                write!(
                    f,
                    "unknown metric `{name}`; expected one of: {}, or another percentile such as p75 or p99_99 \
                     (above p0, below p100)",
                    Metric::ALL.map(Metric::name).join(", ")
                )
            }
            ThresholdError::Limit { metric, expected, limit } => write!(f, "{metric} {expected}, not `{limit}`"),
        }
    }
}

impl std::error::Error for ThresholdError {}

impl Threshold {
    /// Splits `METRIC OP LIMIT` at its comparison, without judging the parts: `(metric, op,
    /// limit)`, each trimmed. The attribute and the command line both split here, so they agree on
    /// where a metric ends.
    pub fn split(text: &str) -> Result<(&str, &str, &str), ThresholdError> {
        let [metric, op, limit] = Threshold::locate(text)?;
        Ok((&text[metric], &text[op], &text[limit]))
    }

    /// Where [`Threshold::split`]'s parts lie in `text`, as byte ranges: for pointing at the part
    /// a mistake is in.
    ///
    /// ```
    /// let [metric, op, limit] = loadbench_grammar::Threshold::locate("p99 <= 5ms").unwrap();
    /// assert_eq!((metric, op, limit), (0..3, 4..6, 7..10));
    /// ```
    pub fn locate(text: &str) -> Result<[Range<usize>; 3], ThresholdError> {
        let at = text.find(Op::CHARS).ok_or(ThresholdError::Shape)?;
        let op_end = text[at..].find(|c: char| !Op::CHARS.contains(&c)).map_or(text.len(), |len| at + len);
        let metric = trimmed(text, 0..at);
        let limit = trimmed(text, op_end..text.len());
        if metric.is_empty() || limit.is_empty() {
            return Err(ThresholdError::Shape);
        }
        Ok([metric, at..op_end, limit])
    }
}

/// `range` of `text` without the white space at its ends.
fn trimmed(text: &str, range: Range<usize>) -> Range<usize> {
    let part = &text[range.clone()];
    let start = range.start + (part.len() - part.trim_start().len());
    start..start + part.trim().len()
}

impl FromStr for Threshold {
    type Err = ThresholdError;

    /// Parses `METRIC OP LIMIT`, spaces optional: `p99<50ms`, `error_rate <= 1%`, `rps>1000`.
    ///
    /// ```
    /// use loadbench_grammar::{Metric, Op, Threshold};
    ///
    /// let t: Threshold = "p99 < 50ms".parse().unwrap();
    /// assert_eq!(t, Threshold { metric: Metric::P99, op: Op::Lt, value: 50_000.0 });
    /// assert_eq!(t.to_string(), "p99 < 50ms");
    /// assert_eq!("p95 < 5ms".parse::<Threshold>().unwrap().metric, Metric::P95);
    /// assert!("p100<50ms".parse::<Threshold>().is_err());
    /// ```
    fn from_str(text: &str) -> Result<Threshold, ThresholdError> {
        let (metric, op, limit) = Threshold::split(text)?;
        let op: Op = op.parse()?;
        let metric: Metric = metric.parse()?;
        let value = metric.parse_limit(limit)?;
        Ok(Threshold { metric, op, value })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(parse("p95<2ms").metric, Metric::P95);
        assert_eq!(parse("p98<2ms").metric.percentile().map(Percentile::percent), Some(98.0));
        assert_eq!(parse("p99_99 <= 2ms").metric.to_string(), "p99_99");
        assert_eq!(parse("error_rate<0.01"), Threshold { metric: Metric::ErrorRate, op: Op::Lt, value: 0.01 });
        assert_eq!(parse("error_rate<=1%").value, 0.01);
        assert_eq!(parse("rps>1000"), Threshold { metric: Metric::Rps, op: Op::Gt, value: 1000.0 });
        assert_eq!(parse("rps>1_000").value, 1000.0);
        assert_eq!(parse("rps >= 12.5").op, Op::Ge);
        assert_eq!(parse("failed<=0"), Threshold { metric: Metric::Failed, op: Op::Le, value: 0.0 });
        assert_eq!(parse("checks>0.99"), Threshold { metric: Metric::Checks, op: Op::Gt, value: 0.99 });
        assert_eq!(parse("checks >= 99%").value, 0.99);
        for metric in Metric::ALL {
            let value = if metric.kind() == MetricKind::Latency { "5ms" } else { "1" };
            assert_eq!(parse(&format!("{metric}<{value}")).metric, metric);
        }
    }

    #[test]
    fn display_reads_back_as_the_same_threshold() {
        for text in [
            "p99 < 50ms",
            "p95 < 5ms",
            "p75 <= 1ms",
            "p99_99 < 2s",
            "p50 <= 1s 500ms",
            "mean > 250us",
            "error_rate < 0.01",
            "rps >= 1000",
            "failed <= 0",
        ] {
            let threshold = parse(text);
            assert_eq!(threshold.to_string(), text);
            assert_eq!(parse(&threshold.to_string()), threshold);
        }
    }

    #[test]
    fn mistakes_say_what_to_write() {
        assert_eq!(
            error("p100<50ms"),
            "unknown metric `p100`; expected one of: p50, p90, p95, p99, p99_9, max, mean, error_rate, rps, failed, \
             checks, dropped, rate, saturated, or another percentile such as p75 or p99_99 (above p0, below p100)"
        );
        assert!(error("p0<50ms").starts_with("unknown metric `p0`;"));
        assert!(error("p9x<50ms").starts_with("unknown metric `p9x`;"));
        assert_eq!(error("p99 50ms"), "expected METRIC OP VALUE, such as `p99<50ms` or `error_rate<0.01`");
        assert_eq!(error("<50ms"), "expected METRIC OP VALUE, such as `p99<50ms` or `error_rate<0.01`");
        assert_eq!(error("p99<"), "expected METRIC OP VALUE, such as `p99<50ms` or `error_rate<0.01`");
        assert_eq!(error("p99==50ms"), "unsupported comparison `==`; use <, <=, > or >=");
        assert_eq!(error("p99=<50ms"), "unsupported comparison `=<`; use <, <=, > or >=");
        assert_eq!(error("p99<50"), "p99 takes a duration such as 50ms, not `50`");
        assert_eq!(error("p99<0s"), "p99 takes a duration above zero, such as 50ms, not `0s`");
        assert_eq!(error("max<1000000 years"), "max takes a duration of at most about 584 years, not `1000000 years`");
        assert_eq!(error("error_rate<2"), "error_rate is a fraction from 0 to 1, such as 0.01 or 1%, not `2`");
        assert_eq!(error("rps>-1"), "rps takes a number of iterations per second, such as 1000, not `-1`");
        assert_eq!(error("failed<0.5"), "failed takes a whole number, such as 0, not `0.5`");
        assert_eq!(error("checks>99"), "checks is a fraction from 0 to 1, such as 0.01 or 1%, not `99`");
    }
}
