#[loadbench::scenario(stages = ("10s", 100))]
async fn not_a_list(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?;
    Ok(())
}

#[loadbench::scenario(stages = [("10s", 0)])]
async fn never_any_users(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?;
    Ok(())
}

#[loadbench::scenario(stages = [("10s", 100)], concurrency = 10, duration = "10s")]
async fn users_twice(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?;
    Ok(())
}

#[loadbench::scenario(rate_stages = [("10s", 500)], rate = 100, think_time = "1s")]
async fn rates_twice(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?;
    Ok(())
}

fn main() {}
