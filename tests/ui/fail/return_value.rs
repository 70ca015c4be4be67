// A scenario's `Result` holds `()`.
#[loadbench::scenario(count = 1)]
async fn hello(ctx: &mut loadbench::Ctx) -> loadbench::Result<u32> {
    let _ = ctx;
    Ok(1)
}

fn main() {}
