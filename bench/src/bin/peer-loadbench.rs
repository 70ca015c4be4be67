//! loadbench's side of the peer benchmark: the same one-request scenario at the two
//! concurrencies the benchmark compares, each for a fixed time like `wrk -d`. The target comes
//! from `--target` (bench/peers.sh passes the hello server's URL; bench/peers-tls.sh an https://
//! one, with `--cacert`).
//!
//! It is an ordinary `#[scenario]` bench binary, built as a `[[bin]]` rather than a `[[bench]]`
//! only so that `cargo loadbench` in this workspace (which runs the examples) does not pick it up
//! without a server to point it at; peers.sh runs it with `--bench`, as `cargo bench` would.

#[loadbench::scenario(name = "c50", concurrency = 50, duration = "10s")]
#[loadbench::scenario(name = "c1000", concurrency = 1000, duration = "10s")]
// Bounded by count rather than time, so that a run's instruction count divides into a per-request
// figure that does not depend on the machine's speed.
#[loadbench::scenario(name = "count50", concurrency = 50, count = 20_000)]
// The pipelined row's shape (with `--connections 16 --pipeline 16`) at two counts: the difference
// of their counts is the cost of 60,000 requests without the start and the report.
#[loadbench::scenario(name = "count256", concurrency = 256, count = 20_000)]
#[loadbench::scenario(name = "count256x4", concurrency = 256, count = 80_000)]
// The HTTPS benchmark (bench/peers-tls.sh) runs shorter runs, and more rounds of them.
#[loadbench::scenario(name = "c50_5s", concurrency = 50, duration = "5s")]
#[loadbench::scenario(name = "c1000_5s", concurrency = 1000, duration = "5s")]
// TechEmpower's plaintext load (bench/peers-h2.sh): 256 users, which the benchmark runs both on
// their own connections and with `--connections 16 --pipeline 16`; `c1000_5s` with `--http2
// --connections 10` is its HTTP/2 row (h2load's `-c 10 -m 100`). The transport comes from the
// flags, so that one scenario measures both ways of carrying the same users' requests.
#[loadbench::scenario(name = "c256_5s", concurrency = 256, duration = "5s")]
async fn hello(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").send().await?.expect_status(200)?;
    Ok(())
}

// The handshake-heavy shape of the HTTPS benchmark: every request asks the server to close (as
// `wrk -H "Connection: close"` and `oha --disable-keepalive` do), so each user reconnects, and
// makes a TLS handshake, per request.
#[loadbench::scenario(name = "close50", concurrency = 50, duration = "5s")]
async fn hello_close(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    ctx.get("/").header("connection", "close").send().await?.expect_status(200)?;
    Ok(())
}

loadbench::main!();
