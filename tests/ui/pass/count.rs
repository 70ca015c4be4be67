//! The smallest scenario: a count and nothing else.

#[loadbench::scenario(count = 100_000)]
async fn hello(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?.expect_status(200)?;
    Ok(())
}

fn main() {}
