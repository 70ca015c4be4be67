//! Property tests of the response reader: arbitrary bytes, and valid responses mutated (bytes
//! flipped, cut short, absurd lengths, many 1xx heads, large bodies), sent over a loopback socket
//! in pieces of arbitrary sizes. Whatever arrives, the exchange ends (a response or an error once
//! the server closes), nothing panics, a kept body respects its limit, and the buffers stay
//! within a bound that does not grow with what the server sends.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use proptest::prelude::*;
use proptest::test_runner::Config;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;

use super::*;

const REQUEST: &[u8] = b"GET / HTTP/1.1\r\nhost: x\r\n\r\n";

/// A body up to ~2 KiB of arbitrary bytes, or a large one (up to 1.5 MiB), larger than the
/// bound on buffers below: keeping it whole would break the bound.
fn body() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        3 => prop::collection::vec(any::<u8>(), 0..2048),
        2 => (100_000usize..1_500_000, any::<u8>()).prop_map(|(n, b)| vec![b; n]),
    ]
}

/// How the generated response frames its body.
#[derive(Debug, Clone, Copy)]
enum Framing {
    Length,
    /// Chunked, in chunks of this many bytes.
    Chunked(usize),
    UntilClose,
    /// A `Content-Length` far larger than what follows (or than memory).
    Huge(u64),
}

fn framing() -> impl Strategy<Value = Framing> {
    prop_oneof![
        Just(Framing::Length),
        (1usize..5000).prop_map(Framing::Chunked),
        Just(Framing::UntilClose),
        prop_oneof![Just(u64::MAX), Just(1 << 31), 1u64..(1 << 40)].prop_map(Framing::Huge),
    ]
}

/// A well-formed response: some 1xx heads (occasionally thousands), then the final one.
fn valid_response() -> impl Strategy<Value = Vec<u8>> {
    let informational = prop_oneof![8 => 0usize..3, 1 => 1000usize..5000];
    (informational, 200u16..600, framing(), any::<bool>(), body()).prop_map(
        |(informational, status, framing, close, body)| {
            let mut out = Vec::new();
            for i in 0..informational {
                let code = if i % 2 == 0 { 103 } else { 100 };
                out.extend_from_slice(format!("HTTP/1.1 {code} Info\r\nlink: </a>\r\n\r\n").as_bytes());
            }
            out.extend_from_slice(format!("HTTP/1.1 {status} X\r\n").as_bytes());
            if close {
                out.extend_from_slice(b"connection: close\r\n");
            }
            match framing {
                Framing::Length => out.extend_from_slice(format!("content-length: {}\r\n\r\n", body.len()).as_bytes()),
                Framing::Huge(n) => out.extend_from_slice(format!("content-length: {n}\r\n\r\n").as_bytes()),
                Framing::Chunked(_) => out.extend_from_slice(b"transfer-encoding: chunked\r\n\r\n"),
                Framing::UntilClose => out.extend_from_slice(b"\r\n"),
            }
            match framing {
                Framing::Chunked(size) => {
                    for chunk in body.chunks(size) {
                        out.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
                        out.extend_from_slice(chunk);
                        out.extend_from_slice(b"\r\n");
                    }
                    out.extend_from_slice(b"0\r\n\r\n");
                }
                _ => out.extend_from_slice(&body),
            }
            out
        },
    )
}

/// A valid response with a few bytes replaced, and perhaps cut short.
fn mutated_response() -> impl Strategy<Value = Vec<u8>> {
    (
        valid_response(),
        prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..6),
        any::<Option<prop::sample::Index>>(),
    )
        .prop_map(|(mut bytes, flips, cut)| {
            if !bytes.is_empty() {
                for (at, b) in flips {
                    let at = at.index(bytes.len());
                    bytes[at] = b;
                }
                if let Some(cut) = cut {
                    bytes.truncate(cut.index(bytes.len()));
                }
            }
            bytes
        })
}

fn any_stream() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        2 => valid_response(),
        4 => mutated_response(),
        1 => prop::collection::vec(any::<u8>(), 0..4096),
    ]
}

/// The first pieces' sizes; the rest of the stream goes in 16 KiB writes.
fn cuts() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(1usize..600, 0..24)
}

fn policy() -> impl Strategy<Value = BodyPolicy> {
    prop_oneof![Just(BodyPolicy::Keep(1024)), Just(BodyPolicy::Keep(16 << 20)), Just(BodyPolicy::Discard)]
}

/// What one exchange came to.
struct Outcome {
    result: Result<RawResponse, ExchangeError>,
    /// The most the connection's buffers held, sampled after every poll.
    peak: usize,
}

async fn exchange(stream: Vec<u8>, cuts: Vec<usize>, method: Method, policy: BodyPolicy) -> Outcome {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (opened, accepted) = tokio::join!(super::Stream::open(addr, None), listener.accept());
    let (mut conn, mut server) = (Http1Connection::new(opened.unwrap().0), accepted.unwrap().0);
    let client = async move {
        let mut peak = 0;
        conn.begin(policy);
        let result = std::future::poll_fn(|cx| {
            let poll = conn.poll_exchange(cx, REQUEST, &method);
            peak = peak.max(conn.read.capacity() + conn.chunks.capacity());
            poll
        })
        .await;
        // Dropping the connection here makes the server's remaining writes fail, so that it
        // stops too.
        Outcome { result, peak }
    };
    let serve = async move {
        let mut rest = stream.as_slice();
        for cut in cuts.into_iter().chain(std::iter::repeat(16 * 1024)) {
            if rest.is_empty() {
                break;
            }
            let (piece, after) = rest.split_at(cut.min(rest.len()));
            rest = after;
            if server.write_all(piece).await.is_err() {
                return;
            }
            // Lets the client read this piece on its own before the next is written.
            tokio::task::yield_now().await;
        }
    };
    let (outcome, ()) = tokio::join!(client, serve);
    outcome
}

/// The most the buffers may hold: a head at its limit, a kept body at its limit, and room for
/// reads, each with the slack of a doubling allocation. It does not depend on what the server
/// sends.
fn bound(policy: BodyPolicy) -> usize {
    let kept = match policy {
        BodyPolicy::Keep(limit) => usize::try_from(limit).unwrap(),
        BodyPolicy::Discard => 0,
    };
    4 * (h1::MAX_HEAD_BYTES + h1::MAX_CHUNK_LINE + DISCARD_CHUNK + MAX_RESERVE.min(kept) + kept)
}

proptest! {
    // A case opens a loopback connection and moves up to 1.5 MiB: a few milliseconds in a debug
    // build. Enough cases that each combination of framing, body size and policy comes up.
    #![proptest_config(Config { cases: 512, failure_persistence: None, ..Config::default() })]

    #[test]
    fn the_reader_always_ends_within_its_bounds(
        stream in any_stream(),
        cuts in cuts(),
        head in any::<bool>(),
        policy in policy(),
    ) {
        let method = if head { Method::HEAD } else { Method::GET };
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let outcome = runtime.block_on(async {
            // The server closes after its last byte: every exchange must end by then.
            tokio::time::timeout(Duration::from_secs(20), exchange(stream, cuts, method, policy)).await
        });
        let outcome = outcome.expect("the exchange did not end after the server closed");
        prop_assert!(outcome.peak <= bound(policy), "buffers reached {} bytes, above {}", outcome.peak, bound(policy));
        match (&outcome.result, policy) {
            (Ok(response), BodyPolicy::Keep(limit)) => {
                prop_assert!(response.body().len() as u64 <= limit);
                prop_assert_eq!(response.body_len, response.body().len() as u64);
            }
            (Ok(response), BodyPolicy::Discard) => prop_assert!(response.body().is_empty()),
            (Err(_), _) => {}
        }
    }

    #[test]
    fn heads_and_chunks_never_panic(
        bytes in prop_oneof![prop::collection::vec(any::<u8>(), 0..2048), mutated_response().prop_map(|mut b| { b.truncate(8192); b })],
        cuts in prop::collection::vec(1usize..300, 1..32),
    ) {
        if let Ok(Some(head)) = h1::parse_head(&bytes, &Method::GET) {
            prop_assert!(head.len <= bytes.len());
        }
        // The same bytes as a chunked body, arriving in pieces.
        let mut state = Chunked::Size;
        let mut input = BytesMut::new();
        let mut kept = 0usize;
        let mut fed = 0usize;
        for cut in cuts.iter().copied().cycle() {
            if fed >= bytes.len() || state == Chunked::Done {
                break;
            }
            let end = (fed + cut).min(bytes.len());
            input.extend_from_slice(&bytes[fed..end]);
            fed = end;
            match h1::decode_chunked(state, &mut input, |data: &[u8]| -> Result<(), ProtocolError> {
                kept += data.len();
                Ok(())
            }) {
                Ok(next) => state = next,
                Err(_) => break,
            }
            prop_assert!(input.len() <= h1::MAX_HEAD_BYTES.max(h1::MAX_CHUNK_LINE) + cut, "undecoded input grew to {}", input.len());
        }
        prop_assert!(kept <= fed);
    }
}
