//! gRPC scenarios with tonic: a channel per user, kept in its user data; a unary call and a
//! server-streaming call per iteration, each measured with `ctx.measure` as a named row, against
//! `loadbench_tests::grpc::GrpcServer`. What the rows count is what the server saw, exactly; a
//! call the server fails is a `custom` failure with the gRPC status in its cause.
//!
//! One run at a time, as in `measure.rs`.

#![allow(clippy::expect_used)]

use std::sync::Mutex;

use http::uri::PathAndQuery;
use loadbench_tests::grpc::{
    GrpcOptions, GrpcServer, Item, LIST_PATH, LOOKUP_PATH, ListRequest, LookupReply, LookupRequest, REFUSED, value_of,
};
use loadbench_tests::request_row as row;
use tonic::transport::{Channel, Endpoint};
use tonic::{Request, Status};
use tonic_prost::ProstCodec;

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Items each `List` call asks for.
const ITEMS: u32 = 5;

/// This user's channel to the target, made on its first iteration and kept in its user data (a
/// channel is one HTTP/2 connection; its clones share it).
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

/// A client on `channel`, ready for one call.
async fn client(channel: Channel) -> Result<tonic::client::Grpc<Channel>, Status> {
    let mut client = tonic::client::Grpc::new(channel);
    client.ready().await.map_err(|e| Status::unavailable(format!("the channel is not ready: {e}")))?;
    Ok(client)
}

/// The unary call.
async fn lookup(channel: Channel, key: String) -> Result<LookupReply, Status> {
    let path = PathAndQuery::from_static(LOOKUP_PATH);
    let reply = client(channel).await?.unary(Request::new(LookupRequest { key }), path, ProstCodec::default()).await?;
    Ok(reply.into_inner())
}

/// The server-streaming call, from the call to the stream's end: the items received.
async fn list(channel: Channel, count: u32) -> Result<Vec<Item>, Status> {
    let path = PathAndQuery::from_static(LIST_PATH);
    let request = Request::new(ListRequest { count });
    let mut stream = client(channel).await?.server_streaming(request, path, ProstCodec::default()).await?.into_inner();
    let mut items = Vec::new();
    while let Some(item) = stream.message().await? {
        items.push(item);
    }
    Ok(items)
}

/// Per iteration: a lookup of this user's key, checked, then a list of `ITEMS` items, counted.
async fn lookup_then_list(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    let channel = channel(ctx)?;
    let key = format!("user{}", ctx.user());
    let expected = value_of(&key);
    let reply = ctx.measure("grpc lookup", lookup(channel.clone(), key)).await?;
    ctx.check("the value is the key's", reply.value == expected);
    let items = ctx.measure("grpc list", list(channel, ITEMS)).await?;
    let indexes: Vec<u32> = items.iter().map(|item| item.index).collect();
    ctx.check("the list is whole and in order", indexes == (0..ITEMS).collect::<Vec<_>>());
    Ok(())
}

#[loadbench::scenario(concurrency = 4, count = 200)]
async fn unary_and_streaming(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    lookup_then_list(ctx).await
}

#[test]
fn unary_and_streaming_calls_are_rows_counted_as_the_server_saw_them() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let server = GrpcServer::start(GrpcOptions::default());
    let report = loadbench_tests::run_scenario("unary_and_streaming", &server.url());

    assert_eq!((report.iterations, report.ok, report.failed), (200, 200, 0), "{:?}", report.errors);
    let lookups = row(&report, "grpc lookup");
    let lists = row(&report, "grpc list");
    assert_eq!((lookups.iterations, lookups.ok, lookups.failed), (200, 200, 0));
    assert_eq!((lists.iterations, lists.ok, lists.failed), (200, 200, 0));
    assert_eq!(server.lookups(), 200, "one lookup per iteration, as the row counts");
    assert_eq!(server.lists(), 200, "one list per iteration, as the row counts");
    assert_eq!(server.streamed(), 200 * u64::from(ITEMS), "every call's items streamed");
    // Every reply was the key's, and every stream whole: the checks passed as often as called.
    let checks: Vec<(&str, u64, u64)> = report.checks.iter().map(|c| (c.name.as_str(), c.passes, c.fails)).collect();
    assert_eq!(checks, [("the value is the key's", 200, 0), ("the list is whole and in order", 200, 0)]);
    for (name, r) in [("grpc lookup", lookups), ("grpc list", lists)] {
        let latency = r.latency_us.as_ref().unwrap_or_else(|| panic!("{name}: a latency histogram"));
        assert!(latency.p50 > 0.0 && latency.p50 <= latency.max, "{name}: {latency:?}");
    }
    // No HTTP request of loadbench's own client went out: the rows are the calls', and a run of
    // measured calls is not taken for one that forgot to send.
    assert_eq!(report.http.responses, 0);
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
}

/// Every 4th lookup the server receives fails with `UNAVAILABLE`.
const FAIL_EVERY: u64 = 4;

#[loadbench::scenario(concurrency = 4, count = 200)]
async fn refused_lookups(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    lookup_then_list(ctx).await
}

#[test]
fn a_failed_unary_call_is_a_custom_failure_with_its_status() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let server = GrpcServer::start(GrpcOptions { fail_lookup_every: Some(FAIL_EVERY) });
    let report = loadbench_tests::run_scenario("refused_lookups", &server.url());

    // One lookup per iteration, in server order: the 4th, 8th, … 200th failed, 50 of 200.
    let lookups = row(&report, "grpc lookup");
    assert_eq!(server.lookups(), 200);
    assert_eq!(server.lookup_failures(), 200 / FAIL_EVERY);
    assert_eq!((lookups.iterations, lookups.ok, lookups.failed), (200, 150, 50));
    assert_eq!(lookups.errors.custom, 50, "a tonic::Status is another client's error: {:?}", lookups.errors);
    assert_eq!(lookups.errors.total(), 50);
    let cause = &lookups.causes.top[0];
    assert_eq!((cause.kind.as_str(), cause.count), ("custom", 50), "{:?}", lookups.causes);
    assert_eq!(lookups.causes.top.len(), 1, "one status, one cause: {:?}", lookups.causes);
    // tonic's words for the status: its code (`UNAVAILABLE`'s description) and its message.
    assert!(cause.message.contains("unavailable"), "the status's code: {cause:?}");
    assert!(cause.message.contains(REFUSED), "the status's message: {cause:?}");
    // A failed lookup failed its iteration through `?`, before its list: lists only for the rest.
    assert_eq!((report.iterations, report.ok, report.failed, report.errors.custom), (200, 150, 50, 50));
    let lists = row(&report, "grpc list");
    assert_eq!((lists.iterations, lists.ok, lists.failed), (150, 150, 0));
    assert_eq!(server.lists(), 150);
    assert_eq!(server.streamed(), 150 * u64::from(ITEMS));
    assert!(lookups.latency_us.is_some(), "the successes' latency");
}
