//! The client against small misbehaving servers on 127.0.0.1: deadlines, body caps and
//! keep-alive races, observed as a scenario sees them (through [`Ctx`]).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::rc::Rc;
use std::time::{Duration, Instant};

use super::{Ctx, Target};
use crate::error::ErrorKind;

/// Serves each accepted connection with `serve` on a thread of its own; the server's address.
fn server(serve: impl Fn(TcpStream) + Send + Sync + Clone + 'static) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let serve = serve.clone();
            std::thread::spawn(move || serve(stream));
        }
    });
    url
}

/// Reads one request head (they are small, and come in one piece from this client).
fn read_request(stream: &mut TcpStream) -> bool {
    let mut buf = [0u8; 4096];
    matches!(stream.read(&mut buf), Ok(n) if n > 0)
}

fn ctx(url: &str, timeout: Duration) -> Ctx {
    Ctx::new(Rc::new(Target::resolve(url).unwrap()), timeout, 0, None)
}

/// Generous for a busy machine, and still far below what a stuck request costs.
const MARGIN: Duration = Duration::from_millis(700);

async fn times_out(url: &str) {
    let timeout = Duration::from_millis(300);
    let mut ctx = ctx(url, timeout);
    let began = Instant::now();
    let err = ctx.get("/").send().await.expect_err("the server never completes a response");
    let took = began.elapsed();
    assert_eq!(err.kind(), ErrorKind::Timeout, "{err}");
    assert!(took >= timeout && took < timeout + MARGIN, "the request took {took:?} with a timeout of {timeout:?}");
}

#[tokio::test]
async fn endless_informational_heads_time_out() {
    let url = server(|mut s| {
        read_request(&mut s);
        // In large writes, so that the client always has more to read: its reads, not the
        // server, set the pace, as with a fast server on another core.
        let batch = b"HTTP/1.1 103 Early Hints\r\nlink: </style.css>; rel=preload\r\n\r\n".repeat(4096);
        while s.write_all(&batch).is_ok() {}
    });
    times_out(&url).await;
}

#[tokio::test]
async fn a_trickle_times_out() {
    let url = server(|mut s| {
        read_request(&mut s);
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 100000\r\n\r\n");
        while s.write_all(b"x").is_ok() {
            std::thread::sleep(Duration::from_millis(20));
        }
    });
    times_out(&url).await;
}

#[tokio::test]
async fn silence_times_out() {
    let url = server(|mut s| {
        read_request(&mut s);
        std::thread::sleep(Duration::from_secs(5));
    });
    times_out(&url).await;
}
