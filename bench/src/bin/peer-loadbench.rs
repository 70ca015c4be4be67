//! loadbench's side of the peer benchmark: the same one-request scenario at the two
//! concurrencies the benchmark compares, each for a fixed time like `wrk -d`. The target comes
//! from `--target` (bench/peers.sh passes the hello server's URL).
//!
//! It is an ordinary `#[scenario]` bench binary, built as a `[[bin]]` rather than a `[[bench]]`
//! only so that `cargo loadbench` in this workspace (which runs the examples) does not pick it up
//! without a server to point it at; peers.sh runs it with `--bench`, as `cargo bench` would.

#[loadbench::scenario(name = "c50", concurrency = 50, duration = "10s")]
#[loadbench::scenario(name = "c1000", concurrency = 1000, duration = "10s")]
// Bounded by count rather than time, so that an instruction count (valgrind --tool=callgrind)
// of a run divides into a per-request figure that does not depend on the machine's speed.
#[loadbench::scenario(name = "count50", concurrency = 50, count = 20_000)]
async fn hello(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?.expect_status(200)?;
    Ok(())
}

loadbench::main!();
