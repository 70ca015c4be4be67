#[loadbench::scenario(concurrency = 10, count = 100, concurrency = 20)]
async fn hello(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?;
    Ok(())
}

fn main() {}
