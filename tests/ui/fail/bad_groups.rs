#[loadbench::scenario(count = 1, group = "")]
async fn empty(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?;
    Ok(())
}

#[loadbench::scenario(count = 1, group = shop)]
async fn not_a_string(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?;
    Ok(())
}

fn main() {}
