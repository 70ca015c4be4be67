#[loadbench::scenario(count = 1)]
fn hello(_ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    Ok(())
}

fn main() {}
