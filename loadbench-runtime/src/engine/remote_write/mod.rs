//! Live metrics: a scenario's figures pushed to a Prometheus remote-write endpoint every
//! interval while it runs (`--remote-write URL`), built only with the runtime's `remote-write`
//! feature.
//!
//! The load never waits for the endpoint. A reader thread per scenario reads the workers'
//! progress counts on its timer, as the progress display does (`progress::read_live`: relaxed
//! loads of counts each worker writes alone), turns them into series (`series`), encodes them as a
//! `WriteRequest` (`proto`) and hands the snappy-compressed body to a sender thread through a
//! bounded queue (`send`). Steps and named requests come from boards each worker fills once an
//! interval (`rows`). A full queue or a failed push drops the samples and counts them: the
//! report's `remote_write` says how many. When the scenario ends, a last reading (every count
//! final) is pushed, so that the series end on the report's own figures.

mod proto;
pub(crate) mod rows;
mod send;
mod series;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, TrySendError};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use self::rows::{RowBoard, RowCounts};
use self::send::{Batch, Sent};
use self::series::Scope;
use super::progress::{WorkerProgress, read_live};
use crate::cli::RemoteWriteConfig;
use crate::report::RemoteWriteReport;

/// Pushes waiting for the sender at most: a few intervals' worth, so that a slow answer is
/// absorbed and a dead endpoint costs a bounded memory.
const QUEUE: usize = 4;

/// What every scenario of a run pushes with: the endpoint and labels, and the run's own labels.
#[derive(Debug, Clone)]
pub(crate) struct LivePush {
    pub(crate) config: RemoteWriteConfig,
    /// The `run` label: `--run-id`, else one made when the bench binary started.
    pub(crate) run: String,
    /// The `shard` label: this shard's index, `0` for a run that is not split.
    pub(crate) shard: String,
}

impl LivePush {
    /// `config` for a run named `run_id` (one is made from the clock when there is none), as
    /// shard `shard` (its index).
    pub(crate) fn new(config: RemoteWriteConfig, run_id: Option<&str>, shard: u32) -> LivePush {
        let run = run_id.map_or_else(
            || format!("local-{}", SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_secs()),
            str::to_owned,
        );
        LivePush { config, run, shard: shard.to_string() }
    }
}

/// A stop that ends the reader's sleep at once.
#[derive(Debug, Default)]
struct Stop {
    stopped: Mutex<bool>,
    wake: Condvar,
}

impl Stop {
    /// Sleeps `interval`, or less when stopped; whether it was stopped.
    fn sleep(&self, interval: Duration) -> bool {
        let guard = self.stopped.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let (guard, _) = self
            .wake
            .wait_timeout_while(guard, interval, |stopped| !*stopped)
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        *guard
    }

    fn stop(&self) {
        *self.stopped.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = true;
        self.wake.notify_all();
    }
}

/// One scenario's live metrics, running; [`Pusher::finish`] pushes the last reading and says what
/// was sent and dropped.
#[derive(Debug)]
pub(crate) struct Pusher {
    url: String,
    stop: Arc<Stop>,
    /// The workers' steps and named requests.
    boards: Vec<RowBoard>,
    /// Set when the scenario is over: the sender drops what is queued before the last reading.
    closing: Arc<AtomicBool>,
    reader: Option<JoinHandle<u64>>,
    sender: Option<JoinHandle<Sent>>,
    /// Why the threads could not start, when they could not.
    failed_to_start: Option<String>,
}

impl Pusher {
    /// Starts pushing the figures of scenario `name`, whose workers count into `workers` and
    /// copy their steps and named requests to `boards`.
    pub(crate) fn start(
        push: &LivePush,
        name: &str,
        workers: Vec<Arc<WorkerProgress>>,
        boards: Vec<RowBoard>,
    ) -> Pusher {
        let url = push.config.url.clone();
        let stop = Arc::new(Stop::default());
        let closing = Arc::new(AtomicBool::new(false));
        let (queue, batches) = mpsc::sync_channel::<Batch>(QUEUE);
        let sender = std::thread::Builder::new().name("loadbench-remote-write".into()).spawn({
            let (url, closing) = (url.clone(), Arc::clone(&closing));
            move || send::run(&url, &batches, &closing)
        });
        let sender = match sender {
            Ok(sender) => sender,
            Err(err) => {
                return Pusher {
                    url,
                    stop,
                    boards,
                    closing,
                    reader: None,
                    sender: None,
                    failed_to_start: Some(format!("cannot start its thread: {err}")),
                };
            }
        };
        let scope = Scope::new(name, push);
        let (interval, kind) = (push.config.interval, push.config.histograms);
        let reader = std::thread::Builder::new().name("loadbench-live".into()).spawn({
            let stop = Arc::clone(&stop);
            let boards = boards.clone();
            move || {
                let mut clock = Clock::default();
                let mut dropped = 0;
                loop {
                    let last = stop.sleep(interval);
                    let reading = read_live(&workers);
                    let rows = rows::sum(&boards);
                    let body = series::write_request(&scope, &reading, &rows, kind, clock.next());
                    let batch = Batch::encode(&body, last);
                    match queue.try_send(batch) {
                        Ok(()) => {}
                        // The last reading waits for room: the sender drops what is queued
                        // before it once told, so this wait is one push at most.
                        Err(TrySendError::Full(batch)) if last => {
                            if let Err(mpsc::SendError(batch)) = queue.send(batch) {
                                dropped += batch.samples;
                            }
                        }
                        Err(TrySendError::Full(batch) | TrySendError::Disconnected(batch)) => dropped += batch.samples,
                    }
                    if last {
                        return dropped;
                    }
                }
            }
        });
        match reader {
            Ok(reader) => {
                Pusher { url, stop, boards, closing, reader: Some(reader), sender: Some(sender), failed_to_start: None }
            }
            Err(err) => Pusher {
                url,
                stop,
                boards,
                closing,
                reader: None,
                sender: Some(sender),
                failed_to_start: Some(format!("cannot start its thread: {err}")),
            },
        }
    }

    /// Once the workers are done: pushes the last reading, with `rows`, the steps' and named
    /// requests' merged figures, waits for the sender (a push's timeout at most, twice when one
    /// was in flight), and reports.
    pub(crate) fn finish(mut self, rows: Vec<RowCounts>) -> RemoteWriteReport {
        rows::settle(&self.boards, rows);
        self.closing.store(true, Ordering::Relaxed);
        self.stop.stop();
        let dropped_by_reader = self.reader.take().and_then(|reader| reader.join().ok()).unwrap_or(0);
        // The reader's end drops the queue's sending side: the sender ends once it has emptied it.
        let sent = self.sender.take().and_then(|sender| sender.join().ok()).unwrap_or_default();
        RemoteWriteReport {
            url: self.url,
            samples_sent: sent.samples,
            samples_dropped: sent.dropped + dropped_by_reader,
            first_error: self.failed_to_start.or(sent.first_error),
        }
    }
}

/// Timestamps in milliseconds since the Unix epoch, each later than the last: Prometheus refuses
/// a second sample of a series at the same instant, and the last reading may follow a tick by
/// less than a millisecond.
#[derive(Debug, Default)]
struct Clock {
    last: i64,
}

impl Clock {
    fn next(&mut self) -> i64 {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
        let now = i64::try_from(now.as_millis()).unwrap_or(i64::MAX);
        self.last = now.max(self.last.saturating_add(1));
        self.last
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_always_move_forward() {
        let mut clock = Clock::default();
        let first = clock.next();
        let stamps: Vec<i64> = (0..1_000).map(|_| clock.next()).collect();
        assert!(stamps.windows(2).all(|pair| pair[1] > pair[0]));
        assert!(stamps[0] > first);
    }

    #[test]
    fn a_stop_ends_the_sleep_at_once() {
        let stop = Arc::new(Stop::default());
        let waker = Arc::clone(&stop);
        let started = std::time::Instant::now();
        let sleeper = std::thread::spawn(move || waker.sleep(Duration::from_secs(60)));
        std::thread::sleep(Duration::from_millis(20));
        stop.stop();
        assert!(sleeper.join().unwrap());
        assert!(started.elapsed() < Duration::from_secs(30));
        assert!(!Stop::default().sleep(Duration::from_millis(1)), "a sleep that ran its course");
    }
}
