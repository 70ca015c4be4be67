//! The warmup: iterations run before the measured part and left out of every figure (`warmup =
//! 100` or `warmup = "5s"`). Warmup iterations claim nothing from the measured count, so `count =
//! N` stays exact.
//!
//! In the open model the warmup is the first arrivals of the schedule, and the measured part
//! starts when the next one is due. In the closed model a warmup time ends at a known instant, and
//! a warmup count is split over the workers exactly; the measured part then starts with the first
//! measured iteration.

use std::time::{Duration, Instant};

use super::plan::LoadPlan;
use crate::config::Load;

/// How a plan's warmup divides the run, worked out once before it starts.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Warmup {
    /// Open model: arrivals with an index below this are warmup.
    pub(crate) arrivals: u64,
    /// Where the measured part starts after the run's start, when that is known in advance (a
    /// warmup count in the closed model ends whenever its iterations do).
    pub(crate) origin_offset: Duration,
    /// Closed model: the warmup, when there is one.
    closed: Option<Load>,
}

impl Warmup {
    /// The warmup of `plan`.
    pub(crate) fn of(plan: &LoadPlan) -> Warmup {
        let arrivals = match (plan.rate, plan.warmup) {
            (Some(_), Some(Load::Count(n))) => n,
            (Some(rate), Some(Load::Duration(d))) => rate.arrivals_within(d),
            _ => 0,
        };
        let origin_offset = match (plan.rate, plan.warmup) {
            (Some(rate), Some(_)) => rate.offset(arrivals),
            (None, Some(Load::Duration(d))) => d,
            _ => Duration::ZERO,
        };
        Warmup { arrivals, origin_offset, closed: plan.warmup.filter(|_| plan.rate.is_none()) }
    }

    /// Whether the measured part starts with its first iteration rather than at a known instant.
    pub(crate) fn ends_with_its_iterations(&self) -> bool {
        matches!(self.closed, Some(Load::Count(_)))
    }

    /// Worker `index` of `threads`'s share of a closed-model warmup: all of a warmup time, and of
    /// a warmup count its part, the first workers taking the remainder.
    pub(crate) fn for_worker(&self, index: usize, threads: usize) -> WorkerWarmup {
        let threads = threads.max(1) as u64;
        let (time, left) = match self.closed {
            Some(Load::Duration(d)) => (Some(d), 0),
            Some(Load::Count(n)) => (None, n / threads + u64::from((index as u64) < n % threads)),
            None => (None, 0),
        };
        WorkerWarmup { time, left, until: None, done: 0 }
    }
}

/// One worker's warmup in the closed model, and the warmup iterations it ran in either model.
#[derive(Debug)]
pub(crate) struct WorkerWarmup {
    /// A warmup given as a time.
    time: Option<Duration>,
    /// This worker's share of a warmup given as a count, still to run.
    left: u64,
    /// Iterations starting before this instant are warmup; known once the run has started.
    until: Option<Instant>,
    /// Iterations run as warmup, and so not recorded.
    pub(crate) done: u64,
}

impl WorkerWarmup {
    /// Fixes the end of a warmup time once the run's start is known.
    pub(crate) fn rebase(&mut self, start: Instant) {
        self.until = self.time.map(|d| start + d);
    }

    /// Whether the iteration about to start at `now` is a warmup one; takes it from the count if
    /// so.
    pub(crate) fn claim(&mut self, now: Instant) -> bool {
        if self.until.is_some_and(|until| now < until) {
            return true;
        }
        if self.left > 0 {
            self.left -= 1;
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Rate, ScenarioConfig};
    use crate::engine::plan::Sizing;

    fn plan(rate: Option<Rate>, warmup: Option<Load>) -> LoadPlan {
        let config =
            ScenarioConfig { rate, warmup, concurrency: Some(4), load: Load::Count(100), ..ScenarioConfig::DEFAULT };
        LoadPlan::new(&config, Sizing::Declared)
    }

    #[test]
    fn a_warmup_count_is_split_over_the_workers_exactly() {
        let warmup = Warmup::of(&plan(None, Some(Load::Count(10))));
        assert!(warmup.ends_with_its_iterations());
        let shares: Vec<u64> = (0..3).map(|i| warmup.for_worker(i, 3).left).collect();
        assert_eq!(shares, [4, 3, 3]);
        let mut first = warmup.for_worker(0, 3);
        assert_eq!((0..5).filter(|_| first.claim(Instant::now())).count(), 4);
    }

    #[test]
    fn an_open_model_warms_up_on_the_first_arrivals() {
        let rate = Rate { iterations: 100, per: Duration::from_secs(1) };
        let warmup = Warmup::of(&plan(Some(rate), Some(Load::Duration(Duration::from_millis(500)))));
        assert_eq!((warmup.arrivals, warmup.origin_offset), (50, Duration::from_millis(500)));
        assert!(!warmup.for_worker(0, 2).claim(Instant::now()), "no closed-model warmup");
        let none = Warmup::of(&plan(None, None));
        assert_eq!((none.arrivals, none.origin_offset, none.ends_with_its_iterations()), (0, Duration::ZERO, false));
    }
}
