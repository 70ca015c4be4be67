#[loadbench::scenario(count = 1, setup = "log_in", teardown = log_out())]
async fn strings_and_calls(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?;
    Ok(())
}

fn main() {}
