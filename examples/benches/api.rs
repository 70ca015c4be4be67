//! A small JSON API: reads by id and writes with a body, one bounded by count, one by time.

#[loadbench::scenario(concurrency = 50, count = 20_000)]
async fn create_item(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.post("/items")
        .header("content-type", "application/json")
        .body(r#"{"name":"widget","price":12}"#)
        .send()
        .await?
        .expect_status(201)?;
    Ok(())
}

#[loadbench::scenario(concurrency = 20, duration = "3s")]
async fn get_item(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    // Each virtual user reads its own item, so the server sees a spread of ids.
    let path = format!("/items/{}", ctx.user() + 1);
    let response = ctx.get(&path).send().await?.expect_status(200)?;
    if !response.text()?.contains("\"id\"") {
        return Err(loadbench::Error::msg("item without an id"));
    }
    Ok(())
}

fn main() -> std::process::ExitCode {
    loadbench::Harness::new().default_target(loadbench_examples::start_demo_server).run()
}
