//! A test server with a known cost, for `--watch`: it holds `--alloc-mb` MiB of memory it has
//! written to (so it is resident), and burns `--spin-ms` ms of CPU on its one thread for every
//! request before answering.
//!
//! Usage: `burn-server [--alloc-mb N] [--spin-ms M]`; binds 127.0.0.1 on an ephemeral port and
//! prints `http://127.0.0.1:PORT` on stdout once it accepts connections.

// A test fixture: a bad argument should stop it loudly.
#![allow(clippy::expect_used)]

use std::io::Write;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::Full;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

fn main() {
    let mut alloc_mb = 0usize;
    let mut spin = Duration::ZERO;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args.next().expect("every option takes a value");
        match arg.as_str() {
            "--alloc-mb" => alloc_mb = value.parse().expect("--alloc-mb N"),
            "--spin-ms" => spin = Duration::from_millis(value.parse().expect("--spin-ms M")),
            other => panic!("unknown option {other}"),
        }
    }
    // Written, not just reserved, so that every page counts in the resident set.
    let ballast = vec![1u8; alloc_mb * 1024 * 1024];
    // Kept alive (and not optimised away) for as long as the server runs.
    std::hint::black_box(&ballast);

    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    runtime.block_on(async move {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let mut stdout = std::io::stdout();
        writeln!(stdout, "http://{}", listener.local_addr().expect("addr")).expect("stdout");
        stdout.flush().expect("stdout");
        loop {
            let Ok((stream, _)) = listener.accept().await else { continue };
            tokio::spawn(async move {
                let service = service_fn(move |_request: Request<hyper::body::Incoming>| async move {
                    let start = Instant::now();
                    while start.elapsed() < spin {
                        std::hint::spin_loop();
                    }
                    Ok::<_, std::convert::Infallible>(Response::new(Full::new(Bytes::from_static(b"burnt"))))
                });
                let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
            });
        }
    });
}
