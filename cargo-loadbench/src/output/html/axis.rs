//! Axes: tick values (round numbers on a linear scale, round times on a time scale, whole runs,
//! the "nines" of a percentile spectrum) and their labels in each unit. Pure functions, tested
//! here; [`super::svg`] draws with them.

use loadbench::report::units;

/// What a chart's values are, for its tick labels and its tooltips.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// A latency in microseconds: `250µs`, `1.5ms`, `2s`.
    Micros,
    /// A count per second: `500`, `2,000`, `15k`.
    PerSecond,
    /// Percent of one CPU core: `150%`.
    Percent,
    /// Bytes, in decimal units: `120 MB`.
    Bytes,
}

impl Unit {
    /// One measured value, as a tooltip or a table shows it.
    pub fn value(self, value: f64) -> String {
        match self {
            Unit::Micros => units::micros(value),
            Unit::PerSecond => units::rate(value),
            Unit::Percent => format!("{value:.1}%"),
            Unit::Bytes => units::bytes(value.max(0.0).round() as u64),
        }
    }

    /// The labels of `ticks` (evenly spaced, from 0), all in the unit the largest one reads best
    /// in, with as many decimals as the spacing needs.
    pub fn tick_labels(self, ticks: &[f64]) -> Vec<String> {
        let top = ticks.iter().copied().fold(0.0, f64::max);
        let step = ticks.windows(2).map(|w| w[1] - w[0]).fold(f64::INFINITY, f64::min);
        let (divisor, suffix) = match self {
            Unit::Micros if top >= 1e6 => (1e6, "s"),
            Unit::Micros if top >= 1e3 => (1e3, "ms"),
            Unit::Micros => (1.0, "µs"),
            Unit::PerSecond if top >= 1e6 => (1e6, "M"),
            Unit::PerSecond if top >= 1e4 => (1e3, "k"),
            Unit::PerSecond => (1.0, ""),
            Unit::Percent => (1.0, "%"),
            Unit::Bytes if top >= 1e9 => (1e9, " GB"),
            Unit::Bytes if top >= 1e6 => (1e6, " MB"),
            Unit::Bytes if top >= 1e3 => (1e3, " kB"),
            Unit::Bytes => (1.0, " B"),
        };
        let decimals = decimals_for(step / divisor);
        ticks
            .iter()
            .map(|&tick| {
                if tick == 0.0 {
                    return "0".to_owned();
                }
                let scaled = tick / divisor;
                let number = if decimals == 0 && scaled >= 1000.0 {
                    units::thousands(scaled.round() as u64)
                } else {
                    trimmed(scaled, decimals)
                };
                format!("{number}{suffix}")
            })
            .collect()
    }
}

/// The decimals that tell apart ticks `step` apart (at most 3).
fn decimals_for(step: f64) -> usize {
    if !step.is_finite() || step >= 1.0 { 0 } else { (-step.log10() - 1e-9).ceil().clamp(0.0, 3.0) as usize }
}

/// `value` with `decimals` decimals, trailing zeros dropped: `2.50` → `2.5`, `3.00` → `3`.
fn trimmed(value: f64, decimals: usize) -> String {
    let text = format!("{value:.decimals$}");
    if text.contains('.') { text.trim_end_matches('0').trim_end_matches('.').to_owned() } else { text }
}

/// Ticks from 0 up to a round number at or above `max`, a round step apart (1, 2 or 5 times a
/// power of ten), five or so of them.
pub fn linear_ticks(max: f64) -> Vec<f64> {
    let max = if max.is_finite() && max > 0.0 { max } else { 1.0 };
    let raw = max / 5.0;
    let magnitude = 10f64.powf(raw.log10().floor());
    let nice = match raw / magnitude {
        r if r <= 1.0 => 1.0,
        r if r <= 2.0 => 2.0,
        r if r <= 5.0 => 5.0,
        _ => 10.0,
    };
    let step = nice * magnitude;
    let n = ((max / step) - 1e-9).ceil().max(1.0) as u32;
    (0..=n).map(|i| f64::from(i) * step).collect()
}

/// Seconds between ticks of a time axis: round clock steps.
const TIME_STEPS: [u64; 18] =
    [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1_800, 3_600, 7_200, 10_800, 21_600, 43_200, 86_400];

/// Ticks of a time axis from 0 to `end` seconds: at most 8 steps of a round clock time.
pub fn time_ticks(end: f64) -> Vec<f64> {
    let end = if end.is_finite() && end > 0.0 { end } else { 1.0 };
    let step = TIME_STEPS
        .iter()
        .map(|&s| s as f64)
        .find(|&s| end / s <= 8.0)
        .unwrap_or_else(|| (end / 8.0 / 86_400.0).ceil() * 86_400.0);
    let n = (end / step + 1e-9).floor() as u32;
    (0..=n).map(|i| f64::from(i) * step).collect()
}

/// Milliseconds as a clock reads them: `250ms`, `1m30s`, `1.50s`.
pub fn millis(ms: u64) -> String {
    if ms < 1_000 {
        format!("{ms}ms")
    } else if ms.is_multiple_of(1_000) {
        clock((ms / 1_000) as f64)
    } else {
        units::micros(ms as f64 * 1e3)
    }
}

/// Seconds as a clock reads them: `0s`, `45s`, `1m30s`, `10m`, `1h`, `1h30m`.
pub fn clock(seconds: f64) -> String {
    let total = seconds.max(0.0).round() as u64;
    let (h, m, s) = (total / 3_600, total % 3_600 / 60, total % 60);
    let mut out = String::new();
    if h > 0 {
        out.push_str(&format!("{h}h"));
    }
    if m > 0 {
        out.push_str(&format!("{m}m"));
    }
    if s > 0 || out.is_empty() {
        out.push_str(&format!("{s}s"));
    }
    out
}

/// Ticks of runs 1 to `n`: each run, or every 2nd, 5th, 10th… when there are many.
pub fn run_ticks(n: usize) -> Vec<f64> {
    let n = n.max(1);
    let step = [1, 2, 5, 10, 20, 50, 100].into_iter().find(|&s| n / s <= 12).unwrap_or(n.div_ceil(12));
    let mut ticks: Vec<f64> = std::iter::once(1).chain((step..=n).step_by(step)).map(|i| i as f64).collect();
    ticks.dedup();
    ticks
}

/// Where `percentile` (0 to 100) sits on the "nines" axis: `log10(1 / (1 - p/100))`, so that
/// 90 % is 1, 99 % is 2, 99.9 % is 3; `None` for 100 %, which is infinitely far.
pub fn nines(percentile: f64) -> Option<f64> {
    if !percentile.is_finite() || percentile >= 100.0 {
        return None;
    }
    let rest = 1.0 - percentile.max(0.0) / 100.0;
    Some((-rest.log10()).max(0.0))
}

/// The end of a nines axis whose farthest finite point is at `farthest`: one tick past it,
/// where the 100 % points are drawn.
pub fn nines_end(farthest: f64) -> f64 {
    farthest.max(0.0).floor() + 1.0
}

/// The label of tick `k` of the nines axis: `0%`, `90%`, `99%`, `99.9%`, `99.99%`…
pub fn nines_label(k: u32) -> String {
    match k {
        0 => "0%".to_owned(),
        1 => "90%".to_owned(),
        k => format!("99.{}%", "9".repeat(k as usize - 2)).replace(".%", "%"),
    }
}

/// A percentile as a tooltip names it: `p50`, `p99.9`, `p99.999`, `max`.
pub fn percentile_name(percentile: f64) -> String {
    if percentile >= 100.0 {
        return "max".to_owned();
    }
    format!("p{}", trimmed(percentile, 6))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_ticks_are_round_and_cover_the_maximum() {
        assert_eq!(linear_ticks(10.0), [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert_eq!(linear_ticks(9.3), [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert_eq!(linear_ticks(1_234.0), [0.0, 500.0, 1_000.0, 1_500.0]);
        assert_eq!(linear_ticks(47_000.0), [0.0, 10_000.0, 20_000.0, 30_000.0, 40_000.0, 50_000.0]);
        assert_eq!(linear_ticks(0.0).len(), 6, "nothing to show is drawn from 0 to 1");
        assert_eq!(linear_ticks(f64::NAN).len(), 6);
        let ticks = linear_ticks(0.37);
        assert!(ticks.last().is_some_and(|&t| t >= 0.37) && ticks.len() <= 9, "{ticks:?}");
    }

    #[test]
    fn tick_labels_share_the_unit_of_the_largest() {
        assert_eq!(Unit::Micros.tick_labels(&linear_ticks(1_234.0)), ["0", "0.5ms", "1ms", "1.5ms"]);
        assert_eq!(Unit::Micros.tick_labels(&linear_ticks(800.0)), ["0", "200µs", "400µs", "600µs", "800µs"]);
        assert_eq!(Unit::Micros.tick_labels(&linear_ticks(2_600_000.0)), ["0", "1s", "2s", "3s"]);
        assert_eq!(
            Unit::PerSecond.tick_labels(&linear_ticks(4_700.0)),
            ["0", "1,000", "2,000", "3,000", "4,000", "5,000"]
        );
        assert_eq!(Unit::PerSecond.tick_labels(&linear_ticks(47_000.0))[1], "10k");
        assert_eq!(Unit::PerSecond.tick_labels(&linear_ticks(0.0))[1], "0.2");
        assert_eq!(Unit::Percent.tick_labels(&linear_ticks(180.0)), ["0", "50%", "100%", "150%", "200%"]);
        assert_eq!(Unit::Bytes.tick_labels(&linear_ticks(120e6)), ["0", "50 MB", "100 MB", "150 MB"]);
        assert_eq!(Unit::Micros.value(20_300.0), "20.3ms");
    }

    #[test]
    fn time_ticks_are_round_clock_times() {
        assert_eq!(time_ticks(7.0), [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]);
        assert_eq!(time_ticks(60.0), [0.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0]);
        assert_eq!(time_ticks(3_600.0), [0.0, 600.0, 1_200.0, 1_800.0, 2_400.0, 3_000.0, 3_600.0]);
        assert_eq!(time_ticks(0.0), [0.0, 1.0]);
        assert_eq!(
            [0.0, 45.0, 90.0, 600.0, 3_600.0, 5_400.0, 3_661.0].map(clock),
            ["0s", "45s", "1m30s", "10m", "1h", "1h30m", "1h1m1s"]
        );
    }

    #[test]
    fn runs_are_ticked_one_by_one_until_there_are_many() {
        assert_eq!(run_ticks(3), [1.0, 2.0, 3.0]);
        assert_eq!(run_ticks(0), [1.0]);
        assert_eq!(run_ticks(30), [1.0, 5.0, 10.0, 15.0, 20.0, 25.0, 30.0]);
    }

    #[test]
    fn the_nines_axis_puts_each_nine_one_step_further() {
        let at = |p: f64| nines(p).map(|x| (x * 1e6).round() / 1e6);
        assert_eq!([0.0, 90.0, 99.0, 99.9, 99.99].map(at), [0.0, 1.0, 2.0, 3.0, 4.0].map(Some));
        assert_eq!(at(50.0), Some((std::f64::consts::LOG10_2 * 1e6).round() / 1e6), "the median is 2× closer to 100%");
        assert_eq!(nines(100.0), None);
        assert_eq!(nines(-1.0), Some(0.0));
        assert_eq!([0.0, 2.0, 3.2, 3.999].map(nines_end), [1.0, 3.0, 4.0, 4.0]);
        assert_eq!((0..6).map(nines_label).collect::<Vec<_>>(), ["0%", "90%", "99%", "99.9%", "99.99%", "99.999%"]);
        assert_eq!([50.0, 99.9, 99.99, 100.0].map(percentile_name), ["p50", "p99.9", "p99.99", "max"]);
    }
}
