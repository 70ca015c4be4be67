// The error type is plainly not loadbench::Error: the expected signature, on the return type.
#[loadbench::scenario(count = 1)]
async fn hello(ctx: &mut loadbench::Ctx) -> Result<(), String> {
    let _ = ctx;
    Ok(())
}

fn main() {}
