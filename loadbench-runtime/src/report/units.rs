//! Numbers as people read them, in every human-readable output: `12,345`, `1.24ms`, `3.4 MB`.
//! Kept apart from the table so that thresholds and the subcommand's formats write numbers
//! exactly as the table does.

use loadbench_grammar::{Metric, MetricKind};

/// `1234567` → `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Requests per second: whole numbers with separators from 100 up (`12,345`), one decimal below
/// (`42.5`), where the fraction still says something.
pub fn rate(rps: f64) -> String {
    if !rps.is_finite() || rps < 0.0 {
        "-".to_owned()
    } else if rps < 99.95 {
        format!("{rps:.1}")
    } else {
        thousands(rps.round() as u64)
    }
}

/// A latency in microseconds with three significant digits in the largest fitting unit:
/// `812µs`, `1.24ms`, `12.4ms`, `124ms`, `3.10s`.
pub fn micros(us: f64) -> String {
    if !us.is_finite() || us < 0.0 {
        return "-".to_owned();
    }
    // Thresholds sit where rounding would carry into the next unit (999.6µs is `1.00ms`).
    if us < 999.5 {
        return format!("{us:.0}µs");
    }
    let (value, unit) = if us < 999_500.0 { (us / 1e3, "ms") } else { (us / 1e6, "s") };
    if value < 9.995 {
        format!("{value:.2}{unit}")
    } else if value < 99.95 {
        format!("{value:.1}{unit}")
    } else {
        format!("{value:.0}{unit}")
    }
}

/// A byte count in decimal units: `512 B`, `1.2 kB`, `3.4 MB`.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["kB", "MB", "GB", "TB", "PB"];
    if n < 1000 {
        return format!("{n} B");
    }
    let mut value = n as f64 / 1000.0;
    let mut unit = 0;
    while value >= 999.95 && unit + 1 < UNITS.len() {
        value /= 1000.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// A relative change as a signed percentage: `+12.3%`, `-4.0%`, `+10,050%` (`-` when not finite).
pub fn change(fraction: f64) -> String {
    let pct = fraction * 100.0;
    if !pct.is_finite() {
        return "-".to_owned();
    }
    let sign = if pct < 0.0 { "-" } else { "+" };
    if pct.abs() >= 999.95 {
        format!("{sign}{}%", thousands(pct.abs().round() as u64))
    } else {
        format!("{sign}{:.1}%", pct.abs())
    }
}

/// A measured `value` of `metric` as the results table shows it: `61.2ms`, `0.0123`, `12,345`.
pub fn metric_value(metric: Metric, value: f64) -> String {
    match metric.kind() {
        MetricKind::Latency => micros(value),
        MetricKind::Fraction => format!("{}", (value * 10_000.0).round() / 10_000.0),
        MetricKind::Rate => rate(value),
        MetricKind::Count => thousands(value.max(0.0).round() as u64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_are_signed_percentages() {
        assert_eq!(
            [0.123, -0.04, 0.0, 100.5, -0.9999, f64::NAN].map(change),
            ["+12.3%", "-4.0%", "+0.0%", "+10,050%", "-100.0%", "-"]
        );
    }

    #[test]
    fn units() {
        assert_eq!([0.0, 7.4, 812.0, 999.4].map(micros), ["0µs", "7µs", "812µs", "999µs"]);
        assert_eq!([999.6, 1_240.0, 12_449.0, 124_000.0].map(micros), ["1.00ms", "1.24ms", "12.4ms", "124ms"]);
        assert_eq!(
            [999_600.0, 3_100_000.0, 64_000_000.0, 600_000_000.0].map(micros),
            ["1.00s", "3.10s", "64.0s", "600s"]
        );
        assert_eq!(
            [0, 512, 999, 1_000, 1_234_567, 999_960].map(bytes),
            ["0 B", "512 B", "999 B", "1.0 kB", "1.2 MB", "1.0 MB"]
        );
        assert_eq!([0.0, 42.54, 99.96, 12_345.4, f64::NAN].map(rate), ["0.0", "42.5", "100", "12,345", "-"]);
        assert_eq!([0, 999, 1_000, 100_000, 1_234_567].map(thousands), ["0", "999", "1,000", "100,000", "1,234,567"]);
    }

    #[test]
    fn measured_values_in_the_unit_of_their_metric() {
        assert_eq!(metric_value(Metric::P99, 2_000.0), "2.00ms");
        assert_eq!(metric_value(Metric::ErrorRate, 0.012_345), "0.0123");
        assert_eq!(metric_value(Metric::Rps, 12_345.4), "12,345");
        assert_eq!(metric_value(Metric::Failed, 2.0), "2");
    }
}
