// Each limit must fit its metric; every mistake is reported, pointing at the value.
#[loadbench::scenario(
    count = 1,
    thresholds(p99 < 50, p50 < "fast", error_rate < 2, rps > "many", failed < 0.5)
)]
async fn hello(_ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    Ok(())
}

fn main() {}
