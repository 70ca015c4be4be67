//! A gRPC service under load: 20,000 unary calls from 20 users, each user on its own tonic
//! channel (one HTTP/2 connection), every call a row of its own, `grpc lookup`.
//!
//! Runs against the embedded gRPC server (`examples/src/grpc.rs`) unless `--target URL` (or
//! `LOADBENCH_TARGET`) names another server with the same service.

use loadbench_examples::grpc;
use tonic::transport::{Channel, Endpoint};

/// This user's channel, made on its first iteration and kept in its user data: a channel is one
/// HTTP/2 connection, and cheap to clone.
fn channel(ctx: &mut loadbench::Ctx) -> loadbench::Result<Channel> {
    if let Some(channel) = ctx.user_data::<Option<Channel>>() {
        return Ok(channel.clone());
    }
    let endpoint = Endpoint::from_shared(ctx.target().to_string())
        .map_err(|e| loadbench::Error::msg(format!("the target is not a gRPC endpoint: {e}")))?;
    let channel = endpoint.connect_lazy();
    *ctx.user_data::<Option<Channel>>() = Some(channel.clone());
    Ok(channel)
}

#[loadbench::scenario(concurrency = 20, count = 20_000, timeout = "10s")]
async fn lookup(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    let channel = channel(ctx)?;
    let key = format!("user{}", ctx.user());
    let expected = format!("value of {key}");
    let reply = ctx.measure("grpc lookup", grpc::lookup(channel, key)).await?;
    ctx.check("the value is the key's", reply.value == expected);
    Ok(())
}

fn main() -> std::process::ExitCode {
    loadbench::Harness::new().default_target(grpc::start_grpc_server).run()
}
