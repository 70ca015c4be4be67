//! Checks (`ctx.check("has id", cond)`, k6's `check`): conditions counted by name, passes and
//! failures, reported per scenario and usable in thresholds (`checks > 0.99`), that never fail
//! the iteration.

use crate::http::Ctx;

impl Ctx {
    /// Counts one evaluation of the check `name`, passed or failed, and returns `passed`.
    ///
    /// Checks are counted for measured iterations (not warmup), per name in the order first
    /// made, and reported under the scenario (the table's `checks:` line, the JSON's `checks`).
    /// A failed check does not fail the iteration; a threshold can fail the run instead:
    /// `checks > 0.99` is met when more than 99 % of all the scenario's checks passed.
    ///
    /// ```no_run
    /// #[loadbench::scenario(concurrency = 10, count = 1_000, thresholds(checks >= 99%))]
    /// async fn item(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ///     let response = ctx.get("/items/1").send().await?;
    ///     ctx.check("status is 200", response.status() == 200);
    ///     if !ctx.check("has an id", response.text()?.contains("\"id\"")) {
    ///         return Ok(()); // nothing more to look at
    ///     }
    ///     Ok(())
    /// }
    /// # fn main() {}
    /// ```
    pub fn check(&self, name: &str, passed: bool) -> bool {
        if let (true, Some(recorder)) = (self.measuring, &self.recorder) {
            recorder.record_check(name, passed);
        }
        passed
    }
}
