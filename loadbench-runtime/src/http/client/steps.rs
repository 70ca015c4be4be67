//! Named steps inside one iteration (`ctx.step("insert", async |ctx| { … })`): each step gets its
//! own count, errors and latency histogram, reported under its scenario.
//!
//! A user's [`Ctx`] carries where its steps go, a [`Recorder`] that the engine's worker
//! implements, and whether its current iteration is measured: recording a step touches only the
//! user's own worker, with no lock, no shared counter and no lookup.

use std::time::Instant;

use crate::error::Result;
use crate::http::Ctx;

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
        if let (true, Some(sink)) = (self.measuring, &self.recorder) {
            sink.record_step(name, outcome.as_ref().err(), elapsed);
        }
        outcome
    }
}
