#[loadbench::scenario(count = 1, thresholds(p99 == "50ms"))]
async fn equal(_ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    Ok(())
}

#[loadbench::scenario(count = 1, thresholds = "p99 < 50ms")]
async fn not_a_list(_ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    Ok(())
}

fn main() {}
