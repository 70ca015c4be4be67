//! Named steps inside one iteration (`ctx.step("insert", async |ctx| { … })`): each step gets
//! its own count, errors and latency histogram, reported under its scenario.
//!
//! A step records into the statistics of the worker thread it runs on, found through a
//! thread-local that the executor sets for the life of the worker's event loop: no lock, no
//! shared counter, and no change to what a [`Ctx`] holds.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Instant;

use crate::ctx::Ctx;
use crate::error::Result;
use crate::executor::WorkerShared;

thread_local! {
    /// The worker running its event loop on this thread, if any.
    static WORKER: RefCell<Option<Rc<RefCell<WorkerShared>>>> = const { RefCell::new(None) };
}

/// Makes `worker` the one steps on this thread record into, until the guard is dropped.
pub(crate) fn enter(worker: Rc<RefCell<WorkerShared>>) -> WorkerGuard {
    WORKER.with(|w| *w.borrow_mut() = Some(worker));
    WorkerGuard(())
}

/// Unsets the thread's worker when dropped, so that no reference outlives its run.
#[derive(Debug)]
pub(crate) struct WorkerGuard(());

impl Drop for WorkerGuard {
    fn drop(&mut self) {
        WORKER.with(|w| w.borrow_mut().take());
    }
}

impl Ctx {
    /// Runs `body` as the named step of this iteration and returns what it returns.
    ///
    /// The step's count, errors (by kind) and latency, from its start to its end, are reported
    /// as a row under the scenario's own, and in the JSON under `steps`. A failed step still
    /// returns its error, so `?` fails the iteration as before. Steps of warmup iterations are
    /// not counted.
    ///
    /// ```no_run
    /// #[loadbench::scenario(concurrency = 10, count = 1_000)]
    /// async fn checkout(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ///     ctx.step("add to cart", async |ctx| {
    ///         ctx.post("/cart").body("{}").send().await?.expect_status(201)?;
    ///         Ok(())
    ///     })
    ///     .await?;
    ///     let total = ctx
    ///         .step("view cart", async |ctx| Ok(ctx.get("/cart").send().await?.expect_status(200)?.text()?.len()))
    ///         .await?;
    ///     assert!(total > 0);
    ///     Ok(())
    /// }
    /// # fn main() {}
    /// ```
    pub async fn step<T>(&mut self, name: &str, body: impl AsyncFnOnce(&mut Ctx) -> Result<T>) -> Result<T> {
        let start = Instant::now();
        let outcome = body(self).await;
        let elapsed = start.elapsed();
        let user = self.user();
        WORKER.with(|w| {
            if let Some(worker) = &*w.borrow() {
                worker.borrow_mut().record_step(user, name, outcome.as_ref().err().map(|e| e.kind()), elapsed);
            }
        });
        outcome
    }
}
