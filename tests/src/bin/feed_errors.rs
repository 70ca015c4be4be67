//! A bench binary whose scenarios' feeds cannot be used, for `tests/feeds.rs`: each must stop
//! the run with one `error:` line and exit code 2 before any request is sent. Scenario `given`
//! reads the file named by `FEED_ERRORS_FILE` (made by the test: a FIFO, a link to /dev/zero).

/// Sends one request per iteration, so that any load would show on the test server.
async fn one_request(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    let record = ctx.feed()?;
    ctx.get(&format!("/users/{}", record.get("username")?)).send().await?;
    Ok(())
}

#[loadbench::scenario(count = 5, feed = "data/feeds/missing.csv")]
async fn missing(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    one_request(ctx).await
}

#[loadbench::scenario(count = 5, feed = "data/feeds/malformed.csv")]
async fn malformed(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    one_request(ctx).await
}

#[loadbench::scenario(count = 5, feed = "data/feeds/not_objects.jsonl")]
async fn not_objects(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    one_request(ctx).await
}

#[loadbench::scenario(concurrency = 6, count = 6, feed = "data/feeds/users.csv", feed_mode = "per_user")]
async fn too_few_for_users(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    one_request(ctx).await
}

/// A scenario whose feed is fine, selected together with a broken one: nothing runs.
#[loadbench::scenario(count = 5, feed = "data/feeds/users.csv")]
async fn fine(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    one_request(ctx).await
}

/// Its feed is the file the test names in `FEED_ERRORS_FILE`.
#[loadbench::scenario(count = 5)]
async fn given(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    one_request(ctx).await
}

fn main() -> std::process::ExitCode {
    let harness = loadbench::Harness::new();
    match std::env::var_os("FEED_ERRORS_FILE") {
        Some(file) => harness.feed("given", loadbench::feed::FeedSource::new(file)).run(),
        None => harness.run(),
    }
}
