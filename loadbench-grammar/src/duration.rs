//! Durations, as humantime writes them: `30s`, `1m 30s`, `500ms`.

use std::fmt;
use std::time::Duration;

/// The longest duration accepted anywhere: `u64::MAX` nanoseconds, about 584 years. The macro hands
/// durations to the runtime as nanoseconds in a `u64` (`Duration::from_nanos` is `const`), and the
/// runtime adds them to `Instant`s, which a longer one could overflow.
pub const MAX_DURATION: Duration = Duration::from_nanos(u64::MAX);

/// The shortest duration accepted for a run, a timeout or a stage: one millisecond. The runtime
/// keeps its times in milliseconds (`config.duration_ms`), its timers tick in milliseconds, and a
/// shorter load (`-d 1ns`) would run nothing and report success.
pub const MIN_DURATION: Duration = Duration::from_millis(1);

/// Why a duration was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DurationError {
    /// Not a duration at all: humantime's reason.
    Invalid(String),
    /// Zero, where a duration must be longer.
    Zero,
    /// Above zero but under [`MIN_DURATION`].
    TooShort,
    /// Longer than [`MAX_DURATION`].
    TooLong,
}

impl fmt::Display for DurationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DurationError::Invalid(reason) => write!(f, "expected a time such as 30s, 1m 30s or 500ms ({reason})"),
            DurationError::Zero => f.write_str("expected a time above zero"),
            DurationError::TooShort => f.write_str("expected a time of at least 1ms"),
            DurationError::TooLong => f.write_str("expected a time of at most about 584 years"),
        }
    }
}

impl std::error::Error for DurationError {}

/// Parses a duration of at least [`MIN_DURATION`] and at most [`MAX_DURATION`].
///
/// ```
/// use std::time::Duration;
/// use loadbench_grammar::{DurationError, parse_duration};
///
/// assert_eq!(parse_duration("1m 30s"), Ok(Duration::from_secs(90)));
/// assert_eq!(parse_duration("0s"), Err(DurationError::Zero));
/// assert_eq!(parse_duration("1ns"), Err(DurationError::TooShort));
/// assert_eq!(parse_duration("1000000 years"), Err(DurationError::TooLong));
/// ```
pub fn parse_duration(text: &str) -> Result<Duration, DurationError> {
    at_least_min(parse_positive(text)?)
}

/// Refuses a duration above zero but under [`MIN_DURATION`].
fn at_least_min(duration: Duration) -> Result<Duration, DurationError> {
    if !duration.is_zero() && duration < MIN_DURATION {
        return Err(DurationError::TooShort);
    }
    Ok(duration)
}

/// Parses a duration above zero, however short: a latency limit (`mean > 250us`) is a
/// measurement, not a time loadbench waits for, so [`MIN_DURATION`] does not apply to it.
pub(crate) fn parse_positive(text: &str) -> Result<Duration, DurationError> {
    let duration = parse_any(text)?;
    if duration.is_zero() {
        return Err(DurationError::Zero);
    }
    Ok(duration)
}

/// Parses a duration of at most [`MAX_DURATION`], zero included.
fn parse_any(text: &str) -> Result<Duration, DurationError> {
    let duration = humantime::parse_duration(text.trim()).map_err(|e| DurationError::Invalid(e.to_string()))?;
    if duration > MAX_DURATION {
        return Err(DurationError::TooLong);
    }
    Ok(duration)
}

/// The sum of several durations, such as a ramp's stages, if it is at most [`MAX_DURATION`].
pub fn total_duration(durations: impl IntoIterator<Item = Duration>) -> Result<Duration, DurationError> {
    durations.into_iter().try_fold(Duration::ZERO, |sum, d| {
        sum.checked_add(d).filter(|total| *total <= MAX_DURATION).ok_or(DurationError::TooLong)
    })
}

/// Why a range of durations was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RangeError {
    /// One end is not a duration, or too long.
    End(DurationError),
    /// The range is `0s`: no pause at all.
    Zero,
    /// The longer time comes first.
    Reversed,
}

impl fmt::Display for RangeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RangeError::End(e) => write!(f, "{e}; write it like 1s or 500ms..2s"),
            RangeError::Zero => f.write_str("expected a pause above zero; leave it out for no pause"),
            RangeError::Reversed => f.write_str("expected the shorter time first, as in 500ms..2s"),
        }
    }
}

impl std::error::Error for RangeError {}

/// Parses a fixed time (`1s`) or a range (`500ms..2s`) as `(min, max)`. The shorter end may be
/// zero, the longer may not; an end above zero is at least [`MIN_DURATION`].
///
/// ```
/// use std::time::Duration;
/// let ms = Duration::from_millis;
/// assert_eq!(loadbench_grammar::parse_duration_range("500ms..2s"), Ok((ms(500), ms(2_000))));
/// assert_eq!(loadbench_grammar::parse_duration_range("1s"), Ok((ms(1_000), ms(1_000))));
/// assert!(loadbench_grammar::parse_duration_range("2s..1s").is_err());
/// ```
pub fn parse_duration_range(text: &str) -> Result<(Duration, Duration), RangeError> {
    let (min, max) = match text.split_once("..") {
        Some((min, max)) => (parse_end(min)?, parse_end(max)?),
        None => {
            let fixed = parse_end(text)?;
            (fixed, fixed)
        }
    };
    if max.is_zero() {
        return Err(RangeError::Zero);
    }
    if min > max {
        return Err(RangeError::Reversed);
    }
    Ok((min, max))
}

/// One end of a range: zero, or from [`MIN_DURATION`] to [`MAX_DURATION`].
fn parse_end(text: &str) -> Result<Duration, RangeError> {
    parse_any(text).and_then(at_least_min).map_err(RangeError::End)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_above_zero_and_fit_in_u64_nanoseconds() {
        assert_eq!(parse_duration(" 500ms "), Ok(Duration::from_millis(500)));
        assert!(matches!(parse_duration("30 parsecs"), Err(DurationError::Invalid(_))));
        assert!(matches!(parse_duration(""), Err(DurationError::Invalid(_))));
        assert!(matches!(parse_duration("30"), Err(DurationError::Invalid(_))));
        assert_eq!(parse_duration("584years"), Ok(Duration::from_secs(584 * 31_557_600)));
        assert_eq!(parse_duration("585years"), Err(DurationError::TooLong));
        assert_eq!(parse_duration("1ms"), Ok(MIN_DURATION));
        for short in ["1ns", "999us", "999999ns"] {
            assert_eq!(parse_duration(short), Err(DurationError::TooShort), "{short}");
        }
        assert_eq!(parse_positive("250us"), Ok(Duration::from_micros(250)), "a latency limit may be shorter");
        assert_eq!(
            total_duration([MAX_DURATION, Duration::from_nanos(1)]),
            Err(DurationError::TooLong),
            "a sum past the limit"
        );
        assert_eq!(total_duration([Duration::from_secs(1); 3]), Ok(Duration::from_secs(3)));
    }

    #[test]
    fn ranges() {
        let ms = Duration::from_millis;
        assert_eq!(parse_duration_range("0s .. 1s"), Ok((ms(0), ms(1_000))));
        assert_eq!(parse_duration_range("0s"), Err(RangeError::Zero));
        assert_eq!(parse_duration_range("2s..1s"), Err(RangeError::Reversed));
        assert!(matches!(parse_duration_range("1s..soon"), Err(RangeError::End(DurationError::Invalid(_)))));
        assert_eq!(parse_duration_range("1s..1000000years"), Err(RangeError::End(DurationError::TooLong)));
        assert_eq!(parse_duration_range("0s..500us"), Err(RangeError::End(DurationError::TooShort)));
        assert_eq!(parse_duration_range("1ns..1s"), Err(RangeError::End(DurationError::TooShort)));
    }

    #[test]
    fn messages_say_what_to_write() {
        assert_eq!(DurationError::Zero.to_string(), "expected a time above zero");
        assert_eq!(DurationError::TooShort.to_string(), "expected a time of at least 1ms");
        let invalid = parse_duration("soon").map_err(|e| e.to_string());
        assert_eq!(invalid, Err("expected a time such as 30s, 1m 30s or 500ms (expected number at 0)".to_owned()));
        assert_eq!(RangeError::Reversed.to_string(), "expected the shorter time first, as in 500ms..2s");
    }
}
