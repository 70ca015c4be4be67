//! The response reader against a real socket: each way a body is framed, a body cut short, and
//! the idle check of a connection the server closed.

use super::*;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};

async fn pair() -> (Http1Connection, TcpStream) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (opened, accepted) = tokio::join!(Stream::open(addr, None), listener.accept());
    (Http1Connection::new(opened.unwrap().0), accepted.unwrap().0)
}

async fn exchange_with(reply: &'static [u8], method: Method) -> (Result<RawResponse, ExchangeError>, bool) {
    let (mut conn, mut server) = pair().await;
    let serve = async move {
        let mut buf = [0u8; 256];
        let _ = server.read(&mut buf).await.unwrap();
        // In pieces, so that framing is exercised across reads.
        for piece in reply.chunks(7) {
            server.write_all(piece).await.unwrap();
            server.flush().await.unwrap();
            tokio::task::yield_now().await;
        }
        // Closing ends a body delimited by the end of the connection.
        drop(server);
    };
    let (result, ()) =
        tokio::join!(conn.exchange(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n", &method, BodyPolicy::Keep(1 << 20)), serve);
    (result, conn.reusable)
}

#[tokio::test]
async fn reads_each_kind_of_body() {
    let (r, keep) = exchange_with(b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello", Method::GET).await;
    assert_eq!((r.unwrap().body(), keep), (&b"hello"[..], true));
    let (r, keep) =
        exchange_with(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", Method::GET).await;
    assert_eq!((r.unwrap().body(), keep), (&b"abc"[..], true));
    let (r, keep) = exchange_with(b"HTTP/1.1 200 OK\r\n\r\nuntil close", Method::GET).await;
    assert_eq!((r.unwrap().body(), keep), (&b"until close"[..], false));
    let (r, _) =
        exchange_with(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\ncontent-length: 0\r\n\r\n", Method::POST)
            .await;
    assert_eq!(r.unwrap().status, StatusCode::CREATED);
    let (r, keep) = exchange_with(b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\n", Method::HEAD).await;
    assert_eq!((r.unwrap().body().len(), keep), (0, true));
}

#[tokio::test]
async fn a_short_body_is_an_error() {
    let (r, keep) = exchange_with(b"HTTP/1.1 200 OK\r\ncontent-length: 50\r\n\r\nhello", Method::GET).await;
    assert!(matches!(r, Err(ExchangeError::Closed)), "{r:?}");
    assert!(!keep);
    let (r, _) = exchange_with(b"garbage\r\n\r\n", Method::GET).await;
    assert!(matches!(r, Err(ExchangeError::Protocol(_))), "{r:?}");
}

#[tokio::test]
async fn the_idle_check_sees_a_closed_connection() {
    let (mut conn, server) = pair().await;
    assert!(conn.idle_ok());
    drop(server);
    // Give the FIN time to arrive and the reactor time to flag the socket.
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    assert!(!conn.idle_ok());
}
