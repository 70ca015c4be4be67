//! Arrival rates: `2000` (per second), `2000/s`, `120/m`, `10/h`.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use crate::number;

/// An open model's arrival rate: `iterations` every `per` (`120/m` is 120 per minute).
///
/// Kept as a fraction rather than an interval so that the schedule has no rounding drift:
/// arrival `j` is due at exactly `j × per / iterations` after the start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    /// Iterations started in each `per`; at least 1.
    pub iterations: u64,
    /// The period they are spread over.
    pub per: Duration,
}

impl Rate {
    /// Iterations per second.
    pub fn per_second(&self) -> f64 {
        self.iterations as f64 / self.per.as_secs_f64()
    }

    /// How many arrivals are due within `time` of the start: the first index due at or after it.
    pub fn arrivals_within(&self, time: Duration) -> u64 {
        let per = self.per.as_nanos().max(1);
        let n = (time.as_nanos() * u128::from(self.iterations)).div_ceil(per);
        u64::try_from(n).unwrap_or(u64::MAX)
    }

    /// When arrival `index` (from 0) is due, after the start of the run.
    pub fn offset(&self, index: u64) -> Duration {
        let nanos = self.per.as_nanos() * u128::from(index) / u128::from(self.iterations.max(1));
        Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
    }
}

/// Why a rate was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RateError {
    /// A unit other than `/s`, `/m` or `/h`.
    UnknownUnit(String),
    /// The count is not a whole number.
    NotWhole(String),
    /// Zero or negative.
    BelowOne,
}

/// How a rate is written, for every message.
const HOW: &str = "write it like 2000, 2000/s or 120/m";

impl fmt::Display for RateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RateError::UnknownUnit(unit) => write!(f, "unknown unit `/{unit}`: use /s, /m or /h; {HOW}"),
            RateError::NotWhole(number) => write!(f, "`{number}` is not a whole number of iterations; {HOW}"),
            RateError::BelowOne => f.write_str("a rate must be at least 1"),
        }
    }
}

impl std::error::Error for RateError {}

impl FromStr for Rate {
    type Err = RateError;

    /// `2000` (per second), `2000/s`, `120/m` or `10/h`; digits may be grouped with `_`.
    ///
    /// ```
    /// use loadbench_grammar::{Rate, RateError};
    ///
    /// let rate: Rate = "120/m".parse().unwrap();
    /// assert_eq!(rate.per_second(), 2.0);
    /// assert_eq!("2000".parse::<Rate>(), "2000/s".parse::<Rate>());
    /// assert_eq!("0/s".parse::<Rate>(), Err(RateError::BelowOne));
    /// ```
    fn from_str(text: &str) -> Result<Rate, RateError> {
        let (count, unit) = text.split_once('/').unwrap_or((text, "s"));
        let per = match unit.trim() {
            "s" => Duration::from_secs(1),
            "m" => Duration::from_secs(60),
            "h" => Duration::from_secs(3600),
            other => return Err(RateError::UnknownUnit(other.to_owned())),
        };
        let count = count.trim();
        let iterations = match number::whole(count) {
            Some(n) => n,
            // `-5` is a number, just not a rate.
            None if count.starts_with('-') && number::decimal(count).is_some() => return Err(RateError::BelowOne),
            None => return Err(RateError::NotWhole(count.to_owned())),
        };
        if iterations == 0 {
            return Err(RateError::BelowOne);
        }
        Ok(Rate { iterations, per })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_parse_with_or_without_a_unit() {
        let parse = |text: &str| text.parse::<Rate>().map(|r| (r.iterations, r.per.as_secs()));
        assert_eq!(parse("2000"), Ok((2000, 1)));
        assert_eq!(parse("2_000/s"), Ok((2000, 1)));
        assert_eq!(parse("120/m"), Ok((120, 60)));
        assert_eq!(parse(" 10 / h "), Ok((10, 3600)));
        assert_eq!(parse("0"), Err(RateError::BelowOne));
        assert_eq!(parse("-3"), Err(RateError::BelowOne));
        assert_eq!(parse("5/d"), Err(RateError::UnknownUnit("d".into())));
        assert_eq!(parse("fast"), Err(RateError::NotWhole("fast".into())));
        assert_eq!(parse("2.5"), Err(RateError::NotWhole("2.5".into())));
        assert_eq!(parse("99999999999999999999"), Err(RateError::NotWhole("99999999999999999999".into())));
    }

    #[test]
    fn messages_say_what_to_write() {
        assert_eq!(
            RateError::UnknownUnit("d".into()).to_string(),
            "unknown unit `/d`: use /s, /m or /h; write it like 2000, 2000/s or 120/m"
        );
        assert_eq!(
            RateError::NotWhole("fast".into()).to_string(),
            "`fast` is not a whole number of iterations; write it like 2000, 2000/s or 120/m"
        );
        assert_eq!(RateError::BelowOne.to_string(), "a rate must be at least 1");
    }

    #[test]
    fn arrivals_are_spread_exactly_over_the_period() {
        let rate = Rate { iterations: 3, per: Duration::from_secs(1) };
        assert_eq!(rate.offset(1), Duration::from_nanos(333_333_333));
        assert_eq!(rate.offset(3), Duration::from_secs(1));
        assert_eq!(rate.arrivals_within(Duration::from_secs(1)), 3);
    }
}
