#[loadbench::scenario(count = 1)]
async fn hello<T: Default>(_ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    let _ = T::default();
    Ok(())
}

fn main() {}
