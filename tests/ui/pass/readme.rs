//! The scenarios shown in README.md, kept compiling.

#[loadbench::scenario(concurrency = 50, count = 20_000)]
async fn create_item(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.post("/items")
        .header("content-type", "application/json")
        .body(r#"{"name":"widget"}"#)
        .send()
        .await?
        .expect_status(201)?;
    Ok(())
}

#[loadbench::scenario(concurrency = 20, duration = "30s", timeout = "2s")]
async fn get_item(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    let path = format!("/items/{}", ctx.user() + 1); // each virtual user its own item
    let body = ctx.get(&path).send().await?.expect_status(200)?;
    let _id: u64 = body.text()?.trim().parse()?; // any error converts with `?`
    Ok(())
}

#[loadbench::scenario(concurrency = 50, count = 20_000, thresholds(p99 < "50ms", error_rate < 0.01, rps > 1000))]
async fn checkout(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/cart").send().await?.expect_status(200)?;
    Ok(())
}

#[loadbench::scenario(concurrency = 10, count = 100)]
async fn other_methods(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.put("/items/1").body("{}").send().await?.expect_success()?;
    ctx.delete("/items/1").send().await?.expect_success()?;
    let response = ctx.request(loadbench::Method::PATCH, "/items/2").send().await?;
    if response.status() == loadbench::StatusCode::CONFLICT || response.headers().is_empty() {
        return Err(loadbench::Error::msg("conflict"));
    }
    Ok(())
}

// The README's `main` with a default target; never called here, because trybuild runs `main`.
#[allow(dead_code)]
fn readme_main() -> std::process::ExitCode {
    loadbench::Harness::new().default_target(|| Ok("http://127.0.0.1:8080".to_owned())).run()
}

fn main() {}
