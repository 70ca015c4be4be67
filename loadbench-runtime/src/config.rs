//! What load a scenario applies, as declared by its attribute.

use std::time::Duration;

/// Per-request timeout used when the attribute gives none (k6 uses 60 s, wrk 2 s; 30 s keeps a
/// stalled server from holding a run for a minute while leaving room for slow endpoints).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a scenario runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Load {
    /// Run the body exactly this many times in total, across all virtual users.
    Count(u64),
    /// Keep starting iterations until this much time has passed.
    Duration(Duration),
}

/// An open model's arrival rate: `iterations` every `per` (`rate = "120/m"` is 120 per minute).
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

/// Why a rate such as `2000/s` does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ParseRateError(String);

impl std::str::FromStr for Rate {
    type Err = ParseRateError;

    /// The attribute's syntax at run time: `2000` (per second), `2000/s`, `120/m` or `10/h`.
    ///
    /// ```
    /// let rate: loadbench::Rate = "120/m".parse().unwrap();
    /// assert_eq!(rate.per_second(), 2.0);
    /// assert!("0/s".parse::<loadbench::Rate>().is_err());
    /// ```
    fn from_str(text: &str) -> Result<Rate, ParseRateError> {
        const HOW: &str = "write it like 2000, 2000/s or 120/m";
        let (number, unit) = text.split_once('/').unwrap_or((text, "s"));
        let per = match unit.trim() {
            "s" => Duration::from_secs(1),
            "m" => Duration::from_secs(60),
            "h" => Duration::from_secs(3600),
            other => return Err(ParseRateError(format!("unknown unit `/{other}`: use /s, /m or /h; {HOW}"))),
        };
        let iterations: u64 =
            number.trim().replace('_', "").parse().map_err(|_| {
                ParseRateError(format!("`{}` is not a whole number of iterations; {HOW}", number.trim()))
            })?;
        if iterations == 0 {
            return Err(ParseRateError("a rate must be at least 1".to_owned()));
        }
        Ok(Rate { iterations, per })
    }
}

/// One stage of a ramp of virtual users (`stages = [("10s", 100), …]`): over `duration`, the
/// number of active users moves in a straight line from the previous stage's target (0 before
/// the first) to `target`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stage {
    /// How long the stage lasts.
    pub duration: Duration,
    /// Active virtual users at its end.
    pub target: u32,
}

/// One stage of a ramp of the arrival rate (`rate_stages = [("10s", 500), …]`): over
/// `duration`, the rate moves in a straight line from the previous stage's (0 before the first)
/// to `rate` iterations per second.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateStage {
    /// How long the stage lasts.
    pub duration: Duration,
    /// Iterations per second at its end.
    pub rate: u64,
}

/// The active users of a ramp `t` after its start: the straight line through the stages.
pub(crate) fn ramp_target(stages: &[Stage], t: Duration) -> f64 {
    let mut from = 0.0;
    let mut begin = Duration::ZERO;
    for stage in stages {
        let end = begin + stage.duration;
        let to = f64::from(stage.target);
        if t < end {
            let part = (t - begin).as_secs_f64() / stage.duration.as_secs_f64().max(f64::MIN_POSITIVE);
            return from + (to - from) * part;
        }
        from = to;
        begin = end;
    }
    from
}

/// When user `user` (active while the ramp's target is above its number) is next active, at or
/// after `t`; `None` if never again.
pub(crate) fn ramp_next_active(stages: &[Stage], user: u32, t: Duration) -> Option<Duration> {
    let user = f64::from(user);
    if ramp_target(stages, t) > user {
        return Some(t);
    }
    let mut from = 0.0;
    let mut begin = Duration::ZERO;
    for stage in stages {
        let end = begin + stage.duration;
        let to = f64::from(stage.target);
        // Only a rising stage crosses the user's number from below; it does so once.
        if end > t && to > user && to > from {
            let part = ((user - from) / (to - from)).max(0.0);
            // A microsecond past the crossing, where the target is strictly above the number.
            let at = begin + stage.duration.mul_f64(part) + Duration::from_micros(1);
            return Some(at.max(t));
        }
        from = to;
        begin = end;
    }
    None
}

/// Arrivals a rate ramp schedules in all: the area under its straight lines.
pub(crate) fn rate_stages_arrivals(stages: &[RateStage]) -> f64 {
    let mut from = 0.0;
    let mut total = 0.0;
    for stage in stages {
        let to = stage.rate as f64;
        total += (from + to) / 2.0 * stage.duration.as_secs_f64();
        from = to;
    }
    total
}

/// When arrival `index` of a rate ramp is due after its start: where the area under the rate
/// reaches `index`; `None` beyond the ramp's end.
pub(crate) fn rate_stages_offset(stages: &[RateStage], index: u64) -> Option<Duration> {
    let mut left = index as f64;
    let mut from = 0.0;
    let mut begin = Duration::ZERO;
    for stage in stages {
        let to = stage.rate as f64;
        let length = stage.duration.as_secs_f64();
        let area = (from + to) / 2.0 * length;
        if left < area {
            // Solve from·τ + (to − from)/(2·length)·τ² = left for τ.
            let a = (to - from) / (2.0 * length);
            let tau =
                if a.abs() < 1e-12 { left / from } else { (-from + (from * from + 4.0 * a * left).sqrt()) / (2.0 * a) };
            return Some(begin + Duration::from_secs_f64(tau.clamp(0.0, length)));
        }
        left -= area;
        from = to;
        begin += stage.duration;
    }
    None
}

/// A virtual user's pause between iterations in the closed model: a uniformly random time from
/// `min` to `max` (both the same for a fixed pause).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThinkTime {
    /// The shortest pause.
    pub min: Duration,
    /// The longest pause; at least `min`.
    pub max: Duration,
}

/// The settings of one scenario, built by `#[scenario]` in a `const` context.
// Not `Eq`: thresholds hold `f64` limits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScenarioConfig {
    /// Virtual users: at most this many bodies in flight, and this many whenever there is work
    /// (closed model). With [`ScenarioConfig::rate`], the users available to serve the rate
    /// (`max_concurrency`).
    pub concurrency: u32,
    /// Open model: start iterations at this rate, whether or not earlier ones finished.
    pub rate: Option<Rate>,
    /// Run this many iterations, or for this long, before the measured part; their results are
    /// left out of every figure.
    pub warmup: Option<Load>,
    /// Closed model: each user pauses this long after each iteration, outside its latency.
    pub think_time: Option<ThinkTime>,
    /// A ramp of virtual users; `concurrency` is then its highest target.
    pub stages: &'static [Stage],
    /// A ramp of the arrival rate (open model); empty otherwise.
    pub rate_stages: &'static [RateStage],
    /// `group = "…"`: the selected scenarios of one group run at the same time, as one workload.
    pub group: Option<&'static str>,
    /// When the scenario stops.
    pub load: Load,
    /// Per-request timeout; [`DEFAULT_TIMEOUT`] when `None`.
    pub timeout: Option<Duration>,
    /// Base URL from the attribute; the command line and `LOADBENCH_TARGET` take precedence.
    pub target: Option<&'static str>,
    /// `thresholds(…)` from the attribute: conditions checked after a full run.
    pub thresholds: &'static [crate::threshold::Threshold],
}

impl ScenarioConfig {
    /// The per-request timeout in force.
    pub fn timeout(&self) -> Duration {
        self.timeout.unwrap_or(DEFAULT_TIMEOUT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_parse_as_the_attribute_writes_them() {
        let parse = |text: &str| text.parse::<Rate>().map(|r| (r.iterations, r.per.as_secs()));
        assert_eq!(parse("2000"), Ok((2000, 1)));
        assert_eq!(parse("2_000/s"), Ok((2000, 1)));
        assert_eq!(parse("120/m"), Ok((120, 60)));
        assert_eq!(parse(" 10 / h "), Ok((10, 3600)));
        assert_eq!(parse("0").map_err(|e| e.to_string()), Err("a rate must be at least 1".to_owned()));
        assert!(parse("5/d").is_err_and(|e| e.to_string().starts_with("unknown unit `/d`")));
        assert!(parse("fast").is_err_and(|e| e.to_string().starts_with("`fast` is not a whole number")));
    }

    const S: fn(u64) -> Duration = Duration::from_secs;

    #[test]
    fn a_user_ramp_is_straight_lines_between_the_targets() {
        let stages = [
            Stage { duration: S(10), target: 100 },
            Stage { duration: S(30), target: 100 },
            Stage { duration: S(10), target: 0 },
        ];
        assert_eq!(ramp_target(&stages, S(0)), 0.0);
        assert_eq!(ramp_target(&stages, S(5)), 50.0);
        assert_eq!(ramp_target(&stages, S(20)), 100.0);
        assert_eq!(ramp_target(&stages, S(45)), 50.0);
        assert_eq!(ramp_target(&stages, S(60)), 0.0);
        // User 49 starts as the target passes 49 (4.9 s) and is inactive from 45.1 s.
        let next = ramp_next_active(&stages, 49, S(0)).map(|d| d.as_secs_f64());
        assert!(next.is_some_and(|t| (t - 4.9).abs() < 0.001), "{next:?}");
        assert_eq!(ramp_next_active(&stages, 49, S(20)), Some(S(20)));
        assert_eq!(ramp_next_active(&stages, 49, S(46)), None);
    }

    #[test]
    fn a_rate_ramp_schedules_the_area_under_it() {
        let stages = [RateStage { duration: S(1), rate: 200 }, RateStage { duration: S(1), rate: 200 }];
        assert_eq!(rate_stages_arrivals(&stages), 300.0);
        assert_eq!(rate_stages_offset(&stages, 0), Some(Duration::ZERO));
        // 0→200/s over 1 s: n arrivals by τ = √(n/100).
        let t = rate_stages_offset(&stages, 25).map(|d| d.as_secs_f64());
        assert!(t.is_some_and(|t| (t - 0.5).abs() < 1e-6), "{t:?}");
        let t = rate_stages_offset(&stages, 200).map(|d| d.as_secs_f64());
        assert!(t.is_some_and(|t| (t - 1.5).abs() < 1e-6), "{t:?}");
        assert_eq!(rate_stages_offset(&stages, 300), None);
    }
}
