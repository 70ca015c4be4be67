//! The pipeline against a raw server on 127.0.0.1 that shows what the wire carries.

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Method};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::LocalSet;

use super::*;
use crate::http::wire::shared::Reply;

/// A request as a user's `Ctx` holds it.
struct Req {
    wire: Vec<u8>,
    method: Method,
    headers: HeaderMap,
    body: Bytes,
}

impl Req {
    fn new(method: Method, path: &str) -> Req {
        let mut wire = format!("{method} {path} HTTP/1.1\r\nhost: x\r\n").into_bytes();
        if method == Method::POST {
            wire.extend_from_slice(b"content-length: 0\r\n");
        }
        wire.extend_from_slice(b"\r\n");
        Req { wire, method, headers: HeaderMap::new(), body: Bytes::new() }
    }

    fn outgoing(&self) -> Outgoing<'_> {
        Outgoing {
            wire: &self.wire,
            method: &self.method,
            path: "/",
            headers: &self.headers,
            body: &self.body,
            policy: BodyPolicy::Keep(1 << 20),
        }
    }
}

async fn start(depth: u32) -> (Pipeline, TcpStream) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (opened, accepted) = tokio::join!(Stream::open(addr, None), listener.accept());
    (Pipeline::start(opened.unwrap().0, depth), accepted.unwrap().0)
}

/// Reads until `count` request heads have arrived; returns what was read.
async fn read_requests(server: &mut TcpStream, count: usize) -> String {
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    while String::from_utf8_lossy(&seen).matches("\r\n\r\n").count() < count {
        let n = server.read(&mut buf).await.unwrap();
        assert!(n > 0, "the client closed after {:?}", String::from_utf8_lossy(&seen));
        seen.extend_from_slice(&buf[..n]);
    }
    String::from_utf8(seen).unwrap()
}

/// Sends `bytes` in small pieces, so that responses straddle the client's reads.
async fn send_in_pieces(server: &mut TcpStream, bytes: &[u8]) {
    for piece in bytes.chunks(5) {
        server.write_all(piece).await.unwrap();
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

/// Closes the way a server that is done with a connection does: a FIN, then what the client
/// still sends is read and dropped (closing with unread bytes would reset the connection and
/// could destroy the responses already sent).
async fn close(mut server: TcpStream) {
    server.shutdown().await.unwrap();
    let mut buf = [0u8; 1024];
    while matches!(server.read(&mut buf).await, Ok(n) if n > 0) {}
}

fn ok(len: usize, body: &str) -> String {
    assert_eq!(len, body.len());
    format!("HTTP/1.1 200 OK\r\ncontent-length: {len}\r\n\r\n{body}")
}

fn body(result: Result<Reply, Failure>) -> String {
    String::from_utf8(result.unwrap().response.bytes().to_vec()).unwrap()
}

fn failure(result: Result<Reply, Failure>) -> Failure {
    match result {
        Ok(reply) => panic!("answered {}", reply.response.status()),
        Err(failure) => failure,
    }
}

/// Awaits every future, in any order, and returns their outputs in order.
async fn join_all<F: Future + Unpin>(futures: Vec<F>) -> Vec<F::Output> {
    let mut futures: Vec<(F, Option<F::Output>)> = futures.into_iter().map(|f| (f, None)).collect();
    std::future::poll_fn(|cx| {
        for (future, out) in &mut futures {
            if out.is_none()
                && let Poll::Ready(done) = Pin::new(future).poll(cx)
            {
                *out = Some(done);
            }
        }
        if futures.iter().all(|(_, out)| out.is_some()) { Poll::Ready(()) } else { Poll::Pending }
    })
    .await;
    futures.into_iter().filter_map(|(_, out)| out).collect()
}

fn local<F: Future>(test: F) -> F::Output {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    LocalSet::new().block_on(&runtime, test)
}

#[test]
fn responses_are_matched_in_order_across_reads() {
    local(async {
        let (pipeline, mut server) = start(8).await;
        let reqs = [
            Req::new(Method::GET, "/1"),
            Req::new(Method::HEAD, "/2"),
            Req::new(Method::POST, "/3"),
            Req::new(Method::GET, "/4"),
            Req::new(Method::GET, "/5"),
        ];
        let serve = async {
            let seen = read_requests(&mut server, 5).await;
            let paths: Vec<&str> =
                seen.lines().filter(|l| l.ends_with("HTTP/1.1")).filter_map(|l| l.split(' ').nth(1)).collect();
            assert_eq!(paths, ["/1", "/2", "/3", "/4", "/5"], "written in the order queued");
            let mut wire = ok(3, "one");
            // HEAD: a length, no body.
            wire += "HTTP/1.1 200 OK\r\ncontent-length: 40\r\n\r\n";
            wire += "HTTP/1.1 100 Continue\r\n\r\n";
            wire += &ok(5, "three");
            wire += "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nfo\r\n2\r\nur\r\n0\r\n\r\n";
            wire += &ok(4, "five");
            send_in_pieces(&mut server, wire.as_bytes()).await;
            server
        };
        let (r1, r2, r3, r4, r5, _server) = tokio::join!(
            pipeline.exchange(&reqs[0].outgoing(), false),
            pipeline.exchange(&reqs[1].outgoing(), false),
            pipeline.exchange(&reqs[2].outgoing(), false),
            pipeline.exchange(&reqs[3].outgoing(), false),
            pipeline.exchange(&reqs[4].outgoing(), false),
            serve,
        );
        assert_eq!([body(r1), body(r2), body(r3), body(r4), body(r5)], ["one", "", "three", "four", "five"]);
        assert!(pipeline.is_open());
    });
}

#[test]
fn queued_requests_go_out_in_one_write_up_to_the_depth() {
    local(async {
        let (pipeline, mut server) = start(4).await;
        let reqs: Vec<Req> = (0..6).map(|i| Req::new(Method::GET, &format!("/{i}"))).collect();
        let exchanges: Vec<_> = reqs.iter().map(|r| pipeline.exchange(&r.outgoing(), false)).collect();
        let serve = async {
            let first = read_requests(&mut server, 4).await;
            // Nothing beyond the depth until a response frees room.
            tokio::time::sleep(Duration::from_millis(50)).await;
            let mut more = [0u8; 1024];
            let early = tokio::time::timeout(Duration::from_millis(20), server.read(&mut more)).await;
            assert!(early.is_err(), "a fifth request was written with four unanswered");
            assert_eq!(first.matches("\r\n\r\n").count(), 4);
            let wire = ok(1, "a").repeat(2);
            server.write_all(wire.as_bytes()).await.unwrap();
            read_requests(&mut server, 2).await;
            server.write_all(ok(1, "a").repeat(4).as_bytes()).await.unwrap();
            server
        };
        let (results, _server) = tokio::join!(join_all(exchanges), serve);
        assert!(results.into_iter().all(|r| body(r) == "a"));
        assert_eq!(pipeline.table.borrow().writes, 2, "four requests in the first write, two in the second");
    });
}

#[test]
fn a_close_mid_pipeline_retries_what_may_be_sent_again() {
    local(async {
        let (pipeline, mut server) = start(3).await;
        let reqs = [
            Req::new(Method::GET, "/1"),
            Req::new(Method::GET, "/2"),
            Req::new(Method::POST, "/3"),
            Req::new(Method::POST, "/4"),
        ];
        let serve = async {
            read_requests(&mut server, 3).await;
            server.write_all(ok(3, "one").as_bytes()).await.unwrap();
            // The fourth, written once the first is answered.
            read_requests(&mut server, 1).await;
            close(server).await;
        };
        let (r1, r2, r3, r4, ()) = tokio::join!(
            pipeline.exchange(&reqs[0].outgoing(), false),
            pipeline.exchange(&reqs[1].outgoing(), false),
            pipeline.exchange(&reqs[2].outgoing(), false),
            pipeline.exchange(&reqs[3].outgoing(), false),
            serve,
        );
        assert_eq!(body(r1), "one");
        let get = failure(r2);
        assert!(get.retry, "{}", get.error);
        assert!(!get.unsent, "it was written");
        for post in [failure(r3), failure(r4)] {
            assert!(!post.retry);
            assert!(!post.unsent, "it was written");
            assert_eq!(post.error.kind(), ErrorKind::Io);
            assert_eq!(
                post.error.to_string(),
                "the server closed the pipelined connection before answering; POST is not idempotent, so it was not sent again"
            );
        }
        assert!(!pipeline.is_open());
    });
}

#[test]
fn connection_close_after_k_responses_fails_the_rest_once() {
    local(async {
        let (pipeline, mut server) = start(2).await;
        let reqs: Vec<Req> = (0..5).map(|i| Req::new(Method::GET, &format!("/{i}"))).collect();
        let exchanges: Vec<_> = reqs.iter().map(|r| pipeline.exchange(&r.outgoing(), false)).collect();
        let serve = async {
            read_requests(&mut server, 2).await;
            server.write_all(ok(1, "a").as_bytes()).await.unwrap();
            read_requests(&mut server, 1).await;
            let last = "HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 1\r\n\r\nb";
            server.write_all(last.as_bytes()).await.unwrap();
            close(server).await;
        };
        let (results, ()) = tokio::join!(join_all(exchanges), serve);
        let mut results = results.into_iter();
        assert_eq!(body(results.next().unwrap()), "a");
        assert_eq!(body(results.next().unwrap()), "b");
        let failed: Vec<(bool, bool)> = results.map(failure).map(|f| (f.retry, f.unsent)).collect();
        // The third was written (on the connection the server then closed), the last two not.
        assert_eq!(failed, [(true, false), (true, true), (true, true)]);
        assert!(!pipeline.is_open());
        // A closed pipeline refuses what comes next, as unsent.
        let refused = failure(pipeline.exchange(&reqs[0].outgoing(), false).await);
        assert!(refused.retry && refused.unsent);
    });
}

#[test]
fn a_timed_out_request_leaves_the_others_their_responses() {
    local(async {
        let (pipeline, mut server) = start(4).await;
        let reqs: Vec<Req> = (0..3).map(|i| Req::new(Method::GET, &format!("/{i}"))).collect();
        // The first request's user gives up before its response comes.
        let first = tokio::time::timeout(Duration::from_millis(50), pipeline.exchange(&reqs[0].outgoing(), false));
        let serve = async {
            read_requests(&mut server, 1).await;
            tokio::time::sleep(Duration::from_millis(100)).await;
            read_requests(&mut server, 2).await;
            let wire = ok(5, "first") + &ok(6, "second") + &ok(5, "third");
            send_in_pieces(&mut server, wire.as_bytes()).await;
            server
        };
        let later = async {
            tokio::time::sleep(Duration::from_millis(20)).await;
            tokio::join!(pipeline.exchange(&reqs[1].outgoing(), false), pipeline.exchange(&reqs[2].outgoing(), false))
        };
        let (first, (second, third), mut server) = tokio::join!(first, later, serve);
        assert!(first.is_err(), "the first timed out");
        assert_eq!((body(second), body(third)), ("second".to_owned(), "third".to_owned()));
        assert!(pipeline.is_open());
        // The connection still works.
        let again = pipeline.exchange(&reqs[0].outgoing(), false);
        let serve = async {
            read_requests(&mut server, 1).await;
            server.write_all(ok(2, "ok").as_bytes()).await.unwrap();
        };
        assert_eq!(body(tokio::join!(again, serve).0), "ok");
        // When every request waiting on it has timed out, it is closed.
        let stuck = tokio::time::timeout(Duration::from_millis(20), pipeline.exchange(&reqs[0].outgoing(), false));
        assert!(stuck.await.is_err());
        assert!(!pipeline.is_open());
    });
}

#[test]
fn a_malformed_response_ends_the_connection() {
    local(async {
        let (pipeline, mut server) = start(4).await;
        let reqs = [Req::new(Method::GET, "/1"), Req::new(Method::GET, "/2"), Req::new(Method::POST, "/3")];
        let serve = async {
            read_requests(&mut server, 3).await;
            let wire = ok(1, "a") + "HTTP/1.1 200 OK\r\ncontent-length: nope\r\n\r\n";
            server.write_all(wire.as_bytes()).await.unwrap();
            server
        };
        let (r1, r2, r3, _server) = tokio::join!(
            pipeline.exchange(&reqs[0].outgoing(), false),
            pipeline.exchange(&reqs[1].outgoing(), false),
            pipeline.exchange(&reqs[2].outgoing(), false),
            serve,
        );
        assert_eq!(body(r1), "a");
        let malformed = failure(r2);
        assert!(!malformed.retry);
        assert!(malformed.error.to_string().contains("Content-Length"), "{}", malformed.error);
        let behind = failure(r3);
        assert!(!behind.retry && behind.error.to_string().contains("not idempotent"), "{}", behind.error);
        assert!(!pipeline.is_open());
    });
}

#[test]
fn an_idle_connection_the_server_closes_takes_no_more_requests() {
    local(async {
        let (pipeline, server) = start(2).await;
        close(server).await;
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!pipeline.is_open());
    });
}

#[test]
fn a_request_sent_again_goes_ahead_of_first_tries_not_yet_written() {
    local(async {
        let (pipeline, mut server) = start(1).await;
        let reqs = [Req::new(Method::GET, "/first"), Req::new(Method::GET, "/fresh"), Req::new(Method::GET, "/again")];
        let first = pipeline.exchange(&reqs[0].outgoing(), false);
        // The driver writes it; the next two wait for room.
        tokio::time::sleep(Duration::from_millis(20)).await;
        let fresh = pipeline.exchange(&reqs[1].outgoing(), false);
        let again = pipeline.exchange(&reqs[2].outgoing(), true);
        let serve = async {
            let mut order = Vec::new();
            for _ in 0..3 {
                let seen = read_requests(&mut server, 1).await;
                order.push(seen.split(' ').nth(1).unwrap().to_owned());
                server.write_all(ok(1, "a").as_bytes()).await.unwrap();
            }
            order
        };
        let (r1, r2, r3, order) = tokio::join!(first, fresh, again, serve);
        assert_eq!(order, ["/first", "/again", "/fresh"]);
        assert!([r1, r2, r3].into_iter().all(|r| body(r) == "a"));
    });
}
