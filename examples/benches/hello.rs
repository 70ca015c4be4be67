//! The "hello, world" bake-off: 100,000 requests from 1,000 concurrent users.
//!
//! Runs against the embedded demo server unless `--target URL` (or `LOADBENCH_TARGET`) names
//! another server.

#[loadbench::scenario(concurrency = 1000, count = 100_000, timeout = "10s")]
async fn hello(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?.expect_status(200)?;
    Ok(())
}

fn main() -> std::process::ExitCode {
    loadbench::Harness::new().default_target(loadbench_examples::start_demo_server).run()
}
