// The shape is right, so the macro accepts it; rustc's type error points at the function name.
#[loadbench::scenario(count = 1)]
async fn hello(ctx: &mut loadbench::Ctx) -> Result<(), String> {
    let _ = ctx;
    Ok(())
}

fn main() {}
