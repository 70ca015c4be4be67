//! The size of the load a scenario runs: as its attribute declares it, as one smoke-test
//! iteration, or reduced by a factor (`--scale FACTOR`, `LOADBENCH_SCALE`) so that the same
//! scenarios run in CI in seconds, with counts that can still be checked exactly.

use std::time::Duration;

use crate::config::{Load, Rate, RateStage, ScenarioConfig, Stage};

/// A scaled duration is never shorter than this (unless the declared one already is): below it,
/// a duration-bound scenario would end before its users had connected, and run nothing.
pub const MIN_DURATION: Duration = Duration::from_millis(100);

/// The load one run of a scenario applies.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Size {
    /// Virtual users (closed model), or the most that serve the rate (open model).
    pub(crate) concurrency: u32,
    pub(crate) load: Load,
    pub(crate) rate: Option<Rate>,
    pub(crate) warmup: Option<Load>,
    pub(crate) stages: &'static [Stage],
    pub(crate) rate_stages: &'static [RateStage],
}

impl Size {
    /// The load `config` declares.
    pub(crate) fn declared(config: &ScenarioConfig) -> Size {
        Size {
            concurrency: config.concurrency,
            load: config.load,
            rate: config.rate,
            warmup: config.warmup,
            stages: config.stages,
            rate_stages: config.rate_stages,
        }
    }

    /// One iteration of one user in the closed model: a smoke test, whatever the attribute asks.
    pub(crate) fn smoke() -> Size {
        Size { concurrency: 1, load: Load::Count(1), rate: None, warmup: None, stages: &[], rate_stages: &[] }
    }

    /// Every quantity multiplied by `factor` (in `(0, 1]`): users, counts, durations, rates and
    /// ramps alike, so the load keeps its shape. Users and counts are rounded and kept at least
    /// 1 (a ramp's 0 stays 0); durations are kept at least [`MIN_DURATION`].
    pub(crate) fn scaled(self, factor: f64) -> Size {
        let stages: Vec<Stage> = self
            .stages
            .iter()
            .map(|s| Stage { duration: time(s.duration, factor), target: users(s.target, factor) })
            .collect();
        let rate_stages: Vec<RateStage> = self
            .rate_stages
            .iter()
            .map(|s| RateStage {
                duration: time(s.duration, factor),
                rate: if s.rate == 0 { 0 } else { count(s.rate, factor) },
            })
            .collect();
        Size {
            concurrency: users(self.concurrency, factor).max(1),
            load: load(self.load, factor),
            rate: self.rate.map(|r| Rate { iterations: count(r.iterations, factor), per: r.per }),
            warmup: self.warmup.map(|w| load(w, factor)),
            // The executor keeps its ramps as `'static` slices, shared by its worker threads; a
            // bench binary scales each scenario once, so the few bytes leaked are bounded.
            stages: leak(stages),
            rate_stages: leak(rate_stages),
        }
    }
}

/// Reads a scale factor: a number above 0 and at most 1.
pub(crate) fn parse(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(factor) if factor > 0.0 && factor <= 1.0 => Ok(factor),
        _ => Err(format!("`{text}` is not a scale: give a number above 0 and at most 1, such as 0.01")),
    }
}

fn leak<T>(items: Vec<T>) -> &'static [T] {
    if items.is_empty() { &[] } else { Box::leak(items.into_boxed_slice()) }
}

fn load(load: Load, factor: f64) -> Load {
    match load {
        Load::Count(n) => Load::Count(count(n, factor)),
        Load::Duration(d) => Load::Duration(time(d, factor)),
    }
}

fn count(n: u64, factor: f64) -> u64 {
    ((n as f64 * factor).round() as u64).max(1)
}

/// Users of a ramp stage or a scenario: 0 (the end of a ramp down) stays 0.
fn users(n: u32, factor: f64) -> u32 {
    if n == 0 { 0 } else { ((f64::from(n) * factor).round() as u32).max(1) }
}

fn time(d: Duration, factor: f64) -> Duration {
    if d <= MIN_DURATION { d } else { d.mul_f64(factor).max(MIN_DURATION) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> ScenarioConfig {
        ScenarioConfig {
            concurrency: 150,
            rate: None,
            warmup: Some(Load::Count(50)),
            think_time: None,
            stages: &[],
            rate_stages: &[],
            group: None,
            load: Load::Count(7_500),
            timeout: None,
            target: None,
            thresholds: &[],
        }
    }

    #[test]
    fn users_and_counts_scale_rounded_with_a_floor_of_one() {
        let size = Size::declared(&config()).scaled(0.01);
        assert_eq!((size.concurrency, size.load, size.warmup), (2, Load::Count(75), Some(Load::Count(1))));
        let tiny = Size::declared(&config()).scaled(0.000_1);
        assert_eq!((tiny.concurrency, tiny.load), (1, Load::Count(1)));
        assert_eq!(Size::declared(&config()).scaled(1.0), Size::declared(&config()));
    }

    #[test]
    fn durations_rates_and_ramps_scale_too() {
        static STAGES: [Stage; 2] = [
            Stage { duration: Duration::from_secs(10), target: 100 },
            Stage { duration: Duration::from_secs(5), target: 0 },
        ];
        let ramp = ScenarioConfig { stages: &STAGES, load: Load::Duration(Duration::from_secs(15)), ..config() };
        let size = Size::declared(&ramp).scaled(0.1);
        assert_eq!(size.load, Load::Duration(Duration::from_millis(1_500)));
        assert_eq!(
            size.stages,
            [
                Stage { duration: Duration::from_secs(1), target: 10 },
                Stage { duration: Duration::from_millis(500), target: 0 }
            ]
        );
        // Never below 100 ms, and a declared duration shorter than that is left alone.
        assert_eq!(Size::declared(&ramp).scaled(0.001).load, Load::Duration(MIN_DURATION));
        let short = ScenarioConfig { load: Load::Duration(Duration::from_millis(50)), ..config() };
        assert_eq!(Size::declared(&short).scaled(0.5).load, Load::Duration(Duration::from_millis(50)));

        let open = ScenarioConfig { rate: Some(Rate { iterations: 2_000, per: Duration::from_secs(1) }), ..config() };
        assert_eq!(Size::declared(&open).scaled(0.01).rate, Some(Rate { iterations: 20, per: Duration::from_secs(1) }));
    }

    #[test]
    fn factors_outside_zero_to_one_are_refused() {
        assert_eq!(parse("0.01"), Ok(0.01));
        assert_eq!(parse("1"), Ok(1.0));
        for bad in ["0", "-0.5", "1.5", "NaN", "inf", "ten", ""] {
            assert!(parse(bad).unwrap_err().contains("is not a scale"), "{bad}");
        }
    }
}
