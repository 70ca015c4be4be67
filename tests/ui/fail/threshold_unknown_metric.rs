#[loadbench::scenario(count = 1, thresholds(p100 < "50ms", error_rate < 0.01))]
async fn hello(_ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    Ok(())
}

fn main() {}
