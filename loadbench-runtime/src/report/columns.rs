//! The latency columns of the results table and its Markdown twin: which percentiles they show
//! (`--percentiles 50,95,99.9`, k6's `summaryTrendStats`), followed by `max`.

use loadbench_grammar::Percentile;

use super::LatencyReport;
use super::units::micros;

/// The latency percentiles a table shows, in the order given, each a column, then `max`.
///
/// The default is p50, p95, p99: the median, the percentile most SLOs are written on, and the
/// tail; four latency columns as before p95 was measured (p90 made way for it, and is still in
/// the JSON), so the table keeps its width of about 90 characters.
///
/// ```
/// use loadbench::report::LatencyColumns;
///
/// let columns = LatencyColumns::new(loadbench::cli::parse_percentiles("50,99.9").unwrap());
/// assert_eq!(columns.headers(), ["p50", "p99.9", "max"]);
/// assert_eq!(LatencyColumns::default().headers(), ["p50", "p95", "p99", "max"]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LatencyColumns(Vec<Percentile>);

impl Default for LatencyColumns {
    fn default() -> Self {
        LatencyColumns(vec![Percentile::P50, Percentile::P95, Percentile::P99])
    }
}

impl LatencyColumns {
    /// These percentiles as columns, without repeats, in the order given; none given, the
    /// default.
    pub fn new(percentiles: Vec<Percentile>) -> LatencyColumns {
        let mut unique = Vec::with_capacity(percentiles.len());
        for p in percentiles {
            if !unique.contains(&p) {
                unique.push(p);
            }
        }
        if unique.is_empty() { LatencyColumns::default() } else { LatencyColumns(unique) }
    }

    /// The percentiles shown.
    pub fn percentiles(&self) -> &[Percentile] {
        &self.0
    }

    /// The column headers: `p50`, `p99.9`, …, `max`.
    pub fn headers(&self) -> Vec<String> {
        self.0.iter().map(|p| p.label()).chain(["max".to_owned()]).collect()
    }

    /// The cells of `latency` under [`LatencyColumns::headers`]: `-` where nothing succeeded, or
    /// where the run did not compute a percentile (a file written by a run not asked for it).
    pub fn cells(&self, latency: Option<&LatencyReport>) -> Vec<String> {
        let cell = |value: Option<f64>| value.map_or_else(|| "-".to_owned(), micros);
        self.0
            .iter()
            .map(|&p| cell(latency.and_then(|l| l.percentile(p))))
            .chain([cell(latency.map(|l| l.max))])
            .collect()
    }

    /// How many columns [`LatencyColumns::headers`] has.
    pub fn len(&self) -> usize {
        self.0.len() + 1
    }

    /// Never: `max` is always shown.
    pub fn is_empty(&self) -> bool {
        false
    }
}
