//! The gRPC example's embedded server (tonic's, over plain HTTP/2), and the messages and client
//! call its scenario uses, all written by hand where protoc's generated code would be: the
//! messages are prost derives, the server's routes a `tower_service::Service` that hands the one
//! method to `tonic::server::Grpc` with a prost codec, the client call `tonic::client::Grpc`'s.
//!
//! The service, `loadbench.example.Catalog`, has one unary method, `Lookup`: a [`LookupRequest`]
//! with a key, answered with a [`LookupReply`] whose value is `value of KEY`.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};

use tonic::body::Body;
use tonic::server::{Grpc, UnaryService};
use tonic::transport::Channel;
use tonic::transport::server::TcpIncoming;
use tonic::{Request, Response, Status};
use tonic_prost::ProstCodec;

/// The path of the `Lookup` method.
pub const LOOKUP_PATH: &str = "/loadbench.example.Catalog/Lookup";

/// `Lookup`'s request.
#[derive(Clone, PartialEq, prost::Message)]
pub struct LookupRequest {
    /// The key looked up.
    #[prost(string, tag = "1")]
    pub key: String,
}

/// `Lookup`'s reply.
#[derive(Clone, PartialEq, prost::Message)]
pub struct LookupReply {
    /// `value of KEY`.
    #[prost(string, tag = "1")]
    pub value: String,
}

/// Calls `Lookup` on `channel` (a clone of a user's channel: clones share its connection).
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let channel = tonic::transport::Endpoint::from_shared("http://127.0.0.1:50051")?.connect_lazy();
/// let reply = loadbench_examples::grpc::lookup(channel, "user1".to_string()).await?;
/// assert_eq!(reply.value, "value of user1");
/// # Ok(())
/// # }
/// ```
pub async fn lookup(channel: Channel, key: String) -> Result<LookupReply, Status> {
    let mut client = tonic::client::Grpc::new(channel);
    client.ready().await.map_err(|e| Status::unavailable(format!("the channel is not ready: {e}")))?;
    let path = http::uri::PathAndQuery::from_static(LOOKUP_PATH);
    let reply = client.unary(Request::new(LookupRequest { key }), path, ProstCodec::default()).await?;
    Ok(reply.into_inner())
}

/// Starts the gRPC server on 127.0.0.1 and an ephemeral port, on a background thread that lives
/// as long as the process, and returns its URL (`http://127.0.0.1:PORT`), which the scenario's
/// channel connects to.
pub fn start_grpc_server() -> std::io::Result<String> {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let listener = runtime.block_on(crate::listen())?;
    let addr: SocketAddr = listener.local_addr()?;
    std::thread::Builder::new().name("grpc-server".into()).spawn(move || {
        runtime.block_on(async move {
            let incoming = TcpIncoming::from(listener).with_nodelay(Some(true));
            // The server ends only with the process; an error from it leaves the scenario's
            // calls failing, which the run reports.
            let _ = tonic::transport::Server::builder().serve_with_incoming(Routes, incoming).await;
        })
    })?;
    Ok(format!("http://{addr}"))
}

/// The service's routes: what tonic's generated server does, by hand.
#[derive(Debug, Clone, Copy)]
struct Routes;

impl tower_service::Service<http::Request<Body>> for Routes {
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<http::Response<Body>, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        Box::pin(async move {
            let response = match request.uri().path() {
                LOOKUP_PATH => Grpc::new(ProstCodec::default()).unary(Lookup, request).await,
                other => Status::unimplemented(format!("no method {other}")).into_http(),
            };
            Ok(response)
        })
    }
}

struct Lookup;

impl UnaryService<LookupRequest> for Lookup {
    type Response = LookupReply;
    type Future = std::future::Ready<Result<Response<LookupReply>, Status>>;

    fn call(&mut self, request: Request<LookupRequest>) -> Self::Future {
        let key = request.into_inner().key;
        std::future::ready(Ok(Response::new(LookupReply { value: format!("value of {key}") })))
    }
}
