#[loadbench::scenario(count = 1, concurrency = 10, pipeline = 16)]
async fn pipeline_alone(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?;
    Ok(())
}

#[loadbench::scenario(count = 1, concurrency = 10, connections = 2, pipeline = 4, http2 = true)]
async fn pipeline_over_h2(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?;
    Ok(())
}

#[loadbench::scenario(count = 1, concurrency = 10, connections = 20)]
async fn more_connections_than_users(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?;
    Ok(())
}

#[loadbench::scenario(count = 1, connections = 0)]
async fn no_connections(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?;
    Ok(())
}

#[loadbench::scenario(count = 1, http2 = "yes")]
async fn http2_as_text(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?;
    Ok(())
}

#[loadbench::scenario(count = 1, http2 = true, http3 = true)]
async fn two_protocols(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?;
    Ok(())
}

#[loadbench::scenario(count = 1, concurrency = 10, connections = 2, pipeline = 4, http3 = true)]
async fn pipeline_over_h3(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?;
    Ok(())
}

fn main() {}
