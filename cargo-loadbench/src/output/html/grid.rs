//! The columns of the charts over time. A run of up to [`MAX_COLUMNS`] seconds has a column per
//! second; a longer one's seconds are gathered into columns of several (rates averaged per
//! second, latencies averaged weighted by successes, p99 the worst second), so that an hour-long
//! run draws as many points and hover columns as a five-minute one.

use loadbench::report::TimelineSecond;

use super::axis::clock;
use super::escape::Esc;
use super::svg::Column;

/// The most hover columns (and points per line) a time chart has.
pub const MAX_COLUMNS: u64 = 300;

/// The columns of a time chart: `seconds` per column, up to `end`.
pub struct Grid {
    /// Seconds per column.
    pub seconds: u64,
    /// The end of the run, in seconds.
    pub end: u64,
    /// The columns.
    pub columns: Vec<Column>,
}

impl Grid {
    /// The grid of a run `end` seconds long.
    pub fn new(end: u64) -> Grid {
        let seconds = end.div_ceil(MAX_COLUMNS).max(1);
        let columns = (0..end.div_ceil(seconds))
            .map(|b| {
                let (from, to) = (b * seconds, (b + 1).saturating_mul(seconds).min(end));
                let heading = if seconds == 1 {
                    clock(from as f64)
                } else {
                    format!("{}–{}", clock(from as f64), clock(to as f64))
                };
                Column { from: from as f64, to: to as f64, heading }
            })
            .collect();
        Grid { seconds, end, columns }
    }

    /// One point per column up to `entry_end` from `(second, value, weight)` samples: a count per
    /// second (`Rate`: an empty second counts as 0), their mean weighted by `weight`, or their
    /// largest; `None` where a column has no value.
    pub fn points(
        &self,
        entry_end: u64,
        samples: impl Iterator<Item = (u64, Option<f64>, f64)>,
        how: How,
    ) -> Vec<Option<(f64, f64)>> {
        let mut sums = vec![(0.0, 0.0, f64::NEG_INFINITY, false); self.columns.len()];
        for (second, value, weight) in samples {
            let (Some(slot), Some(value)) = (sums.get_mut((second / self.seconds) as usize), value) else { continue };
            slot.0 += value * weight;
            slot.1 += weight;
            slot.2 = slot.2.max(value);
            slot.3 = true;
        }
        self.columns
            .iter()
            .zip(sums)
            .filter(|(c, _)| (c.from as u64) < entry_end)
            .map(|(c, (sum, weights, max, any))| {
                let centre = (c.from + c.to) / 2.0;
                let value = match how {
                    How::Rate(span) => {
                        let width = c.to.min(entry_end as f64).min(span) - c.from;
                        Some(sum / if width > 0.0 { width } else { 1.0 })
                    }
                    How::Mean if any && weights > 0.0 => Some(sum / weights),
                    How::Max if any => Some(max),
                    How::Mean | How::Max => None,
                };
                value.map(|v| (centre, v))
            })
            .collect()
    }
}

/// `chart`, followed, when a column gathers several seconds, by a line saying how (`how`: what
/// its values are).
pub fn gathered(chart: String, grid: &Grid, how: &str) -> String {
    if grid.seconds == 1 {
        return chart;
    }
    format!("{chart}<p class=\"chart-note\">Each column gathers {} seconds: {}.</p>\n", grid.seconds, Esc(how))
}

/// How a column's samples make its value.
#[derive(Debug, Clone, Copy)]
pub enum How {
    /// A count per second, of an entry whose run lasted this many seconds: its last second is
    /// cut short where the run ended, and a count over a fraction of a second is a rate over that
    /// fraction (20,000 requests in a run of 0.16 s are 126,000 a second, not 20,000).
    Rate(f64),
    /// A weighted mean.
    Mean,
    /// The largest.
    Max,
}

/// The end of a timeline: its last second, plus one.
pub fn timeline_end(timeline: &[TimelineSecond]) -> u64 {
    timeline.iter().map(|t| t.second.saturating_add(1)).max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_runs_are_gathered_into_columns() {
        assert_eq!(Grid::new(60).columns.len(), 60);
        let grid = Grid::new(3_600);
        assert_eq!((grid.seconds, grid.columns.len()), (12, 300));
        let odd = Grid::new(301);
        assert_eq!((odd.seconds, odd.columns.len()), (2, 151));
        assert_eq!(odd.columns.last().map(|c| (c.from, c.to)), Some((300.0, 301.0)));
    }

    #[test]
    fn columns_average_rates_weigh_means_and_keep_the_worst() {
        let grid = Grid::new(4);
        let samples = || [(0, Some(10.0), 1.0), (1, Some(30.0), 3.0), (3, Some(4.0), 1.0)].into_iter();
        assert_eq!(grid.points(4, samples(), How::Rate(f64::INFINITY))[..2], [Some((0.5, 10.0)), Some((1.5, 90.0))]);
        let two = Grid {
            seconds: 2,
            end: 4,
            columns: Grid::new(4)
                .columns
                .chunks(2)
                .map(|c| Column { from: c[0].from, to: c[1].to, heading: String::new() })
                .collect(),
        };
        assert_eq!(two.points(4, samples(), How::Rate(f64::INFINITY)), [Some((1.0, 50.0)), Some((3.0, 2.0))]);
        assert_eq!(two.points(4, samples(), How::Mean), [Some((1.0, 25.0)), Some((3.0, 4.0))]);
        assert_eq!(two.points(4, samples(), How::Max), [Some((1.0, 30.0)), Some((3.0, 4.0))]);
        assert_eq!(two.points(2, samples(), How::Max), [Some((1.0, 30.0))], "an entry ends where its timeline does");
        assert_eq!(grid.points(4, samples(), How::Mean)[2], None);
        // A run of 3.5 s: its fourth second lasted half a second.
        assert_eq!(grid.points(4, samples(), How::Rate(3.5))[3], Some((3.5, 8.0)));
        // A run shorter than a second: its one second is a rate over its length.
        let short = Grid::new(1);
        let count = [(0, Some(20_000.0), 1.0)].into_iter();
        assert_eq!(short.points(1, count, How::Rate(0.16)), [Some((0.5, 125_000.0))]);
    }
}
