#[loadbench::scenario(count = 1)]
async fn hello() -> loadbench::Result<()> {
    Ok(())
}

fn main() {}
