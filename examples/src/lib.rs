//! The demo server that the example scenarios run against, embedded in each bench binary so that
//! `cargo loadbench` works on a fresh clone with nothing else started.
//!
//! Routes:
//! - `GET /`: `<p>hello, world!</p>` as `text/html`.
//! - `GET /items/{id}`: a small JSON document.
//! - `POST /items`: echoes the body back with status 201.
//! - anything else: 404.

use std::net::SocketAddr;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpSocket};

/// Starts the demo server on 127.0.0.1 and an ephemeral port, on a background thread that lives
/// as long as the process, and returns its base URL.
///
/// ```no_run
/// let url = loadbench_examples::start_demo_server().unwrap();
/// assert!(url.starts_with("http://127.0.0.1:"));
/// ```
pub fn start_demo_server() -> std::io::Result<String> {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let listener = runtime.block_on(listen())?;
    let addr: SocketAddr = listener.local_addr()?;
    std::thread::Builder::new().name("demo-server".into()).spawn(move || {
        runtime.block_on(async move {
            loop {
                // Accept errors (e.g. out of file descriptors) are transient for a demo server.
                let Ok((stream, _)) = listener.accept().await else { continue };
                let _ = stream.set_nodelay(true);
                tokio::spawn(async move {
                    let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service_fn(route)).await;
                });
            }
        })
    })?;
    Ok(format!("http://{addr}"))
}

/// Binds 127.0.0.1 on an ephemeral port with a deep accept queue: the examples open 1,000
/// connections at once, and with the usual 1,024-entry queue some of those SYNs would be dropped
/// and retried a second later, which shows up as one-second outliers that are the demo server's
/// fault, not the scenario's.
async fn listen() -> std::io::Result<TcpListener> {
    let socket = TcpSocket::new_v4()?;
    socket.bind(SocketAddr::from(([127, 0, 0, 1], 0)))?;
    socket.listen(8192)
}

async fn route(request: Request<Incoming>) -> Result<Response<Full<Bytes>>, hyper::Error> {
    let (status, content_type, body) = match (request.method(), request.uri().path()) {
        (&Method::GET, "/") => (StatusCode::OK, "text/html", Bytes::from_static(b"<p>hello, world!</p>")),
        (&Method::GET, path) if path.starts_with("/items/") => {
            let id = &path["/items/".len()..];
            match id.parse::<u64>() {
                Ok(id) => {
                    (StatusCode::OK, "application/json", Bytes::from(format!(r#"{{"id":{id},"name":"item {id}"}}"#)))
                }
                Err(_) => (StatusCode::BAD_REQUEST, "text/plain", Bytes::from_static(b"id must be a number")),
            }
        }
        (&Method::POST, "/items") => {
            let body = request.into_body().collect().await?.to_bytes();
            (StatusCode::CREATED, "application/json", body)
        }
        _ => (StatusCode::NOT_FOUND, "text/plain", Bytes::from_static(b"not found")),
    };
    let mut response = Response::new(Full::new(body));
    *response.status_mut() = status;
    response.headers_mut().insert(hyper::header::CONTENT_TYPE, hyper::header::HeaderValue::from_static(content_type));
    Ok(response)
}
