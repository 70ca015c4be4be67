#[loadbench::scenario(rate = 2000, concurrency = 50, duration = "5s")]
async fn hello(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?;
    Ok(())
}

fn main() {}
