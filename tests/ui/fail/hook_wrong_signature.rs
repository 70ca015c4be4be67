// A setup must be an `async fn(&mut Ctx) -> Result<()>`; rustc points at the name given.
fn log_in(_user: u32) -> bool {
    true
}

#[loadbench::scenario(count = 1, setup = log_in)]
async fn hello(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?;
    Ok(())
}

fn main() {}
