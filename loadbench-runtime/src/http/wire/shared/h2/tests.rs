//! HTTP/2 streams against the h2 crate's server on 127.0.0.1, each test's server answering (or
//! refusing) its streams one way.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::future::Future;

use bytes::Bytes;
use h2::server::SendResponse;
use h2::{Reason, RecvStream};
use http::{HeaderMap, Method, Request, Response as HttpResponse};
use tokio::net::TcpListener;

use super::Http2;
use crate::error::ErrorKind;
use crate::http::wire::connection::BodyPolicy;
use crate::http::wire::shared::{Failure, Outgoing, Reply};
use crate::http::wire::stream::Stream;
use crate::http::wire::target::Target;

/// Serves one connection with h2's server: `answer` gets each stream's number (from 0), its
/// request and its responder. `goaway_after`: the server shuts down gracefully (GOAWAY) once
/// that many streams came.
async fn server<F, Fut>(goaway_after: Option<usize>, answer: F) -> Target
where
    F: Fn(usize, Request<RecvStream>, SendResponse<Bytes>) -> Fut + 'static,
    Fut: Future<Output = ()> + 'static,
{
    serve(h2::server::Builder::new(), goaway_after, answer).await
}

/// As [`server`], with the server's settings from `builder`.
async fn serve<F, Fut>(builder: h2::server::Builder, goaway_after: Option<usize>, answer: F) -> Target
where
    F: Fn(usize, Request<RecvStream>, SendResponse<Bytes>) -> Fut + 'static,
    Fut: Future<Output = ()> + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let target = Target::resolve(&format!("http://{}/", listener.local_addr().unwrap())).unwrap();
    tokio::task::spawn_local(async move {
        let (tcp, _) = listener.accept().await.unwrap();
        let mut connection = builder.handshake(tcp).await.unwrap();
        let mut n = 0;
        while let Some(Ok((request, respond))) = connection.accept().await {
            tokio::task::spawn_local(answer(n, request, respond));
            n += 1;
            if goaway_after == Some(n) {
                connection.graceful_shutdown();
            }
        }
    });
    target
}

async fn connect(target: &Target) -> Http2 {
    let (stream, _) = Stream::open(target.addr(), None).await.unwrap();
    Http2::start(stream, target)
}

async fn send(
    h2: &Http2,
    method: Method,
    headers: &HeaderMap,
    body: &Bytes,
    policy: BodyPolicy,
) -> Result<Reply, Failure> {
    h2.exchange(&Outgoing { wire: b"", method: &method, path: "/items?x=1", headers, body, policy }).await
}

async fn get(h2: &Http2) -> Result<Reply, Failure> {
    send(h2, Method::GET, &HeaderMap::new(), &Bytes::new(), BodyPolicy::Keep(1 << 20)).await
}

fn ok(body: &'static str) -> (HttpResponse<()>, Bytes) {
    (HttpResponse::builder().status(200).header("content-length", body.len()).body(()).unwrap(), Bytes::from(body))
}

async fn respond(mut respond: SendResponse<Bytes>, (head, body): (HttpResponse<()>, Bytes)) {
    let mut out = respond.send_response(head, body.is_empty()).unwrap();
    if !body.is_empty() {
        out.send_data(body, true).unwrap();
    }
}

fn local<F: Future>(test: F) -> F::Output {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    tokio::task::LocalSet::new().block_on(&runtime, test)
}

#[test]
fn a_request_goes_out_whole_and_its_response_comes_back() {
    local(async {
        let target = server(None, |_, request, out| async move {
            let (head, mut body) = request.into_parts();
            let mut got = Vec::new();
            while let Some(chunk) = body.data().await {
                got.extend_from_slice(&chunk.unwrap());
            }
            let seen = format!(
                "{} {} {} connection={:?} x={:?} {}",
                head.method,
                head.uri,
                head.version == http::Version::HTTP_2,
                head.headers.get("connection"),
                head.headers.get("x-test"),
                String::from_utf8(got).unwrap()
            );
            let head = HttpResponse::builder().status(201).header("set-cookie", "a=1").body(()).unwrap();
            respond(out, (head, Bytes::from(seen))).await;
        })
        .await;
        let h2 = connect(&target).await;
        let mut headers = HeaderMap::new();
        headers.insert("x-test", "1".parse().unwrap());
        headers.insert("connection", "keep-alive".parse().unwrap());
        let reply =
            send(&h2, Method::POST, &headers, &Bytes::from_static(b"hello"), BodyPolicy::Keep(1 << 20)).await.unwrap();
        let authority = target.addr();
        assert_eq!(reply.response.status().as_u16(), 201);
        assert!(reply.response.sets_cookie());
        assert_eq!(reply.response.headers().get("set-cookie").unwrap(), "a=1");
        assert_eq!(
            std::str::from_utf8(reply.response.bytes()).unwrap(),
            format!("POST http://{authority}/items?x=1 true connection=None x=Some(\"1\") hello")
        );
        assert_eq!(reply.body_len, reply.response.bytes().len() as u64);
        assert!(h2.is_open());
    });
}

#[test]
fn a_body_is_kept_within_its_limit_or_counted_and_dropped() {
    local(async {
        let target = server(None, |_, _, out| respond(out, ok("0123456789"))).await;
        let h2 = connect(&target).await;
        let none = (HeaderMap::new(), Bytes::new());
        let dropped = send(&h2, Method::GET, &none.0, &none.1, BodyPolicy::Discard).await.unwrap();
        assert_eq!((dropped.response.bytes().len(), dropped.body_len), (0, 10));
        let failure = send(&h2, Method::GET, &none.0, &none.1, BodyPolicy::Keep(9)).await.unwrap_err();
        assert_eq!(failure.error.kind(), ErrorKind::BodyTooLarge);
        assert!(!failure.retry);
        // The connection goes on after the stream it reset.
        assert_eq!(get(&h2).await.unwrap().response.text().unwrap(), "0123456789");
    });
}

#[test]
fn a_reset_stream_is_its_request_s_error_and_a_refused_one_may_be_sent_again() {
    local(async {
        let target = server(None, |n, _, mut out| async move {
            match n {
                0 => out.send_reset(Reason::INTERNAL_ERROR),
                1 => out.send_reset(Reason::REFUSED_STREAM),
                _ => respond(out, ok("fine")).await,
            }
        })
        .await;
        let h2 = connect(&target).await;
        let reset = get(&h2).await.unwrap_err();
        assert_eq!(reset.error.kind(), ErrorKind::StreamReset);
        assert_eq!(reset.error.to_string(), "the server reset the stream: INTERNAL_ERROR");
        assert!(!reset.retry);
        let refused = get(&h2).await.unwrap_err();
        assert_eq!(refused.error.kind(), ErrorKind::StreamReset);
        assert!(refused.retry, "REFUSED_STREAM means unprocessed");
        assert!(!refused.unsent, "its stream was opened: it costs one of the request's retries");
        assert!(h2.is_open());
        assert_eq!(get(&h2).await.unwrap().response.text().unwrap(), "fine");
    });
}

#[test]
fn after_a_goaway_the_connection_takes_no_new_stream_and_the_request_may_go_on_another() {
    local(async {
        let target = server(Some(1), |_, _, out| respond(out, ok("first"))).await;
        let h2 = connect(&target).await;
        assert_eq!(get(&h2).await.unwrap().response.text().unwrap(), "first");
        // The server's GOAWAY goes out as it accepts the first stream, before that stream's
        // response: the next request is refused unsent.
        let failure = get(&h2).await.expect_err("a stream after GOAWAY was answered");
        assert!(failure.retry && failure.unsent, "{}", failure.error);
        assert!(!h2.is_open());
    });
}

#[test]
fn streams_beyond_the_server_s_limit_wait_for_room_and_all_are_answered() {
    use std::cell::Cell;
    use std::rc::Rc;

    local(async {
        let (now, peak) = (Rc::new(Cell::new(0)), Rc::new(Cell::new(0)));
        let (n, p) = (Rc::clone(&now), Rc::clone(&peak));
        let mut builder = h2::server::Builder::new();
        builder.max_concurrent_streams(2);
        let target = serve(builder, None, move |_, _, out| {
            let (now, peak) = (Rc::clone(&n), Rc::clone(&p));
            async move {
                now.set(now.get() + 1);
                peak.set(peak.get().max(now.get()));
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                now.set(now.get() - 1);
                respond(out, ok("fine")).await;
            }
        })
        .await;
        let h2 = connect(&target).await;
        let all = tokio::join!(get(&h2), get(&h2), get(&h2), get(&h2), get(&h2), get(&h2));
        for reply in [all.0, all.1, all.2, all.3, all.4, all.5] {
            assert_eq!(reply.unwrap().response.text().unwrap(), "fine");
        }
        assert_eq!(peak.get(), 2, "never more than the server allows, and as many");
    });
}

#[test]
fn a_body_larger_than_the_server_s_windows_goes_out_as_they_open() {
    local(async {
        let target = server(None, |_, request, out| async move {
            let mut body = request.into_body();
            let mut len = 0;
            while let Some(chunk) = body.data().await {
                let chunk = chunk.unwrap();
                len += chunk.len();
                body.flow_control().release_capacity(chunk.len()).unwrap();
            }
            let head = HttpResponse::builder().status(200).body(()).unwrap();
            respond(out, (head, Bytes::from(len.to_string()))).await;
        })
        .await;
        let h2 = connect(&target).await;
        let body = Bytes::from(vec![7u8; 300_000]);
        let reply = send(&h2, Method::POST, &HeaderMap::new(), &body, BodyPolicy::Keep(1 << 20)).await.unwrap();
        assert_eq!(reply.response.text().unwrap(), "300000", "five times the protocol's default window");
    });
}

/// A server written frame by frame: it answers two streams' HEADERS with a `GOAWAY` whose last
/// stream id is the first's, then answers the first. (h2's own server counts a stream as
/// processed as soon as its HEADERS arrive, so it cannot refuse one it has read.)
async fn goaway_below_the_second_stream() -> Target {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let target = Target::resolve(&format!("http://{}/", listener.local_addr().unwrap())).unwrap();
    tokio::task::spawn_local(async move {
        let (mut tcp, _) = listener.accept().await.unwrap();
        let mut preface = [0u8; 24];
        tcp.read_exact(&mut preface).await.unwrap();
        // An empty SETTINGS: no limit on streams.
        tcp.write_all(&[0, 0, 0, 4, 0, 0, 0, 0, 0]).await.unwrap();
        let mut streams = Vec::new();
        while streams.len() < 2 {
            let mut head = [0u8; 9];
            tcp.read_exact(&mut head).await.unwrap();
            let len = usize::from(head[0]) << 16 | usize::from(head[1]) << 8 | usize::from(head[2]);
            let mut payload = vec![0u8; len];
            tcp.read_exact(&mut payload).await.unwrap();
            if head[3] == 1 {
                streams.push(u32::from_be_bytes([head[5], head[6], head[7], head[8]]));
            }
        }
        let first = streams[0].to_be_bytes();
        let mut frames = vec![0, 0, 8, 7, 0, 0, 0, 0, 0];
        frames.extend_from_slice(&first);
        frames.extend_from_slice(&[0, 0, 0, 0]); // NO_ERROR
        // HEADERS, END_STREAM | END_HEADERS, `:status: 200` from HPACK's static table.
        frames.extend_from_slice(&[0, 0, 1, 1, 5]);
        frames.extend_from_slice(&first);
        frames.push(0x88);
        tcp.write_all(&frames).await.unwrap();
        // Held open until the client is done.
        let _ = tcp.read(&mut [0u8; 1024]).await;
    });
    target
}

#[test]
fn a_stream_above_the_goaway_s_last_stream_may_be_sent_again_and_the_one_below_is_answered() {
    local(async {
        let target = goaway_below_the_second_stream().await;
        let h2 = connect(&target).await;
        let (first, second) = tokio::join!(get(&h2), get(&h2));
        let (answered, refused) = match (first, second) {
            (Ok(answered), Err(refused)) | (Err(refused), Ok(answered)) => (answered, refused),
            (first, second) => panic!("one answered and one refused: {first:?}, {second:?}"),
        };
        assert_eq!(answered.response.status().as_u16(), 200);
        assert!(refused.retry && !refused.unsent, "{}", refused.error);
        assert_eq!(refused.error.to_string(), "the server closed the connection (GOAWAY NO_ERROR) before this request");
        assert!(!h2.is_open());
    });
}

#[cfg(feature = "tls")]
#[test]
fn a_tls_alert_after_the_handshake_is_a_tls_error_with_its_cause() {
    use std::sync::Arc;

    use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

    use crate::http::wire::tls::{TlsClient, TlsOptions};

    local(async {
        // A TLS 1.3 server that asks for a client certificate: the client's side of the
        // handshake is over before the server reads that it has none, and its alert comes with
        // the first read of the connection.
        let certified = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap();
        let cert = CertificateDer::from(certified.cert.der().to_vec());
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(certified.signing_key.serialize_der()));
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut roots = rustls::RootCertStore::empty();
        roots.add(cert.clone()).unwrap();
        let verifier =
            rustls::server::WebPkiClientVerifier::builder_with_provider(Arc::new(roots), Arc::clone(&provider))
                .build()
                .unwrap();
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_protocol_versions(&[&rustls::version::TLS13])
            .unwrap()
            .with_client_cert_verifier(verifier)
            .with_single_cert(vec![cert], key)
            .unwrap();
        config.alpn_protocols = vec![b"h2".to_vec()];
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("https://{}/", listener.local_addr().unwrap());
        tokio::task::spawn_local(async move {
            let (tcp, _) = listener.accept().await.unwrap();
            let _ = acceptor.accept(tcp).await;
        });
        let client = Arc::new(TlsClient::new(&TlsOptions::default().insecure(true)).unwrap());
        let target = Target::resolve_with(&url, &[], Some(&client)).unwrap();
        let (client, name) = target.tls().unwrap();
        let config = client.for_lane(crate::config::Protocol::Http2);
        let (stream, _) = Stream::open(target.addr(), Some((&config, name))).await.unwrap();
        let h2 = Http2::start(stream, &target);
        let failure = get(&h2).await.unwrap_err();
        assert_eq!(failure.error.kind(), ErrorKind::Tls, "{}", failure.error);
        assert!(failure.error.to_string().contains("requires a client certificate"), "{}", failure.error);
        assert!(!failure.retry && !h2.is_open());
    });
}

/// A server that answers the first stream and no other after it, unless `answer_second`: then the
/// second stream is answered 10 ms after it came.
async fn answers_the_first(answer_second: bool) -> Target {
    server(None, move |n, _, out| async move {
        match n {
            0 => respond(out, ok("first")).await,
            1 if answer_second => {
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                respond(out, ok("second")).await;
            }
            // Held unanswered until the connection ends.
            _ => std::future::pending::<()>().await,
        }
    })
    .await
}

#[test]
fn a_request_given_up_with_nothing_heard_since_it_was_queued_retires_the_connection() {
    local(async {
        let target = answers_the_first(false).await;
        let h2 = connect(&target).await;
        assert_eq!(get(&h2).await.unwrap().response.text().unwrap(), "first");
        let given_up = tokio::time::timeout(std::time::Duration::from_millis(50), get(&h2)).await;
        assert!(given_up.is_err(), "the second stream was answered");
        assert!(!h2.is_open(), "a connection that answered nothing while a request waited takes new streams");
    });
}

#[test]
fn a_request_given_up_while_other_streams_are_answered_leaves_the_connection_open() {
    local(async {
        let target = answers_the_first(true).await;
        let h2 = connect(&target).await;
        assert_eq!(get(&h2).await.unwrap().response.text().unwrap(), "first");
        // The second stream is answered after 10 ms, the third never: the third is given up at
        // 100 ms, on a connection that answered a stream meanwhile.
        let second = get(&h2);
        let third = tokio::time::timeout(std::time::Duration::from_millis(100), get(&h2));
        let (second, third) = tokio::join!(second, third);
        assert_eq!(second.unwrap().response.text().unwrap(), "second");
        assert!(third.is_err(), "the third stream was answered");
        assert!(h2.is_open(), "a slow stream on a connection that answers others costs it nothing");
    });
}

#[test]
fn acknowledgements_wait_unwritten_up_to_the_limit_and_requests_never_fill_the_output() {
    use super::streams::Conn;
    use super::{MAX_PENDING_ACKS, OUTPUT_BOUND};

    let mut conn =
        Conn::new(false, b"127.0.0.1", "127.0.0.1:1".parse().unwrap(), crate::http::DEFAULT_MAX_HEADER_LIST_SIZE);
    for _ in 0..MAX_PENDING_ACKS {
        assert!(conn.ack(Some(&[7; 8])));
    }
    assert!(!conn.ack(None), "one acknowledgement past the limit ends the connection");
    // All written: the count starts again.
    let queued = conn.out.len();
    conn.wrote(queued);
    assert!(conn.ack(Some(&[7; 8])));
    conn.wrote(conn.out.len() - 1);
    assert!(conn.ack(None), "an acknowledgement partly written still counts, and the count goes on");

    // A request's header block larger than the bound fills the output with request bytes only.
    let mut headers = HeaderMap::new();
    headers.insert("x-large", "v".repeat(OUTPUT_BOUND + 1).parse().unwrap());
    let body = Bytes::new();
    let request = Outgoing {
        wire: b"",
        method: &Method::GET,
        path: "/",
        headers: &headers,
        body: &body,
        policy: BodyPolicy::Discard,
    };
    let index = conn.push(&request).unwrap();
    assert!(conn.out.len() > OUTPUT_BOUND);
    assert!(!conn.output_full(), "a request's own bytes never stop reading");
    // Resets (13 bytes each) past the bound, none written.
    for _ in 0..=OUTPUT_BOUND / 13 {
        conn.reset(index, 0x8, Failure::new(crate::error::Error::new(ErrorKind::Io, "reset"), false));
    }
    assert!(conn.output_full(), "bytes queued in answer to the server past the bound stop reading");
    conn.wrote(conn.out.len());
    assert!(!conn.output_full(), "all written: reading goes on");
}

#[test]
fn a_server_that_floods_pings_without_reading_is_told_to_calm_down() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    local(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let target = Target::resolve(&format!("http://{}/", listener.local_addr().unwrap())).unwrap();
        tokio::task::spawn_local(async move {
            let (mut tcp, _) = listener.accept().await.unwrap();
            let mut preface = [0; 24];
            tcp.read_exact(&mut preface).await.unwrap();
            // SETTINGS, then 2,000 PINGs, and nothing read again.
            let mut out = vec![0, 0, 0, 4, 0, 0, 0, 0, 0];
            for _ in 0..2_000 {
                out.extend_from_slice(&[0, 0, 8, 6, 0, 0, 0, 0, 0]);
                out.extend_from_slice(&[1; 8]);
            }
            tcp.write_all(&out).await.unwrap();
            std::future::pending::<()>().await;
        });
        let h2 = connect(&target).await;
        let given = tokio::time::timeout(std::time::Duration::from_secs(5), get(&h2)).await;
        let failure = given.expect("the flood ended the connection").expect_err("a flooded connection answered");
        assert!(!failure.retry, "{}", failure.error);
        assert!(failure.error.to_string().contains("ENHANCE_YOUR_CALM"), "{}", failure.error);
        assert!(!h2.is_open());
    });
}
