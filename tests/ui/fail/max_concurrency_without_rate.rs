#[loadbench::scenario(max_concurrency = 50, duration = "5s")]
async fn hello(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?;
    Ok(())
}

fn main() {}
