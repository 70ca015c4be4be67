// A key one edit away from a real one is named; an unrelated word gets the list (unknown_attribute.rs).
#[loadbench::scenario(concurency = 10, count = 1, timout = "1s")]
async fn hello(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?;
    Ok(())
}

fn main() {}
