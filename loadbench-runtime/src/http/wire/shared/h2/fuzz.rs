//! Property tests of the frame reader, as `connection/fuzz.rs` has them for HTTP/1.1: the bytes
//! a server sends (arbitrary, arbitrary frames, or a valid response whose header block is cut
//! into CONTINUATION frames and whose body into DATA frames, mutated or not) arrive in reads of
//! arbitrary sizes and go through the driver's frame handling. Whatever arrives, it ends, nothing
//! panics, no header block is held past the header list's limit, a head's text stays within it;
//! and a valid response gives the same answer however it is cut.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::task::Waker;

use bytes::{Buf, Bytes, BytesMut};
use http::{HeaderMap, Method};
use proptest::prelude::*;

use super::driver::{Ended, Receiver, check_head};
use super::frame::{self, HEADER_LEN, Head};
use super::streams::Conn;
use crate::http::wire::connection::BodyPolicy;
use crate::http::wire::shared::{Failure, Outgoing, Reply, Slots};

/// A small limit, so that generated responses pass it often.
const LIMIT: u32 = 4_096;

/// The connection and its one request's slot.
fn connection() -> (Conn, Receiver, usize) {
    let mut conn = Conn::new(false, b"h", "127.0.0.1:1".parse().unwrap(), LIMIT);
    let (headers, body) = (HeaderMap::new(), Bytes::new());
    let request = Outgoing {
        wire: b"",
        method: &Method::GET,
        path: "/",
        headers: &headers,
        body: &body,
        policy: BodyPolicy::Keep(1 << 20),
    };
    let index = conn.push(&request).unwrap();
    (conn, Receiver::new(LIMIT as usize), index)
}

/// Feeds `wire` in reads cut at `cuts`, handling every whole frame as the driver does; checks
/// the bounds after each frame.
fn feed(conn: &mut Conn, rx: &mut Receiver, wire: &[u8], cuts: &[prop::sample::Index]) -> Result<(), Ended> {
    let mut points: Vec<usize> = cuts.iter().map(|c| c.index(wire.len() + 1)).collect();
    points.push(wire.len());
    points.sort_unstable();
    let (mut input, mut from) = (BytesMut::new(), 0);
    for to in points {
        input.extend_from_slice(&wire[from..to]);
        from = to;
        let mut at = 0;
        while let Some(head) = Head::parse(&input[at..]) {
            check_head(conn, head)?;
            let end = at + HEADER_LEN + head.len;
            if input.len() < end {
                break;
            }
            rx.frame(conn, head, &input[at + HEADER_LEN..end])?;
            assert!(rx.held() <= LIMIT as usize, "{} bytes of header block held", rx.held());
            at = end;
        }
        input.advance(at);
    }
    Ok(())
}

/// The request's outcome, if it has one.
fn outcome(conn: &mut Conn, index: usize) -> Option<Result<Reply, Failure>> {
    conn.take(index, Waker::noop())
}

fn frame_bytes(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = BytesMut::new();
    frame::head(&mut out, payload.len(), kind, flags, stream);
    out.extend_from_slice(payload);
    out.to_vec()
}

/// A valid response on stream 1: `fields` after `:status: 200`, with its `content-length`;
/// its block cut into HEADERS and CONTINUATION frames at `block_cuts`, its body into DATA
/// frames at `body_cuts`. Preceded by the server's SETTINGS.
fn response(fields: &[(String, String)], body: &[u8], block_cuts: &[usize], body_cuts: &[usize]) -> Vec<u8> {
    let mut block = vec![0x88];
    let length = body.len().to_string();
    for (name, value) in fields.iter().map(|(n, v)| (n.as_str(), v.as_str())).chain([("content-length", &*length)]) {
        block.push(0);
        block.push(u8::try_from(name.len()).unwrap());
        block.extend_from_slice(name.as_bytes());
        block.push(u8::try_from(value.len()).unwrap());
        block.extend_from_slice(value.as_bytes());
    }
    let mut wire = frame_bytes(frame::SETTINGS, 0, 0, &[]);
    let pieces = split(&block, block_cuts);
    for (i, piece) in pieces.iter().enumerate() {
        let kind = if i == 0 { frame::HEADERS } else { frame::CONTINUATION };
        let end_headers = if i + 1 == pieces.len() { frame::END_HEADERS } else { 0 };
        let end_stream = if i == 0 && body.is_empty() { frame::END_STREAM } else { 0 };
        wire.extend(frame_bytes(kind, end_headers | end_stream, 1, piece));
    }
    if !body.is_empty() {
        let pieces = split(body, body_cuts);
        for (i, piece) in pieces.iter().enumerate() {
            let end_stream = if i + 1 == pieces.len() { frame::END_STREAM } else { 0 };
            wire.extend(frame_bytes(frame::DATA, end_stream, 1, piece));
        }
    }
    wire
}

/// `bytes` cut at `cuts` (clamped, sorted), each piece at most a frame.
fn split<'a>(bytes: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
    let mut points: Vec<usize> = cuts.iter().map(|&c| c.min(bytes.len())).collect();
    points.sort_unstable();
    points.dedup();
    let mut pieces = Vec::new();
    let mut from = 0;
    for to in points.into_iter().chain([bytes.len()]) {
        let mut piece = &bytes[from..to.max(from)];
        while piece.len() > frame::DEFAULT_MAX_FRAME {
            pieces.push(&piece[..frame::DEFAULT_MAX_FRAME]);
            piece = &piece[frame::DEFAULT_MAX_FRAME..];
        }
        pieces.push(piece);
        from = to.max(from);
    }
    pieces
}

fn fields() -> impl Strategy<Value = Vec<(String, String)>> {
    prop::collection::vec(("x-[a-z0-9]{1,20}", "[ -~]{0,100}".prop_map(|v| v.trim().to_owned())), 0..60)
}

/// Arbitrary frames after the server's SETTINGS: any kind (mostly those the client reads), any
/// flags, streams 0 to 3, payloads up to 300 bytes.
fn frames() -> impl Strategy<Value = Vec<u8>> {
    let one =
        (prop_oneof![8 => 0u8..10, 1 => any::<u8>()], any::<u8>(), 0u32..4, prop::collection::vec(any::<u8>(), 0..300));
    prop::collection::vec(one, 0..30).prop_map(|frames| {
        let mut wire = frame_bytes(frame::SETTINGS, 0, 0, &[]);
        for (kind, flags, stream, payload) in frames {
            wire.extend(frame_bytes(kind, flags, stream, &payload));
        }
        wire
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn a_valid_response_is_the_same_however_it_is_cut(
        fields in fields(),
        body in prop::collection::vec(any::<u8>(), 0..40_000),
        block_cuts in prop::collection::vec(0usize..8_000, 0..5),
        body_cuts in prop::collection::vec(0usize..40_000, 0..5),
        reads in prop::collection::vec(any::<prop::sample::Index>(), 0..20),
    ) {
        let wire = response(&fields, &body, &block_cuts, &body_cuts);
        let (mut conn, mut rx, index) = connection();
        let fed = feed(&mut conn, &mut rx, &wire, &reads);
        let length = body.len().to_string();
        let size: usize = fields.iter().map(|(n, v)| n.len() + v.len() + 32).sum::<usize>() + 42 + 46 + length.len();
        let block_len: usize = 1 + fields.iter().map(|(n, v)| 3 + n.len() + v.len()).sum::<usize>() + 17 + length.len();
        let continued = split(&vec![0; block_len], &block_cuts).len() > 1;
        if continued && block_len > LIMIT as usize {
            // Buffered past the limit: the connection's error, its HPACK table lost.
            prop_assert!(matches!(fed, Err(Ended::Protocol(frame::COMPRESSION_ERROR, _))), "{:?}", fed);
        } else if size > LIMIT as usize {
            prop_assert!(fed.is_ok());
            let failure = outcome(&mut conn, index).expect("an outcome").expect_err("past the limit");
            prop_assert_eq!(failure.error.kind(), crate::error::ErrorKind::Protocol);
        } else {
            prop_assert!(fed.is_ok(), "{:?}", fed);
            let reply = outcome(&mut conn, index).expect("an answer").expect("a response");
            prop_assert_eq!(reply.response.bytes(), &body[..]);
            let map = reply.response.headers();
            prop_assert_eq!(map.len(), fields.len() + 1);
            for (name, value) in &fields {
                prop_assert!(map.get_all(name.as_str()).iter().any(|v| v.as_bytes() == value.as_bytes()));
            }
        }
    }

    #[test]
    fn arbitrary_frames_and_bytes_end_within_bounds(
        wire in prop_oneof![frames(), prop::collection::vec(any::<u8>(), 0..4_000)],
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..3),
        reads in prop::collection::vec(any::<prop::sample::Index>(), 0..20),
    ) {
        let mut wire = wire;
        if !wire.is_empty() {
            for (at, b) in flips {
                let at = at.index(wire.len());
                wire[at] ^= b;
            }
        }
        let (mut conn, mut rx, index) = connection();
        let _ = feed(&mut conn, &mut rx, &wire, &reads);
        if let Some(Ok(reply)) = outcome(&mut conn, index) {
            prop_assert!(reply.response.headers().len() <= LIMIT as usize / 32);
        }
    }

    #[test]
    fn a_mutated_response_ends_within_bounds(
        fields in fields(),
        body in prop::collection::vec(any::<u8>(), 0..2_000),
        block_cuts in prop::collection::vec(0usize..4_000, 0..4),
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
        cut in any::<prop::sample::Index>(),
        reads in prop::collection::vec(any::<prop::sample::Index>(), 0..10),
    ) {
        let mut wire = response(&fields, &body, &block_cuts, &[]);
        // Past the server's SETTINGS, which would otherwise end most runs at once.
        for (at, b) in flips {
            let at = HEADER_LEN + at.index(wire.len() - HEADER_LEN);
            wire[at] ^= b;
        }
        wire.truncate(HEADER_LEN + cut.index(wire.len() - HEADER_LEN + 1));
        let (mut conn, mut rx, index) = connection();
        let _ = feed(&mut conn, &mut rx, &wire, &reads);
        if let Some(Ok(reply)) = outcome(&mut conn, index) {
            prop_assert!(reply.response.headers().len() <= LIMIT as usize / 32);
        }
    }
}
