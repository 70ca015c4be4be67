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
    server_at("http", serve)
}

/// [`server`] for a URL of `scheme` (the TLS tests serve `https`).
pub(super) fn server_at(scheme: &str, serve: impl Fn(TcpStream) + Send + Sync + Clone + 'static) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("{scheme}://{}", listener.local_addr().unwrap());
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

/// Generous for a busy machine, and still far below what a stuck request costs (seconds to
/// forever before deadlines held; 5 s for the servers below that stall).
const MARGIN: Duration = Duration::from_secs(2);

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

#[tokio::test]
async fn an_endless_chunked_body_times_out_when_discarded() {
    let url = server(|mut s| {
        read_request(&mut s);
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n");
        let chunk = [b"4000\r\n".as_slice(), &[b'x'; 0x4000], b"\r\n"].concat().repeat(16);
        while s.write_all(&chunk).is_ok() {}
    });
    let timeout = Duration::from_millis(300);
    let mut ctx = ctx(&url, timeout);
    let began = Instant::now();
    let err = ctx.get("/").discard_body().send().await.expect_err("the body never ends");
    let took = began.elapsed();
    assert_eq!(err.kind(), ErrorKind::Timeout, "{err}");
    assert!(took < timeout + MARGIN, "the request took {took:?}");
    assert!(ctx.counters.bytes_received == 0, "an unfinished response counts no bytes");
}

/// A server whose every response is `head` followed by `body_bytes` of `x` (forever when
/// `None`); it counts the connections it accepted.
fn body_server(head: &'static str, body_bytes: Option<usize>) -> String {
    server(move |mut s| {
        while read_request(&mut s) {
            if s.write_all(head.as_bytes()).is_err() {
                return;
            }
            let block = [b'x'; 64 * 1024];
            let mut left = body_bytes.unwrap_or(usize::MAX);
            while left > 0 {
                let n = left.min(block.len());
                if s.write_all(&block[..n]).is_err() {
                    return;
                }
                left -= n;
            }
            if body_bytes.is_none() {
                return;
            }
        }
    })
}

#[tokio::test]
async fn a_content_length_above_the_limit_fails_at_once() {
    // Announces 2 GiB and sends nothing of it: the answer must not wait for the body.
    let url = server(|mut s| {
        read_request(&mut s);
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2147483648\r\n\r\n");
        std::thread::sleep(Duration::from_secs(5));
    });
    let mut ctx = ctx(&url, Duration::from_secs(30));
    let began = Instant::now();
    let err = ctx.get("/").send().await.expect_err("2 GiB is above the default limit");
    assert_eq!(err.kind(), ErrorKind::BodyTooLarge, "{err}");
    assert!(err.to_string().contains("16777216 bytes"), "{err}");
    assert!(began.elapsed() < MARGIN, "took {:?}", began.elapsed());
    assert_eq!(ctx.counters.bytes_received, 0);
}

#[tokio::test]
async fn growing_bodies_fail_as_they_pass_the_limit() {
    let chunked = body_server("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n10000\r\n", None);
    let until_close = body_server("HTTP/1.1 200 OK\r\n\r\n", None);
    for url in [chunked, until_close] {
        let mut ctx = ctx(&url, Duration::from_secs(30));
        let began = Instant::now();
        let err = ctx.get("/").max_body(1000).send().await.expect_err("the body passes 1000 bytes");
        assert_eq!(err.kind(), ErrorKind::BodyTooLarge, "{url}: {err}");
        assert!(err.to_string().contains("limit of 1000 bytes"), "{err}");
        assert!(began.elapsed() < MARGIN, "took {:?}", began.elapsed());
    }
}

#[tokio::test]
async fn the_scenario_limit_applies_and_a_request_may_raise_it() {
    let url = body_server("HTTP/1.1 200 OK\r\ncontent-length: 3000\r\n\r\n", Some(3000));
    let mut ctx = ctx(&url, Duration::from_secs(30)).with_max_body(2999);
    let err = ctx.get("/").send().await.expect_err("3000 bytes are above 2999");
    assert_eq!(err.kind(), ErrorKind::BodyTooLarge, "{err}");
    let response = ctx.get("/").max_body(3000).send().await.unwrap();
    assert_eq!(response.bytes().len(), 3000);
    assert_eq!(ctx.counters.bytes_received, 3000);
}

#[tokio::test]
async fn a_response_tells_its_head_from_its_body_whatever_frames_the_body() {
    // Each body follows its head in one buffer: the headers must come from the head alone, the
    // body from what follows it, and the two must not be told apart by one byte off.
    let replies: [&'static [u8]; 3] = [
        b"HTTP/1.1 200 OK\r\nx-kind: fixed\r\ncontent-length: 5\r\n\r\nhello",
        b"HTTP/1.1 200 OK\r\nx-kind: chunked\r\ntransfer-encoding: chunked\r\n\r\n2\r\nhe\r\n3\r\nllo\r\n0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nx-kind: close\r\n\r\nhello",
    ];
    for (reply, kind) in replies.into_iter().zip(["fixed", "chunked", "close"]) {
        let url = server(move |mut s| {
            read_request(&mut s);
            // In two writes, so that the body arrives apart from its head.
            let at = reply.len() - 3;
            let _ = s.write_all(&reply[..at]);
            std::thread::sleep(Duration::from_millis(20));
            let _ = s.write_all(&reply[at..]);
        });
        let mut ctx = ctx(&url, Duration::from_secs(10));
        let response = ctx.get("/").send().await.unwrap();
        assert_eq!(response.bytes(), b"hello", "{kind}");
        assert_eq!(response.text().unwrap(), "hello", "{kind}");
        assert_eq!(response.headers().get("x-kind").unwrap(), kind);
        assert!(response.headers().get("content-length").is_some() != (kind != "fixed"), "{kind}");
        assert_eq!(response.clone().into_bytes(), "hello", "{kind}");
        assert_eq!(ctx.counters.bytes_received, 5, "{kind}");
    }
}

#[tokio::test]
async fn discarded_bodies_are_counted_not_kept() {
    const LEN: usize = 40 * 1024 * 1024 + 7;
    let fixed = body_server("HTTP/1.1 200 OK\r\ncontent-length: 41943047\r\n\r\n", Some(LEN));
    let mut ctx = ctx(&fixed, Duration::from_secs(30));
    for round in 1..=2u64 {
        let response = ctx.get("/").discard_body().send().await.unwrap();
        assert!(response.bytes().is_empty());
        assert_eq!(ctx.counters.bytes_received, round * LEN as u64);
    }
    assert_eq!(ctx.counters.connections, 1, "the connection is kept alive across discarded bodies");
    let until_close = server(|mut s| {
        read_request(&mut s);
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\n\r\n");
        let _ = s.write_all(&vec![b'x'; LEN]);
    });
    let mut ctx = self::ctx(&until_close, Duration::from_secs(30));
    assert!(ctx.get("/").discard_body().send().await.unwrap().bytes().is_empty());
    assert_eq!(ctx.counters.bytes_received, LEN as u64);
}

/// How a server drops a keep-alive connection just as the next request arrives.
#[derive(Clone, Copy, Debug)]
enum Hangup {
    /// Reads the request, then closes: the client sees the end of the stream.
    Close,
    /// Closes with the request unread, which makes the kernel send a reset.
    Reset,
}

/// Answers the first request of each connection and drops the connection at its second; counts
/// the connections and the requests answered.
fn racing_server(drop: Hangup) -> (String, std::sync::Arc<std::sync::atomic::AtomicU64>) {
    use std::sync::atomic::{AtomicU64, Ordering};
    let answered = std::sync::Arc::new(AtomicU64::new(0));
    let counter = std::sync::Arc::clone(&answered);
    let url = server(move |mut s| {
        if !read_request(&mut s) {
            return;
        }
        // Counted before the answer leaves, so that the client never sees it uncounted.
        counter.fetch_add(1, Ordering::SeqCst);
        if s.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok").is_err() {
            return;
        }
        match drop {
            Hangup::Close => {
                read_request(&mut s);
            }
            Hangup::Reset => {
                // Wait for the request to arrive, and leave it unread.
                let mut probe = [0u8; 1];
                let _ = s.peek(&mut probe);
            }
        }
    });
    (url, answered)
}

#[tokio::test]
async fn an_idempotent_request_on_a_connection_closed_under_it_is_retried_once() {
    use std::sync::atomic::Ordering;
    for drop in [Hangup::Close, Hangup::Reset] {
        let (url, answered) = racing_server(drop);
        let mut ctx = ctx(&url, Duration::from_secs(10));
        for method in [http::Method::GET, http::Method::PUT, http::Method::DELETE] {
            let response = ctx.request(method.clone(), "/").send().await;
            assert_eq!(response.map(|r| r.status()).ok(), Some(http::StatusCode::OK), "{drop:?} {method}");
        }
        // The first request opens a connection; each later one meets a dropped connection and
        // is sent again on a new one.
        assert_eq!((ctx.counters.retries, ctx.counters.connections), (2, 3), "{drop:?}");
        assert_eq!(answered.load(Ordering::SeqCst), 3, "{drop:?}");
    }
}

#[tokio::test]
async fn a_post_and_a_request_on_a_fresh_connection_are_not_retried() {
    for drop in [Hangup::Close, Hangup::Reset] {
        let (url, _) = racing_server(drop);
        let mut ctx = ctx(&url, Duration::from_secs(10));
        ctx.get("/").send().await.unwrap();
        let err = ctx.post("/").body("x").send().await.expect_err("the connection was dropped under it");
        assert_eq!(err.kind(), ErrorKind::Io, "{drop:?}: {err}");
        assert_eq!(ctx.counters.retries, 0, "{drop:?}");
    }
    // A server that drops every connection at its first request: nothing to retry on.
    let url = server(|mut s| {
        read_request(&mut s);
    });
    let mut ctx = ctx(&url, Duration::from_secs(10));
    let err = ctx.get("/").send().await.expect_err("the server never answers");
    assert_eq!((err.kind(), ctx.counters.retries, ctx.counters.connections), (ErrorKind::Io, 0, 1), "{err}");
}

#[tokio::test]
async fn an_io_error_says_what_the_system_said() {
    let url = server(|s| {
        let mut probe = [0u8; 1];
        let _ = s.peek(&mut probe);
    });
    let mut ctx = ctx(&url, Duration::from_secs(10));
    let err = ctx.get("/").send().await.expect_err("the server resets the connection");
    assert_eq!(err.kind(), ErrorKind::Io, "{err}");
    assert_eq!(err.to_string(), "request failed: reading the response failed: Connection reset by peer (os error 104)");
}

/// A port where nothing listens refuses the connection, and the error says so, on a user's own
/// connection and on a shared one alike (what lets a run give up on it); a server that answers
/// is no refusal, even with an error.
#[tokio::test]
async fn a_closed_port_is_a_refused_connection() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let err = ctx(&url, MARGIN).get("/").send().await.expect_err("nothing listens");
    assert!((err.kind(), err.is_refused()) == (ErrorKind::Connect, true), "{err}");
    let target = Rc::new(Target::resolve(&url).unwrap());
    let transport =
        crate::config::Transport { connections: Some(1), pipeline: Some(4), protocol: crate::config::Protocol::Http1 };
    let lane = super::Lane::for_worker(&target, transport, 1, &Rc::default()).pop();
    let mut shared = Ctx::new(target, MARGIN, 0, None).with_lane(lane);
    let err = shared.get("/").send().await.expect_err("nothing listens");
    assert!((err.kind(), err.is_refused()) == (ErrorKind::Connect, true), "{err}");
    let closes = server(|mut s| {
        read_request(&mut s);
    });
    let err = ctx(&closes, MARGIN).get("/").send().await.expect_err("closed without a response");
    assert!(!err.is_refused(), "{err}");
}

/// A head that does not parse, one past 64 KiB and one with more than 100 headers: the server
/// broke HTTP/1.1, a `protocol` error, not an `io` one, on a user's connection and pipelined.
#[tokio::test]
async fn a_head_that_breaks_http1_is_a_protocol_error() {
    let mut many = "HTTP/1.1 200 OK\r\ncontent-length: 0\r\n".to_owned();
    for i in 0..101 {
        many.push_str(&format!("x-{i}: 1\r\n"));
    }
    many.push_str("\r\n");
    let huge = format!("HTTP/1.1 200 OK\r\nx: {}\r\ncontent-length: 0\r\n\r\n", "a".repeat(70_000));
    for head in ["SSH-2.0-OpenSSH_9.6\r\n\r\n".to_owned(), huge, many] {
        let reply = head.clone();
        let url = server(move |mut s| {
            if read_request(&mut s) {
                let _ = s.write_all(reply.as_bytes());
            }
        });
        let mut ctx = ctx(&url, Duration::from_secs(10));
        let err = ctx.get("/").send().await.expect_err("a broken head was taken");
        assert_eq!(err.kind(), ErrorKind::Protocol, "{}: {err}", &head[..20]);
    }
}
