//! The open model (`rate = …`, `rate_stages = […]`): each worker thread runs a scheduler task that
//! owns its share of the arrivals. With T threads, thread `i` takes arrivals `i, i + T, i + 2T, …`
//! of one global schedule, so the threads interleave (phase offsets) and together meet the rate
//! exactly, each from its own clock. An arrival goes to an idle user of that thread, or is counted
//! as dropped.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::plan::LoadPlan;
use super::ramp;
use super::vu::UserSlot;
use super::warmup::Warmup;
use super::worker::Worker;
use crate::config::{Load, Rate, RateStage};

/// One worker thread's share of an open model's arrivals.
#[derive(Debug, Clone)]
pub(crate) struct Arrivals {
    schedule: Schedule,
    /// The run's start, once known.
    pub(crate) start: Instant,
    /// This worker's first arrival index in the global schedule.
    first: u64,
    /// Worker threads: the distance between this worker's arrival indices.
    step: u64,
    /// Arrivals with an index below this are warmup.
    warmup: u64,
    limit: ArrivalLimit,
}

impl Arrivals {
    /// Worker `index` of `threads`'s share of `plan`'s arrivals; `None` in the closed model.
    pub(crate) fn for_worker(plan: &LoadPlan, warmup: &Warmup, index: usize, threads: usize) -> Option<Arrivals> {
        let schedule = match (plan.rate, plan.rate_stages.as_slice()) {
            (Some(rate), _) => Schedule::Constant(rate),
            (None, []) => return None,
            (None, stages) => Schedule::Ramp(Arc::from(stages)),
        };
        Some(Arrivals {
            schedule,
            // Set once the run's start is known.
            start: Instant::now(),
            first: index as u64,
            step: threads as u64,
            warmup: warmup.arrivals,
            limit: match plan.load {
                Load::Count(n) => ArrivalLimit::Count(warmup.arrivals.saturating_add(n)),
                Load::Duration(d) => ArrivalLimit::Within(warmup.origin_offset + d),
            },
        })
    }
}

/// When the arrivals of an open model are due.
#[derive(Debug, Clone)]
enum Schedule {
    /// At a constant rate (`rate = …`).
    Constant(Rate),
    /// Along a ramp of rates (`rate_stages = […]`), shared by the workers.
    Ramp(Arc<[RateStage]>),
}

impl Schedule {
    /// When arrival `index` is due after the start; `None` after a ramp's end.
    fn offset(&self, index: u64) -> Option<Duration> {
        match self {
            Schedule::Constant(rate) => Some(rate.offset(index)),
            Schedule::Ramp(stages) => ramp::rate_stages_offset(stages, index),
        }
    }
}

/// Which arrivals of the global schedule exist.
#[derive(Debug, Clone, Copy)]
enum ArrivalLimit {
    /// Indices below this count.
    Count(u64),
    /// Those due before this much time has passed.
    Within(Duration),
}

/// How long the open model's schedule took: from the start of its measured part to its last
/// arrival's due time or later dispatch (`schedule_end`), at least the planned time.
pub(crate) fn schedule_length(plan: &LoadPlan, warmup: &Warmup, origin: Instant, schedule_end: Instant) -> Duration {
    let planned = match (plan.load, plan.rate) {
        (Load::Count(n), Some(rate)) => rate.offset(warmup.arrivals.saturating_add(n)) - rate.offset(warmup.arrivals),
        (Load::Count(_), None) => Duration::ZERO,
        (Load::Duration(d), _) => d,
    };
    schedule_end.saturating_duration_since(origin).max(planned)
}

/// How early the scheduler asks to be woken. tokio's timer rounds a deadline up to the next
/// millisecond; asking 1 ms early makes the wake-up land within a millisecond before the due
/// time instead of after it, and an iteration dispatched early is timed from its actual start.
const TIMER_SLACK: Duration = Duration::from_millis(1);

/// Hands this worker's arrivals to idle users at their due times; returns when the last one is
/// due (or the run is stopped), having closed every user's slot.
pub(crate) async fn schedule(arrivals: Arrivals, slots: Vec<Rc<UserSlot>>, worker: Rc<RefCell<Worker>>) -> Instant {
    let Arrivals { schedule, start, first, step, warmup, limit } = arrivals;
    let origin = start + schedule.offset(warmup).unwrap_or_default();
    let mut index = first;
    while let Some(offset) = schedule.offset(index) {
        let exists = match limit {
            ArrivalLimit::Count(n) => index < n,
            ArrivalLimit::Within(d) => offset < d,
        };
        if !exists {
            break;
        }
        let due = start + offset;
        let now = Instant::now();
        if due > now + TIMER_SLACK {
            tokio::time::sleep_until((due - TIMER_SLACK).into()).await;
        }
        let mut shared = worker.borrow_mut();
        if shared.stop.load(Ordering::Relaxed) || shared.feed_ran_out() {
            break;
        }
        match shared.idle.pop().and_then(|user| slots.get(user)) {
            // Timed from the due time when late (so a stalled server or a late generator shows
            // in the latency, as in wrk2), from the actual start when woken early.
            Some(slot) => slot.start(due.min(Instant::now()), index >= warmup),
            // A warmup arrival that finds no user is neither run nor measured.
            None if index < warmup => {}
            None => {
                let second = usize::try_from(due.saturating_duration_since(origin).as_secs()).unwrap_or(usize::MAX);
                shared.stats.record_dropped(second);
            }
        }
        drop(shared);
        index += step;
    }
    let end = Instant::now();
    for slot in &slots {
        slot.close();
    }
    end
}
