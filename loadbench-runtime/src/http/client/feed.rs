//! [`Ctx::feed`]: the next record of the scenario's feed (see the `feed` module).

use crate::error::{Error, Result};
use crate::feed::{FeedCursor, Record};
use crate::http::Ctx;

impl Ctx {
    /// The next record of this scenario's feed (`feed = "data/users.csv"`, or
    /// [`Harness::feed`](crate::Harness::feed)), handed out as its `feed_mode` says: in file
    /// order across all users (`"sequential"`, the default), at random (`"random"`), or record
    /// `u` for user `u` (`"per_user"`). Each call takes a record; the file was read once, before
    /// the run.
    ///
    /// Fails (an error of kind `scenario`) when the scenario declares no feed, or when a
    /// sequential feed with `feed_end = "stop"` has no record left.
    ///
    /// ```no_run
    /// #[loadbench::scenario(concurrency = 10, count = 1_000, feed = "data/users.csv", feed_mode = "random")]
    /// async fn log_in(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ///     let user = ctx.feed()?;
    ///     let body = format!("user={}&password={}", user.get("username")?, user.get("password")?);
    ///     ctx.post("/login").body(body).send().await?.expect_status(200)?;
    ///     Ok(())
    /// }
    /// # fn main() {}
    /// ```
    pub fn feed(&mut self) -> Result<Record> {
        match &mut self.feed {
            Some(cursor) => cursor.take(),
            None => Err(Error::msg(
                "this scenario has no feed: add `feed = \"data/users.csv\"` to its attribute, or give one with Harness::feed",
            )),
        }
    }

    /// Gives this user its cursor into the scenario's feed.
    pub(crate) fn with_feed(mut self, cursor: Option<FeedCursor>) -> Ctx {
        self.feed = cursor;
        self
    }
}
