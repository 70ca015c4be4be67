#[loadbench::scenario(count = 1)]
async fn hello(ctx: &mut loadbench::Ctx, path: &str) -> loadbench::Result<()> {
    ctx.get(path).send().await?;
    Ok(())
}

fn main() {}
