#[loadbench::scenario(count = 1)]
async fn hello(ctx: &loadbench::Ctx) -> loadbench::Result<()> {
    let _ = ctx;
    Ok(())
}

fn main() {}
