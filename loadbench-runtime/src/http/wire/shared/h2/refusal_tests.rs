//! Responses a server must never send, answered frame by frame by a server written here (h2's
//! own server would refuse to send them): a malformed response fails its request as a
//! `protocol` error and the connection goes on; a header list past the limit too, its block
//! decoded to its end so that the HPACK table stays the server's; a header block buffered past
//! the limit, or a server whose first frame is not SETTINGS, ends the connection.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::cell::RefCell;
use std::rc::Rc;

use bytes::Bytes;
use http::{HeaderMap, Method};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::Http2;
use super::frame::{
    CANCEL, COMPRESSION_ERROR, CONTINUATION, DATA, END_HEADERS, END_STREAM, ENHANCE_YOUR_CALM, GOAWAY, HEADERS,
    PROTOCOL_ERROR, RST_STREAM, SETTINGS, SETTINGS_MAX_HEADER_LIST_SIZE,
};
use crate::error::ErrorKind;
use crate::http::wire::connection::BodyPolicy;
use crate::http::wire::shared::{Failure, Outgoing, Reply};
use crate::http::wire::stream::Stream;
use crate::http::wire::target::Target;

/// A frame the client sent.
#[derive(Debug, Clone)]
struct Sent {
    kind: u8,
    stream: u32,
    payload: Vec<u8>,
}

/// The frames the client sent, as the server read them.
type Seen = Rc<RefCell<Vec<Sent>>>;

/// A server that writes `preface` once it has read the client's, then answers the `n`-th
/// request's HEADERS (from 0), on stream `id`, with the bytes `answer(n, id)`.
async fn raw_server(preface: Vec<u8>, answer: impl Fn(usize, u32) -> Vec<u8> + 'static) -> (Target, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let target = Target::resolve(&format!("http://{}/", listener.local_addr().unwrap())).unwrap();
    let seen = Seen::default();
    let frames = Rc::clone(&seen);
    tokio::task::spawn_local(async move {
        let (mut tcp, _) = listener.accept().await.unwrap();
        let mut client_preface = [0u8; 24];
        tcp.read_exact(&mut client_preface).await.unwrap();
        tcp.write_all(&preface).await.unwrap();
        let mut n = 0;
        loop {
            let mut head = [0u8; 9];
            if tcp.read_exact(&mut head).await.is_err() {
                return;
            }
            let len = usize::from(head[0]) << 16 | usize::from(head[1]) << 8 | usize::from(head[2]);
            let mut payload = vec![0u8; len];
            if tcp.read_exact(&mut payload).await.is_err() {
                return;
            }
            let stream = u32::from_be_bytes([head[5], head[6], head[7], head[8]]);
            frames.borrow_mut().push(Sent { kind: head[3], stream, payload });
            if head[3] == HEADERS {
                if tcp.write_all(&answer(n, stream)).await.is_err() {
                    return;
                }
                n += 1;
            }
        }
    });
    (target, seen)
}

/// One frame.
fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let len = u32::try_from(payload.len()).unwrap().to_be_bytes();
    let mut out = vec![len[1], len[2], len[3], kind, flags];
    out.extend_from_slice(&stream.to_be_bytes());
    out.extend_from_slice(payload);
    out
}

fn settings() -> Vec<u8> {
    frame(SETTINGS, 0, 0, &[])
}

fn headers(stream: u32, block: &[u8], end_stream: bool) -> Vec<u8> {
    frame(HEADERS, END_HEADERS | if end_stream { END_STREAM } else { 0 }, stream, block)
}

fn data(stream: u32, bytes: &[u8], end_stream: bool) -> Vec<u8> {
    frame(DATA, if end_stream { END_STREAM } else { 0 }, stream, bytes)
}

/// An HPACK integer (RFC 7541, 5.1).
fn int(out: &mut Vec<u8>, flags: u8, prefix: u32, value: usize) {
    let max = (1usize << prefix) - 1;
    if value < max {
        out.push(flags | u8::try_from(value).unwrap());
        return;
    }
    out.push(flags | u8::try_from(max).unwrap());
    let mut rest = value - max;
    while rest >= 128 {
        out.push(u8::try_from(rest % 128).unwrap() | 0x80);
        rest /= 128;
    }
    out.push(u8::try_from(rest).unwrap());
}

/// A literal field with a new name: without indexing, or added to the table when `index`.
fn literal(out: &mut Vec<u8>, name: &str, value: &str, index: bool) {
    out.push(if index { 0x40 } else { 0 });
    for s in [name, value] {
        int(out, 0, 7, s.len());
        out.extend_from_slice(s.as_bytes());
    }
}

/// A block: `:status: 200` from the static table, then `fields` as literals.
fn block(fields: &[(&str, &str)]) -> Vec<u8> {
    let mut out = vec![0x88];
    for (name, value) in fields {
        literal(&mut out, name, value, false);
    }
    out
}

async fn connect(target: &Target) -> Http2 {
    let (stream, _) = Stream::open(target.addr(), None).await.unwrap();
    Http2::start(stream, target)
}

async fn send(h2: &Http2, method: Method) -> Result<Reply, Failure> {
    let (headers, body) = (HeaderMap::new(), Bytes::new());
    let request = Outgoing {
        wire: b"",
        method: &method,
        path: "/",
        headers: &headers,
        body: &body,
        policy: BodyPolicy::Keep(1 << 20),
    };
    h2.exchange(&request).await
}

/// The failure of a request that must fail; a response, which may be huge, is not printed.
#[track_caller]
fn refused(result: Result<Reply, Failure>, what: &str) -> Failure {
    match result {
        Ok(reply) => panic!("{what}: answered {}, {} bytes of body", reply.response.status(), reply.body_len),
        Err(failure) => failure,
    }
}

fn local<F: std::future::Future>(test: F) -> F::Output {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    tokio::task::LocalSet::new().block_on(&runtime, test)
}

/// The error codes of the RST_STREAM frames the client sent, by stream.
fn resets(seen: &Seen) -> Vec<(u32, u32)> {
    let code = |p: &[u8]| u32::from_be_bytes([p[0], p[1], p[2], p[3]]);
    seen.borrow().iter().filter(|f| f.kind == RST_STREAM).map(|f| (f.stream, code(&f.payload))).collect()
}

/// The error code of the client's GOAWAY, once it sent one.
async fn goaway(seen: &Seen) -> Option<u32> {
    for _ in 0..200 {
        if let Some(f) = seen.borrow().iter().find(|f| f.kind == GOAWAY) {
            return Some(u32::from_be_bytes([f.payload[4], f.payload[5], f.payload[6], f.payload[7]]));
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    None
}

/// How a server answers a request on stream `id`.
type Answer = Box<dyn Fn(u32) -> Vec<u8>>;

/// A literal block of `fields` alone, without `:status`.
fn fields_only(fields: &[(&str, &str)]) -> Vec<u8> {
    block(fields)[1..].to_vec()
}

/// The malformed responses of RFC 9113, 8.1 to 8.3, each with what its request's error says.
fn malformed_cases() -> Vec<(Answer, &'static str)> {
    fn one(block: Vec<u8>) -> Answer {
        Box::new(move |id| headers(id, &block, true))
    }
    let mut invalid_status = Vec::new();
    int(&mut invalid_status, 0, 4, 8);
    int(&mut invalid_status, 0, 7, 3);
    invalid_status.extend_from_slice(b"abc");
    let mut status_after = fields_only(&[("x", "1")]);
    status_after.push(0x88);
    vec![
        (one(vec![0x88, 0x89]), "two :status pseudo-headers"),
        (one(fields_only(&[("x", "1")])), "a response without a :status"),
        (one(invalid_status), "an invalid :status"),
        (one(block(&[("X-Upper", "1")])), "an uppercase header name"),
        (one(status_after), "a pseudo-header after a regular header"),
        (one(vec![0x88, 0x82]), "a request pseudo-header in a response"),
        (one(block(&[(":bogus", "1")])), "an unknown pseudo-header"),
        (one(block(&[("connection", "close")])), "a connection-specific header: connection"),
        (one(block(&[("keep-alive", "5")])), "a connection-specific header: keep-alive"),
        (one(block(&[("transfer-encoding", "chunked")])), "a connection-specific header: transfer-encoding"),
        (one(block(&[("upgrade", "h2c")])), "a connection-specific header: upgrade"),
        (one(block(&[("proxy-connection", "keep-alive")])), "a connection-specific header: proxy-connection"),
        (one(block(&[("te", "gzip")])), "a te header other than trailers"),
        (one(block(&[("x", "a\rb")])), "an invalid header value"),
        (one(block(&[("content-length", "5")])), "a body shorter than its content-length"),
        (
            Box::new(|id| [headers(id, &block(&[("content-length", "5")]), false), data(id, b"abc", true)].concat()),
            "a body shorter than its content-length",
        ),
        (
            Box::new(|id| [headers(id, &block(&[("content-length", "2")]), false), data(id, b"abc", false)].concat()),
            "DATA beyond the response's content-length",
        ),
        (
            Box::new(|id| {
                [headers(id, &block(&[]), false), data(id, b"ok", false), headers(id, &[0x88], true)].concat()
            }),
            "a pseudo-header in trailers",
        ),
        (
            Box::new(|id| {
                [headers(id, &block(&[]), false), headers(id, &fields_only(&[("x-sum", "1")]), false)].concat()
            }),
            "trailers that do not end the stream",
        ),
    ]
}

#[test]
fn each_malformed_response_fails_its_request_as_a_protocol_error_and_the_connection_goes_on() {
    local(async {
        let cases = malformed_cases();
        let whats: Vec<&str> = cases.iter().map(|(_, what)| *what).collect();
        let count = cases.len();
        let (target, seen) = raw_server(settings(), move |n, id| match cases.get(n) {
            Some((answer, _)) => answer(id),
            // A good response after them all.
            None => [headers(id, &block(&[("content-length", "2")]), false), data(id, b"ok", true)].concat(),
        })
        .await;
        let h2 = connect(&target).await;
        // Every case is tried, and every one that went wrong is listed.
        let mut wrong = Vec::new();
        for what in &whats {
            // Bounded: a stream left open would otherwise wait for ever.
            match tokio::time::timeout(std::time::Duration::from_secs(5), send(&h2, Method::GET)).await {
                Err(_) => wrong.push(format!("{what}: no answer within 5 s")),
                Ok(Ok(reply)) => wrong.push(format!("{what}: answered {}", reply.response.status())),
                Ok(Err(failure)) => {
                    let (kind, text) = (failure.error.kind(), failure.error.to_string());
                    if (kind, text.as_str(), failure.retry)
                        != (ErrorKind::Protocol, &*format!("the server broke HTTP/2: {what}"), false)
                    {
                        wrong.push(format!("{what}: {kind:?} {text}"));
                    }
                }
            }
        }
        assert_eq!(wrong, Vec::<String>::new());
        let good = send(&h2, Method::GET).await.expect("the connection goes on");
        assert_eq!(good.response.text().unwrap(), "ok");
        assert!(h2.is_open());
        // Streams 1, 3, 5 …: each reset with PROTOCOL_ERROR.
        let want: Vec<(u32, u32)> = (0..count).map(|i| (1 + 2 * u32::try_from(i).unwrap(), PROTOCOL_ERROR)).collect();
        assert_eq!(resets(&seen), want);
    });
}

#[test]
fn a_response_without_content_may_say_a_length_it_does_not_carry() {
    local(async {
        let (target, _) = raw_server(settings(), |n, id| {
            let status = if n == 0 { 0x88 } else { 0x8b }; // 200 to a HEAD, then 304 to a GET
            let mut block = vec![status];
            // Longer than the request keeps, too: no byte of it comes.
            literal(&mut block, "content-length", "5000000", false);
            headers(id, &block, true)
        })
        .await;
        let h2 = connect(&target).await;
        assert_eq!(send(&h2, Method::HEAD).await.unwrap().response.status().as_u16(), 200);
        assert_eq!(send(&h2, Method::GET).await.unwrap().response.status().as_u16(), 304);
    });
}

#[test]
fn a_server_whose_first_frame_is_not_settings_fails_its_requests_as_protocol_errors() {
    local(async {
        let (target, seen) = raw_server(Vec::new(), |_, id| headers(id, &[0x88], true)).await;
        let h2 = connect(&target).await;
        let failure = refused(send(&h2, Method::GET).await, "a HEADERS before SETTINGS");
        assert_eq!(failure.error.kind(), ErrorKind::Protocol, "{}", failure.error);
        assert!(failure.error.to_string().contains("the server's first frame is not SETTINGS"), "{}", failure.error);
        assert_eq!(goaway(&seen).await, Some(PROTOCOL_ERROR));
    });
}

#[test]
fn our_settings_advertise_the_header_list_limit() {
    local(async {
        for (limit, want) in [(None, 65_536u32), (Some(1_000), 1_000)] {
            let (target, seen) = raw_server(settings(), |_, id| headers(id, &[0x88], true)).await;
            let target = match limit {
                Some(limit) => target.with_max_header_list_size(limit),
                None => target,
            };
            let h2 = connect(&target).await;
            send(&h2, Method::GET).await.unwrap();
            let frames = seen.borrow();
            let ours = frames.iter().find(|f| f.kind == SETTINGS).expect("the client's SETTINGS");
            let value = ours
                .payload
                .chunks_exact(6)
                .find(|p| u16::from_be_bytes([p[0], p[1]]) == SETTINGS_MAX_HEADER_LIST_SIZE)
                .map(|p| u32::from_be_bytes([p[2], p[3], p[4], p[5]]));
            assert_eq!(value, Some(want));
        }
    });
}

/// A block that adds a 3,900-byte `x-big` to the dynamic table, and the HPACK bomb: 12,000
/// references to it, 12 KB that decode to 47 MB.
fn bomb() -> (Vec<u8>, Vec<u8>) {
    let mut adding = vec![0x88];
    literal(&mut adding, "x-big", &"v".repeat(3_900), true);
    let mut bomb = vec![0x88];
    bomb.resize(12_001, 0xbe);
    (adding, bomb)
}

#[test]
fn an_hpack_bomb_fails_its_request_and_the_table_stays_the_server_s() {
    local(async {
        let (adding, bomb) = bomb();
        let (target, seen) = raw_server(settings(), move |n, id| match n {
            0 => headers(id, &adding, true),
            1 => headers(id, &bomb, true),
            // The entry the bomb referenced, and one added after it in the bomb's own block.
            _ => headers(id, &[0x88, 0xbe], true),
        })
        .await;
        let h2 = connect(&target).await;
        let first = send(&h2, Method::GET).await.unwrap();
        assert_eq!(first.response.headers()["x-big"].len(), 3_900);
        let failure = refused(send(&h2, Method::GET).await, "a 47 MB header list");
        assert_eq!(failure.error.kind(), ErrorKind::Protocol, "{}", failure.error);
        assert_eq!(failure.error.to_string(), "the server broke HTTP/2: response header list larger than 65536 bytes");
        // The bomb's block was decoded to its end: the table is as the server's encoder has it.
        let after = send(&h2, Method::GET).await.expect("the connection goes on");
        assert_eq!(after.response.headers()["x-big"].len(), 3_900);
        assert!(h2.is_open());
        // Written before the next request's HEADERS, which the server read before answering.
        assert_eq!(resets(&seen), [(3, CANCEL)]);
    });
}

#[test]
fn a_header_block_past_the_limit_in_continuation_frames_ends_the_connection() {
    local(async {
        let (target, seen) = raw_server(settings(), |_, id| {
            // 80 KB of fields in five frames: buffered today up to 16 MiB.
            let mut out = frame(HEADERS, END_STREAM, id, &[0x88]);
            for i in 0..5 {
                let fields: Vec<(String, String)> = (0..100).map(|j| (format!("x-{i}-{j}"), "v".repeat(150))).collect();
                let fields: Vec<(&str, &str)> = fields.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
                out.extend(frame(CONTINUATION, if i == 4 { END_HEADERS } else { 0 }, id, &fields_only(&fields)));
            }
            out
        })
        .await;
        let h2 = connect(&target).await;
        let failure = refused(send(&h2, Method::GET).await, "an 80 KB header block");
        assert_eq!(failure.error.kind(), ErrorKind::Protocol, "{}", failure.error);
        assert!(
            failure.error.to_string().contains("a header block larger than the header list limit"),
            "{}",
            failure.error
        );
        assert_eq!(goaway(&seen).await, Some(COMPRESSION_ERROR));
        assert!(!h2.is_open());
    });
}

#[test]
fn a_response_with_a_thousand_headers_keeps_every_one() {
    local(async {
        let (target, _) = raw_server(settings(), |_, id| {
            let fields: Vec<(String, String)> = (0..1_000).map(|i| (format!("x-{i}"), i.to_string())).collect();
            let fields: Vec<(&str, &str)> = fields.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
            headers(id, &block(&fields), true)
        })
        .await;
        let h2 = connect(&target).await;
        let reply = send(&h2, Method::GET).await.unwrap();
        let map = reply.response.headers();
        assert_eq!((map.len(), map.get("x-999").map(|v| v.as_bytes())), (1_000, Some(&b"999"[..])));
    });
}

#[test]
fn endless_empty_continuation_frames_end_the_connection() {
    local(async {
        let (target, seen) = raw_server(settings(), |_, id| {
            let mut out = frame(HEADERS, END_STREAM, id, &[0x88]);
            for _ in 0..10_000 {
                out.extend(frame(CONTINUATION, 0, id, &[]));
            }
            out
        })
        .await;
        let h2 = connect(&target).await;
        let answer = tokio::time::timeout(std::time::Duration::from_secs(5), send(&h2, Method::GET)).await;
        let failure = refused(answer.expect("a block that never ends ends the request"), "endless CONTINUATION");
        assert_eq!(failure.error.kind(), ErrorKind::Protocol, "{}", failure.error);
        assert!(failure.error.to_string().contains("too many CONTINUATION frames"), "{}", failure.error);
        assert_eq!(goaway(&seen).await, Some(ENHANCE_YOUR_CALM));
    });
}
