//! TechEmpower's Framework Benchmarks tests against the demo application: JSON serialization,
//! plaintext, a single database query and 20 queries per request (SQLite, 10,000 rows).
//! TechEmpower reports responses per second; so does the table's req/s column.
//!
//! `plaintext pipelined` is the plaintext test as TechEmpower runs it: its clients share a few
//! connections and pipeline 16 requests on each (256 users on 16 connections here, TechEmpower's
//! smallest step), so a user's request may wait behind 15 others on its connection and the server
//! answers them in one write. `plaintext` sends the same request one per connection, for
//! comparison.

#[loadbench::scenario(concurrency = 64, duration = "3s")]
async fn json(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    let response = ctx.get("/json").send().await?.expect_status(200)?;
    if response.text()? != r#"{"message":"Hello, World!"}"# {
        return Err(loadbench::Error::msg("unexpected JSON"));
    }
    Ok(())
}

#[loadbench::scenario(concurrency = 64, duration = "3s")]
async fn plaintext(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/plaintext").send().await?.expect_status(200)?;
    Ok(())
}

#[loadbench::scenario(
    name = "plaintext pipelined",
    concurrency = 256,
    connections = 16,
    pipeline = 16,
    duration = "2s"
)]
async fn plaintext_pipelined(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    let response = ctx.get("/plaintext").send().await?.expect_status(200)?;
    // TechEmpower's verifier checks the body and the content type.
    let plain = response.headers().get("content-type").is_some_and(|v| v.as_bytes().starts_with(b"text/plain"));
    if !plain || response.text()? != "Hello, World!" {
        return Err(loadbench::Error::msg("expected `Hello, World!` as text/plain"));
    }
    Ok(())
}

#[loadbench::scenario(name = "single query", concurrency = 64, duration = "3s")]
async fn single_query(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    let response = ctx.get("/db").send().await?.expect_status(200)?;
    if !response.text()?.contains("\"randomNumber\"") {
        return Err(loadbench::Error::msg("no row in the answer"));
    }
    Ok(())
}

#[loadbench::scenario(name = "multiple queries (20)", concurrency = 64, duration = "3s")]
async fn multiple_queries(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    let response = ctx.get("/queries?queries=20").send().await?.expect_status(200)?;
    let rows = response.text()?.matches("\"randomNumber\"").count();
    if rows != 20 {
        return Err(loadbench::Error::msg(format!("expected 20 rows, got {rows}")));
    }
    Ok(())
}

fn main() -> std::process::ExitCode {
    loadbench::Harness::new().default_target(loadbench_examples::start_demo_server).run()
}
