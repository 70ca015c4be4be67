//! A minimal hyper 1.x server answering `<p>hello, world!</p>` as text/html: the server of the
//! peer benchmark. One thread (the benchmark pins it to one core), keep-alive, no logging.
//!
//! Usage: `hello-server [ADDR]` (default 127.0.0.1:8080). Prints `listening on ADDR` when ready.

use std::convert::Infallible;
use std::net::SocketAddr;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpSocket;

const BODY: &[u8] = b"<p>hello, world!</p>";

fn main() -> std::io::Result<()> {
    let addr: SocketAddr = match std::env::args().nth(1) {
        Some(arg) => arg.parse().map_err(|e| std::io::Error::other(format!("bad address `{arg}`: {e}")))?,
        None => SocketAddr::from(([127, 0, 0, 1], 8080)),
    };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(serve(addr))
}

async fn serve(addr: SocketAddr) -> std::io::Result<()> {
    let socket = TcpSocket::new_v4()?;
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    // 1,000 generator connections arrive at once; a short accept queue would drop SYNs.
    let listener = socket.listen(4096)?;
    println!("listening on {}", listener.local_addr()?);
    loop {
        let (stream, _) = listener.accept().await?;
        let _ = stream.set_nodelay(true);
        tokio::spawn(async move {
            let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service_fn(hello)).await;
        });
    }
}

async fn hello(_request: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let mut response = Response::new(Full::new(Bytes::from_static(BODY)));
    response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("text/html"));
    Ok(response)
}
