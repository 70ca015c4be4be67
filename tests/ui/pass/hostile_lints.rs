//! The expansion must not trip the lints a careful user crate turns on.

#![forbid(unsafe_code)]
#![deny(warnings)]
#![deny(missing_debug_implementations, unreachable_pub, unused_qualifications)]

#[loadbench::scenario(concurrency = 8, count = 1_000, timeout = "2s")]
async fn strict(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?;
    Ok(())
}

fn main() {}
