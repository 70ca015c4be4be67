#[loadbench::scenario(count = 1, think_time = "2s..1s")]
async fn backwards(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?;
    Ok(())
}

#[loadbench::scenario(count = 1, think_time = "1s..a while")]
async fn not_a_time(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?;
    Ok(())
}

#[loadbench::scenario(rate = 100, count = 1, think_time = "1s")]
async fn with_a_rate(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?;
    Ok(())
}

fn main() {}
