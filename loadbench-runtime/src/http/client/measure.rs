//! `ctx.measure(name, op)`: any async operation (a WebSocket round trip, a gRPC call, a query)
//! measured as a named request, in the same row as requests named `name` with `.name(…)`, and so
//! in every figure a named request is in: its count, failures by kind with their causes, its
//! latency histogram, thresholds, baselines, merges and every output.
//!
//! What the row counts: one run of `op` per call in a measured iteration (warmup iterations are
//! not recorded). Its latency runs from the call to `op`'s completion; under an arrival rate, an
//! iteration that begins with the measured operation is timed from its arrival (the moment the
//! schedule meant it to start), so that an arrival that waited for a free user is in the
//! operation's latency, as it is in the iteration's. The request timeout applies: an operation
//! still running at it is dropped and fails as `timeout`.

use std::future::IntoFuture;
use std::time::Instant;

use crate::error::{Error, ErrorKind, Result};
use crate::http::Ctx;
use crate::http::wire::failures::timed_out;

/// What [`Ctx::measure`] makes of a failed operation's error: another library's error (a
/// `std::error::Error + Send + Sync`, returned, or turned into a loadbench [`Error`] by `?` inside
/// the operation) is counted as [`ErrorKind::Custom`], its message its own words and causes; a
/// loadbench [`Error`] made with a kind or a message of its own (`Error::new(ErrorKind::Io, …)`,
/// `Error::msg(…)`) keeps its kind. An error that is neither (a `Box<dyn Error>`, an `anyhow::Error`) becomes
/// one with `.map_err(|e| loadbench::Error::new(loadbench::ErrorKind::Custom, e.to_string()))`.
pub trait MeasuredError {
    /// The error as the row counts it.
    fn into_measured(self) -> Error;
}

impl MeasuredError for Error {
    fn into_measured(self) -> Error {
        self.foreign_as_custom()
    }
}

impl<E> MeasuredError for E
where
    E: std::error::Error + Send + Sync + 'static,
{
    fn into_measured(self) -> Error {
        Error::with_source(ErrorKind::Custom, "", self)
    }
}

/// Where an iteration under an arrival rate began: its arrival, and how many responses the user
/// had then, to tell whether a measured operation is the iteration's first exchange.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Arrival {
    pub(crate) at: Instant,
    pub(crate) responses: u64,
}

impl Ctx {
    /// Runs `op` and records it as a request named `name`: one row per name, with its count, its
    /// failures by kind and cause, and the latency of its successes, beside the scenario's own
    /// row, in the table, the JSON (`requests`) and every output, as a request named with
    /// [`RequestBuilder::name`](crate::RequestBuilder::name) is (and in the same row, if both
    /// use one name). Returns `op`'s value, or its error as a loadbench [`Error`], so `?` fails
    /// the iteration as any error does.
    ///
    /// The latency runs from this call to `op`'s completion. The scenario's request timeout
    /// applies: past it, `op` is dropped and the call fails as [`ErrorKind::Timeout`]. Under an
    /// arrival rate (`rate = …`), an iteration that begins with a measured operation times it
    /// from the iteration's arrival, so the wait for a free user is not left out. Operations of
    /// warmup iterations are run but not recorded. One user runs one body at a time, so
    /// concurrency stays exactly the scenario's.
    ///
    /// ```no_run
    /// # async fn count_orders(user: u32) -> Result<u64, std::io::Error> { Ok(u64::from(user)) }
    /// #[loadbench::scenario(concurrency = 10, count = 1_000)]
    /// async fn orders(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ///     // Any async operation with a `Result`: a client of another protocol, a query, a queue.
    ///     let orders = ctx.measure("count orders", count_orders(ctx.user())).await?;
    ///     ctx.check("has orders", orders > 0);
    ///     Ok(())
    /// }
    /// # fn main() {}
    /// ```
    pub async fn measure<T, E: MeasuredError>(
        &mut self,
        name: &str,
        op: impl IntoFuture<Output = std::result::Result<T, E>>,
    ) -> Result<T> {
        let call = Instant::now();
        let start = match self.arrival.take() {
            Some(arrival) if arrival.responses == self.counters.responses => arrival.at.min(call),
            _ => call,
        };
        let timeout = self.timeout();
        let outcome = match self.within_timeout(timeout, op.into_future()).await {
            Some(Ok(value)) => Ok(value),
            Some(Err(error)) => Err(error.into_measured()),
            None => Err(timed_out(timeout)),
        };
        if let (true, Some(sink)) = (self.measuring, &self.recorder) {
            sink.record_request(name, outcome.as_ref().err(), start.elapsed());
        }
        outcome
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::cell::RefCell;
    use std::rc::Rc;
    use std::time::Duration;

    use super::*;
    use crate::http::{Recorder, Target};

    /// Records what a worker would: each request row's outcome and latency.
    #[derive(Debug, Default)]
    struct Rows(RefCell<Vec<(String, Option<ErrorKind>, Duration)>>);

    impl Recorder for Rows {
        fn record_step(&self, _: &str, _: Option<&Error>, _: Duration) {}
        fn record_request(&self, name: &str, error: Option<&Error>, elapsed: Duration) {
            self.0.borrow_mut().push((name.to_owned(), error.map(Error::kind), elapsed));
        }
        fn record_check(&self, _: &str, _: bool) {}
        fn record_connection(&self, _: Option<Duration>, _: Option<Duration>) {}
    }

    fn ctx(timeout: Duration) -> (Ctx, Rc<Rows>) {
        let rows = Rc::new(Rows::default());
        let target = Rc::new(Target::resolve("http://127.0.0.1:9/").unwrap());
        let recorder: Rc<dyn Recorder> = rows.clone();
        (Ctx::new(target, timeout, 0, Some(recorder)), rows)
    }

    fn run<F: std::future::Future>(work: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(work)
    }

    #[test]
    fn outcomes_are_counted_by_kind_and_returned() {
        run(async {
            let (mut ctx, rows) = ctx(Duration::from_secs(5));
            assert_eq!(ctx.measure("ok", async { Ok::<_, std::io::Error>(7) }).await.unwrap(), 7);
            let refused = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "no echo");
            let failed = ctx.measure("custom", async { Err::<(), _>(refused) }).await.unwrap_err();
            assert_eq!((failed.kind(), failed.to_string()), (ErrorKind::Custom, "no echo".to_owned()));
            let own = Error::new(ErrorKind::Io, "closed mid-message");
            assert_eq!(ctx.measure("own", async { Err::<(), _>(own) }).await.unwrap_err().kind(), ErrorKind::Io);
            // `?` inside the operation turns another library's error into a loadbench one: still
            // that library's, so `custom`; a message of the body's own stays `scenario`.
            let converted = ctx
                .measure("converted", async {
                    "x".parse::<u32>()?;
                    Ok::<(), Error>(())
                })
                .await
                .unwrap_err();
            assert_eq!(converted.kind(), ErrorKind::Custom);
            let said = ctx.measure("said", async { Err::<(), _>(Error::msg("wrong item")) }).await.unwrap_err();
            assert_eq!(said.kind(), ErrorKind::Scenario);
            ctx.measuring = false;
            ctx.measure("warmup", async { Ok::<_, Error>(()) }).await.unwrap();
            let kinds: Vec<(String, Option<ErrorKind>)> =
                rows.0.borrow().iter().map(|(n, k, _)| (n.clone(), *k)).collect();
            assert_eq!(
                kinds,
                [
                    ("ok".to_owned(), None),
                    ("custom".to_owned(), Some(ErrorKind::Custom)),
                    ("own".to_owned(), Some(ErrorKind::Io)),
                    ("converted".to_owned(), Some(ErrorKind::Custom)),
                    ("said".to_owned(), Some(ErrorKind::Scenario))
                ],
                "a warmup iteration's operation is not recorded"
            );
        });
    }

    #[test]
    fn an_operation_past_the_timeout_is_dropped_and_fails_as_timeout() {
        run(async {
            let (mut ctx, rows) = ctx(Duration::from_millis(50));
            let begun = Instant::now();
            let slow = tokio::time::sleep(Duration::from_secs(30));
            let failed = ctx
                .measure("slow", async {
                    slow.await;
                    Ok::<_, Error>(())
                })
                .await
                .unwrap_err();
            assert_eq!(failed.kind(), ErrorKind::Timeout);
            assert!(begun.elapsed() < Duration::from_secs(10), "{:?}", begun.elapsed());
            let (_, kind, elapsed) = rows.0.borrow()[0].clone();
            assert_eq!(kind, Some(ErrorKind::Timeout));
            assert!(elapsed >= Duration::from_millis(50), "{elapsed:?}");
        });
    }

    #[test]
    fn an_iteration_that_begins_with_the_operation_times_it_from_its_arrival() {
        run(async {
            let (mut ctx, rows) = ctx(Duration::from_secs(5));
            let late = Duration::from_millis(200);
            // Arrived 200 ms ago, and nothing exchanged since: the wait is the operation's.
            ctx.arrival = Some(Arrival { at: Instant::now() - late, responses: ctx.counters.responses });
            ctx.measure("first", async { Ok::<_, Error>(()) }).await.unwrap();
            // Taken by the first: the next is timed from its call.
            ctx.measure("second", async { Ok::<_, Error>(()) }).await.unwrap();
            // A response came before it in the iteration: timed from its call.
            ctx.arrival = Some(Arrival { at: Instant::now() - late, responses: ctx.counters.responses });
            ctx.counters.responses += 1;
            ctx.measure("after a request", async { Ok::<_, Error>(()) }).await.unwrap();
            let elapsed: Vec<Duration> = rows.0.borrow().iter().map(|(_, _, e)| *e).collect();
            assert!(elapsed[0] >= late, "{elapsed:?}");
            assert!(elapsed[1] < late && elapsed[2] < late, "{elapsed:?}");
        });
    }
}
