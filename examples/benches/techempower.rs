//! TechEmpower's Framework Benchmarks tests against the demo application: JSON serialization,
//! plaintext, a single database query and 20 queries per request (SQLite, 10,000 rows).
//! TechEmpower reports responses per second; so does the table's req/s column.

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
