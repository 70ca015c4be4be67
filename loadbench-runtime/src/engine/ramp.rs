//! Ramps: a straight line through a scenario's stages, of virtual users (`stages = […]`) or of
//! the arrival rate (`rate_stages = […]`), and when each user or arrival is due along it.

use std::time::Duration;

use crate::config::{RateStage, Stage};

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

#[cfg(test)]
mod tests {
    use super::*;

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
