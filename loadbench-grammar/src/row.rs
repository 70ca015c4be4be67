//! Thresholds on one named row of a scenario, a step (`ctx.step`) or a named request
//! (`.name(…)`): `"login": p99 < "1s"` in the attribute, `{login}:p99<1s` on the command line.
//!
//! The row's name is checked here for both: it is not empty, and the metric means something for
//! a row (a latency, `error_rate`, `rps`, `failed`; not `checks` nor a condition on the
//! generator, which are the scenario's). The braces are the command line's only: there a name
//! holds braces only in balanced pairs (`{GET /items/{id}}`), which the attribute's string need
//! not.

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use crate::threshold::{Metric, Threshold, ThresholdError};

/// A [`Threshold`] that a scenario's rows named [`RowThreshold::row`] are held to: its step and
/// its named request of that name, when both exist.
///
/// The `#[scenario]` attribute builds these in a `const` (the name [`Cow::Borrowed`]), so every
/// field is public; check one built by hand with [`RowThreshold::new`].
///
/// ```
/// use loadbench_grammar::{Metric, RowThreshold};
///
/// let t: RowThreshold = "{GET /cart}: p99 < 50ms".parse().unwrap();
/// assert_eq!(t.row, "GET /cart");
/// assert_eq!(t.threshold.metric, Metric::P99);
/// assert_eq!(t.to_string(), "{GET /cart}: p99 < 50ms");
/// assert!("{login}: checks > 0.9".parse::<RowThreshold>().is_err());
/// ```
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct RowThreshold {
    /// The row's exact name, as given to `ctx.step` or `.name(…)`.
    pub row: Cow<'static, str>,
    /// The condition, on the row's own figures.
    #[cfg_attr(feature = "serde", serde(flatten))]
    pub threshold: Threshold,
}

/// Why a threshold on a row was refused; each message says what to write instead.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RowError {
    /// The row's name is empty (or only white space).
    Empty,
    /// On the command line, a row's name whose braces do not pair up: the braces delimit it.
    Braces(String),
    /// On the command line, not `{ROW}:CONDITION`.
    Shape,
    /// A metric that means nothing for a row, such as `checks`.
    Metric(Metric),
    /// The condition itself.
    Threshold(ThresholdError),
}

impl fmt::Display for RowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RowError::Empty => {
                f.write_str("the row name is empty; name a step or a named request, as in `{login}:p99<1s`")
            }
            RowError::Braces(name) => {
                write!(
                    f,
                    "the braces in a row name on the command line must pair up, as in `{{GET /items/{{id}}}}`: `{name}`"
                )
            }
            RowError::Shape => f.write_str("expected {ROW}:CONDITION, such as `{login}:p99<1s`"),
            RowError::Metric(metric) => write!(
                f,
                "`{metric}` means nothing for a row (a step or a named request); a row's thresholds take {}",
                ROW_METRICS_IN_WORDS
            ),
            RowError::Threshold(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for RowError {}

impl From<ThresholdError> for RowError {
    fn from(e: ThresholdError) -> RowError {
        RowError::Threshold(e)
    }
}

/// The metrics [`Metric::applies_to_rows`] accepts, as messages list them.
const ROW_METRICS_IN_WORDS: &str = "a latency (p50 … p99_9, any pNN, max, mean), error_rate, rps or failed";

impl Metric {
    /// Whether a row (a step or a named request) has this figure: its latencies, `error_rate`
    /// (failed runs of the row over its runs), `rps` (its runs per second of the scenario's
    /// time) and `failed`. `checks` and the conditions on the generator are the scenario's.
    ///
    /// ```
    /// use loadbench_grammar::Metric;
    /// assert!(Metric::P99.applies_to_rows());
    /// assert!(!Metric::Checks.applies_to_rows());
    /// ```
    pub fn applies_to_rows(self) -> bool {
        matches!(
            self,
            Metric::Percentile(_) | Metric::Max | Metric::Mean | Metric::ErrorRate | Metric::Rps | Metric::Failed
        )
    }
}

impl RowThreshold {
    /// `threshold` on the rows named `row`, if a row can be held to it: a name that is not empty,
    /// a metric a row has ([`Metric::applies_to_rows`]). The attribute and the command line both
    /// check here.
    ///
    /// ```
    /// use loadbench_grammar::{RowError, RowThreshold, Threshold};
    ///
    /// let p99: Threshold = "p99 < 1s".parse().unwrap();
    /// assert!(RowThreshold::new("login", p99).is_ok());
    /// assert_eq!(RowThreshold::new(" ", p99), Err(RowError::Empty));
    /// ```
    pub fn new(row: impl Into<Cow<'static, str>>, threshold: Threshold) -> Result<RowThreshold, RowError> {
        let row = row.into();
        if row.trim().is_empty() {
            return Err(RowError::Empty);
        }
        if !threshold.metric.applies_to_rows() {
            return Err(RowError::Metric(threshold.metric));
        }
        Ok(RowThreshold { row, threshold })
    }
}

impl fmt::Display for RowThreshold {
    /// `{login}: p99 < 1s`: parses back as the same threshold when the name's braces pair up.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{{{}}}: {}", self.row, self.threshold)
    }
}

impl FromStr for RowThreshold {
    type Err = RowError;

    /// Parses the command line's `{ROW}:CONDITION`, spaces optional around the braces and the
    /// colon; the name is what lies between the braces, exactly, and may hold braces in pairs
    /// (`{GET /items/{id}}:p99<50ms`), as route templates do.
    fn from_str(text: &str) -> Result<RowThreshold, RowError> {
        let rest = text.trim_start().strip_prefix('{').ok_or(RowError::Shape)?;
        // A condition never holds a brace: the last one closes the name.
        let close = rest.rfind('}').ok_or(RowError::Shape)?;
        let name = &rest[..close];
        if !balanced(name) {
            return Err(RowError::Braces(name.to_owned()));
        }
        let condition = rest[close + 1..].trim_start().strip_prefix(':').ok_or(RowError::Shape)?;
        if name.trim().is_empty() {
            return Err(RowError::Empty);
        }
        let threshold: Threshold = condition.parse()?;
        RowThreshold::new(name.to_owned(), threshold)
    }
}

/// Whether every `}` in `name` closes a `{` before it, and every `{` is closed.
fn balanced(name: &str) -> bool {
    let mut open = 0usize;
    for c in name.chars() {
        match c {
            '{' => open += 1,
            '}' if open == 0 => return false,
            '}' => open -= 1,
            _ => {}
        }
    }
    open == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(text: &str) -> String {
        match text.parse::<RowThreshold>() {
            Ok(t) => panic!("{text} parsed as {t:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn the_name_is_what_lies_between_the_braces() {
        let t: RowThreshold = "{GET /items/:id?a=<b>}:error_rate<1%".parse().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(t.row, "GET /items/:id?a=<b>");
        assert_eq!(t.threshold.value, 0.01);
        let t: RowThreshold = " { login } : max <= 1s ".parse().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(t.row, " login ", "the name is exact");
        assert_eq!(t.to_string(), "{ login }: max <= 1s");
        assert_eq!(t.to_string().parse::<RowThreshold>(), Ok(t));
        // A route template's braces, in pairs.
        let t: RowThreshold = "{GET /items/{id}/{sub}}:p99<50ms".parse().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(t.row, "GET /items/{id}/{sub}");
        assert_eq!(t.to_string().parse::<RowThreshold>(), Ok(t));
    }

    #[test]
    fn mistakes_say_what_to_write() {
        assert_eq!(error("{}:p99<1s"), "the row name is empty; name a step or a named request, as in `{login}:p99<1s`");
        assert_eq!(error("{ }:p99<1s"), error("{}:p99<1s"));
        let unpaired = "the braces in a row name on the command line must pair up, as in `{GET /items/{id}}`";
        assert_eq!(error("{a{b}:p99<1s"), format!("{unpaired}: `a{{b`"));
        assert_eq!(error("{a}b}:p99<1s"), format!("{unpaired}: `a}}b`"));
        assert_eq!(error("{a}{b}:p99<1s"), format!("{unpaired}: `a}}{{b`"));
        assert_eq!(error("{login:p99<1s"), "expected {ROW}:CONDITION, such as `{login}:p99<1s`");
        assert_eq!(error("{login}p99<1s"), "expected {ROW}:CONDITION, such as `{login}:p99<1s`");
        assert_eq!(error("login}:p99<1s"), "expected {ROW}:CONDITION, such as `{login}:p99<1s`");
        assert!(
            error("{login}:checks>0.9").starts_with("`checks` means nothing for a row"),
            "{}",
            error("{login}:checks>0.9")
        );
        assert!(error("{login}:rate>=95%").starts_with("`rate` means nothing for a row"));
        assert_eq!(error("{login}:p99<50"), "p99 takes a duration such as 50ms, not `50`");
    }

    #[test]
    fn a_row_has_latencies_errors_and_its_rate_but_not_the_scenarios_conditions() {
        let rows: Vec<Metric> = Metric::ALL.into_iter().filter(|m| m.applies_to_rows()).collect();
        assert_eq!(
            rows.iter().map(|m| m.name()).collect::<Vec<_>>().join(" "),
            "p50 p90 p95 p99 p99_9 max mean error_rate rps failed"
        );
    }
}
