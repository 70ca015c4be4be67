//! Steps and named requests in the live metrics. Their figures are their worker's own (in its
//! `WorkerStats`, touched by its thread alone), so each worker copies them, every interval, to a
//! board of its own behind a lock taken once per interval (never per request) by a task of its
//! own; the reader adds the workers' boards up. When the scenario ends, the merged figures replace
//! the boards, so that the last push holds the report's own.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hdrhistogram::Histogram;

use crate::engine::progress::window::{BUCKETS, bucket_of};
use crate::engine::stats::WorkerStats;
use crate::engine::worker::Worker;
use crate::report::ErrorCounts;

/// A step (`ctx.step`) or a named request (`.name(…)`, `ctx.measure`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RowKind {
    Step,
    Request,
}

impl RowKind {
    /// The label naming the row, and the metrics' prefix: `step` or `request`.
    pub(crate) fn word(self) -> &'static str {
        match self {
            RowKind::Step => "step",
            RowKind::Request => "request",
        }
    }
}

/// One row's figures so far.
#[derive(Debug, Clone)]
pub(crate) struct RowCounts {
    pub(crate) kind: RowKind,
    pub(crate) name: String,
    pub(crate) ok: u64,
    pub(crate) errors: ErrorCounts,
    /// The successes' latencies in the progress counts' buckets.
    pub(crate) latency: Box<[u64; BUCKETS]>,
}

/// One worker's rows as it last copied them.
pub(crate) type RowBoard = Arc<Mutex<Vec<RowCounts>>>;

/// Every row of `stats`.
pub(crate) fn snapshot(stats: &WorkerStats) -> Vec<RowCounts> {
    let rows = stats.live_rows().map(|(step, name, ok, errors, latency_ns)| RowCounts {
        kind: if step { RowKind::Step } else { RowKind::Request },
        name: name.to_owned(),
        ok,
        errors: *errors,
        latency: buckets(latency_ns),
    });
    rows.collect()
}

/// An HdrHistogram of nanoseconds in the progress counts' buckets of microseconds.
fn buckets(latency_ns: &Histogram<u64>) -> Box<[u64; BUCKETS]> {
    let mut buckets = Box::new([0; BUCKETS]);
    for value in latency_ns.iter_recorded() {
        buckets[bucket_of(value.value_iterated_to() / 1_000)] += value.count_at_value();
    }
    buckets
}

/// The workers' boards added up, row by row, in the order first seen.
pub(crate) fn sum(boards: &[RowBoard]) -> Vec<RowCounts> {
    let mut all: Vec<RowCounts> = Vec::new();
    for board in boards {
        let rows = board.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        for row in rows.iter() {
            match all.iter_mut().find(|r| r.kind == row.kind && r.name == row.name) {
                Some(sum) => {
                    sum.ok += row.ok;
                    sum.errors.add(&row.errors);
                    for (total, n) in sum.latency.iter_mut().zip(row.latency.iter()) {
                        *total += n;
                    }
                }
                None => all.push(row.clone()),
            }
        }
    }
    all
}

/// Replaces the boards with `rows`, the merged figures: the last reading holds them.
pub(crate) fn settle(boards: &[RowBoard], rows: Vec<RowCounts>) {
    for (index, board) in boards.iter().enumerate() {
        let mut held = board.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        *held = if index == 0 { rows.clone() } else { Vec::new() };
    }
}

/// A worker's task: copies its rows to `board` every `interval`, until the worker's tasks end.
pub(crate) async fn publish(worker: Rc<RefCell<Worker>>, board: RowBoard, interval: Duration) {
    loop {
        tokio::time::sleep(interval).await;
        let rows = snapshot(&worker.borrow().stats);
        *board.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = rows;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(kind: RowKind, name: &str, ok: u64, latency_us: &[u64]) -> RowCounts {
        let mut histogram = crate::engine::histogram::new_histogram();
        let mut latency = Box::new([0; BUCKETS]);
        for &us in latency_us {
            histogram.record(us * 1_000).unwrap();
        }
        latency.copy_from_slice(&buckets(&histogram)[..]);
        RowCounts { kind, name: name.into(), ok, errors: ErrorCounts { io: 1, ..ErrorCounts::default() }, latency }
    }

    #[test]
    fn the_workers_rows_add_up_by_kind_and_name() {
        let boards: Vec<RowBoard> = vec![Arc::default(), Arc::default()];
        *boards[0].lock().unwrap() = vec![row(RowKind::Request, "a", 2, &[100, 200]), row(RowKind::Step, "a", 1, &[5])];
        *boards[1].lock().unwrap() = vec![row(RowKind::Request, "b", 1, &[7]), row(RowKind::Request, "a", 1, &[100])];
        let all = sum(&boards);
        let names: Vec<(RowKind, &str, u64, u64)> =
            all.iter().map(|r| (r.kind, r.name.as_str(), r.ok, r.errors.io)).collect();
        assert_eq!(names, [(RowKind::Request, "a", 3, 2), (RowKind::Step, "a", 1, 1), (RowKind::Request, "b", 1, 1)]);
        // Every recorded latency is in the bucket of its microseconds.
        assert_eq!(all[0].latency.iter().sum::<u64>(), 3);
        assert_eq!(all[0].latency[bucket_of(100)], 2);
        settle(&boards, vec![row(RowKind::Step, "final", 9, &[])]);
        let settled = sum(&boards);
        assert_eq!(settled.iter().map(|r| (r.name.as_str(), r.ok)).collect::<Vec<_>>(), [("final", 9)]);
    }
}
