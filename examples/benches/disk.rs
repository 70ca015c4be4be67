//! The Apache Bench bake-off (`ab -n 2000 -c 200`): every request makes the server write a random
//! 108 KB string to a file, read it back and return it, so the server's disk and memory copies
//! are what is measured.

#[loadbench::scenario(concurrency = 200, count = 2_000, timeout = "30s")]
async fn disk_round_trip(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    let response = ctx.get("/disk").send().await?.expect_status(200)?;
    let size = response.bytes().len();
    if size != loadbench_examples::disk::SIZE {
        return Err(loadbench::Error::msg(format!("expected 108 KB back, got {size} bytes")));
    }
    Ok(())
}

fn main() -> std::process::ExitCode {
    loadbench::Harness::new().default_target(loadbench_examples::start_demo_server).run()
}
