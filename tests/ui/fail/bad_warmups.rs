#[loadbench::scenario(count = 1, warmup = 0)]
async fn zero(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?;
    Ok(())
}

#[loadbench::scenario(count = 1, warmup = "5 minutes later")]
async fn not_a_time(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?;
    Ok(())
}

#[loadbench::scenario(count = 1, warmup = true)]
async fn neither(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?;
    Ok(())
}

fn main() {}
