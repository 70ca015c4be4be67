//! Every argument at once, with a duration rather than a count.

use loadbench::{Ctx, Result};

#[loadbench::scenario(
    concurrency = 1000,
    duration = "1m 30s",
    timeout = "500ms",
    name = "checkout flow",
    target = "http://127.0.0.1:8080/api",
    thresholds(p99 < "50ms", error_rate < 0.01, rps > 1000),
    cookies = "user",
    follow_redirects = 3
)]
pub async fn checkout(ctx: &mut Ctx) -> Result<()> {
    ctx.get("/cart").send().await?.expect_status(200)?;
    Ok(())
}

fn main() {}
