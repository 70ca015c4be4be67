//! A gRPC server on 127.0.0.1 (tonic's, over plain HTTP/2) that counts what it sees, for
//! `tests/grpc.rs`. Its service, `loadbench.test.Catalog`, is written by hand where protoc's
//! generated code would be: the messages are prost derives, the routes a `tower_service::Service`
//! that hands each method to `tonic::server::Grpc` with a prost codec.
//!
//! - `Lookup` (unary): [`LookupRequest`] to [`LookupReply`], whose value is [`value_of`] the key;
//!   every Kth call fails with `UNAVAILABLE` when [`GrpcOptions::fail_lookup_every`] says so.
//! - `List` (server streaming): [`ListRequest`] asking for N items to N [`Item`]s, numbered
//!   from 0.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};

use tokio::net::TcpListener;
use tokio_stream::Stream;
use tonic::body::Body;
use tonic::server::{Grpc, ServerStreamingService, UnaryService};
use tonic::transport::server::TcpIncoming;
use tonic::{Request, Response, Status};
use tonic_prost::ProstCodec;

/// The path of the unary method.
pub const LOOKUP_PATH: &str = "/loadbench.test.Catalog/Lookup";
/// The path of the server-streaming method.
pub const LIST_PATH: &str = "/loadbench.test.Catalog/List";

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
    /// [`value_of`] the request's key.
    #[prost(string, tag = "1")]
    pub value: String,
}

/// `List`'s request.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ListRequest {
    /// How many items the reply streams.
    #[prost(uint32, tag = "1")]
    pub count: u32,
}

/// One message of `List`'s reply stream.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Item {
    /// Its place in the stream, from 0.
    #[prost(uint32, tag = "1")]
    pub index: u32,
}

/// The message of the status a `Lookup` failed on purpose answers with (`UNAVAILABLE`).
pub const REFUSED: &str = "lookup refused on purpose";

/// What `Lookup` answers for `key`.
pub fn value_of(key: &str) -> String {
    format!("value of {key}")
}

/// How a [`GrpcServer`] behaves.
#[derive(Debug, Clone, Default)]
pub struct GrpcOptions {
    /// Every Kth `Lookup` call (counted over the server, from 1) fails with `UNAVAILABLE`.
    pub fail_lookup_every: Option<u64>,
}

#[derive(Debug, Default)]
struct Counters {
    lookups: AtomicU64,
    lookup_failures: AtomicU64,
    lists: AtomicU64,
    streamed: AtomicU64,
}

#[derive(Debug)]
struct Shared {
    options: GrpcOptions,
    counters: Counters,
}

/// A tonic server on 127.0.0.1 and an ephemeral port, on a runtime of its own, stopped when
/// dropped (as [`crate::TestServer`] is).
#[derive(Debug)]
pub struct GrpcServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    runtime: Option<tokio::runtime::Runtime>,
}

impl GrpcServer {
    /// Starts a server with the given options; it accepts connections when this returns.
    pub fn start(options: GrpcOptions) -> GrpcServer {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("gRPC server runtime");
        let listener = runtime.block_on(TcpListener::bind("127.0.0.1:0")).expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local addr");
        let shared = Arc::new(Shared { options, counters: Counters::default() });
        let routes = Routes(Arc::clone(&shared));
        runtime.spawn(async move {
            let served =
                tonic::transport::Server::builder().serve_with_incoming(routes, TcpIncoming::from(listener)).await;
            if let Err(e) = served {
                panic!("the gRPC test server stopped: {e}");
            }
        });
        GrpcServer { addr, shared, runtime: Some(runtime) }
    }

    /// The server's URL, `http://127.0.0.1:PORT`: what a tonic `Endpoint` connects to, and the
    /// target a scenario reads it from.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `Lookup` calls received, failed ones included.
    pub fn lookups(&self) -> u64 {
        self.shared.counters.lookups.load(Ordering::SeqCst)
    }

    /// `Lookup` calls answered with an error status on purpose.
    pub fn lookup_failures(&self) -> u64 {
        self.shared.counters.lookup_failures.load(Ordering::SeqCst)
    }

    /// `List` calls received.
    pub fn lists(&self) -> u64 {
        self.shared.counters.lists.load(Ordering::SeqCst)
    }

    /// Items handed to `List` reply streams, over all calls.
    pub fn streamed(&self) -> u64 {
        self.shared.counters.streamed.load(Ordering::SeqCst)
    }
}

impl Drop for GrpcServer {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// The service's routes: what tonic's generated server does, by hand.
#[derive(Debug, Clone)]
struct Routes(Arc<Shared>);

impl tower_service::Service<http::Request<Body>> for Routes {
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<http::Response<Body>, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        let shared = Arc::clone(&self.0);
        Box::pin(async move {
            let response = match request.uri().path() {
                LOOKUP_PATH => Grpc::new(ProstCodec::default()).unary(Lookup(shared), request).await,
                LIST_PATH => Grpc::new(ProstCodec::default()).server_streaming(List(shared), request).await,
                other => Status::unimplemented(format!("no method {other}")).into_http(),
            };
            Ok(response)
        })
    }
}

struct Lookup(Arc<Shared>);

impl UnaryService<LookupRequest> for Lookup {
    type Response = LookupReply;
    type Future = std::future::Ready<Result<Response<LookupReply>, Status>>;

    fn call(&mut self, request: Request<LookupRequest>) -> Self::Future {
        let n = self.0.counters.lookups.fetch_add(1, Ordering::SeqCst) + 1;
        if self.0.options.fail_lookup_every.is_some_and(|k| n.is_multiple_of(k)) {
            self.0.counters.lookup_failures.fetch_add(1, Ordering::SeqCst);
            // One message for all, so that the client's causes group them as one.
            return std::future::ready(Err(Status::unavailable(REFUSED)));
        }
        let value = value_of(&request.into_inner().key);
        std::future::ready(Ok(Response::new(LookupReply { value })))
    }
}

struct List(Arc<Shared>);

/// `List`'s reply stream, counting each item as it is handed to tonic to send.
type Items = Pin<Box<dyn Stream<Item = Result<Item, Status>> + Send>>;

impl ServerStreamingService<ListRequest> for List {
    type Response = Item;
    type ResponseStream = Items;
    type Future = std::future::Ready<Result<Response<Items>, Status>>;

    fn call(&mut self, request: Request<ListRequest>) -> Self::Future {
        self.0.counters.lists.fetch_add(1, Ordering::SeqCst);
        let shared = Arc::clone(&self.0);
        let count = request.into_inner().count;
        let items = tokio_stream::StreamExt::map(tokio_stream::iter(0..count), move |index| {
            shared.counters.streamed.fetch_add(1, Ordering::SeqCst);
            Ok(Item { index })
        });
        std::future::ready(Ok(Response::new(Box::pin(items) as Items)))
    }
}
