#[loadbench::scenario(count = 1, target = "localhost:8080")]
async fn hello(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?;
    Ok(())
}

#[loadbench::scenario(count = 1, target = "ftp://example.com")]
async fn secure(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?;
    Ok(())
}

fn main() {}
