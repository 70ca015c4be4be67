//! HTTP/2's frames (RFC 9113, section 4 and 6): the nine-byte header, and the frames a client
//! writes, appended to the connection's output buffer.

use bytes::{BufMut, BytesMut};

/// The connection preface a client sends first (RFC 9113, 3.4).
pub(super) const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// The length of every frame's header.
pub(super) const HEADER_LEN: usize = 9;

/// The largest frame payload either side may send before the peer's SETTINGS say otherwise,
/// and the largest this client accepts (it advertises no other).
pub(super) const DEFAULT_MAX_FRAME: usize = 16_384;

/// Every window's size before SETTINGS or WINDOW_UPDATE change it.
pub(super) const DEFAULT_WINDOW: i64 = 65_535;

/// The largest a flow-control window may grow.
pub(super) const MAX_WINDOW: i64 = (1 << 31) - 1;

pub(super) const DATA: u8 = 0x0;
pub(super) const HEADERS: u8 = 0x1;
pub(super) const RST_STREAM: u8 = 0x3;
pub(super) const SETTINGS: u8 = 0x4;
pub(super) const PUSH_PROMISE: u8 = 0x5;
pub(super) const PING: u8 = 0x6;
pub(super) const GOAWAY: u8 = 0x7;
pub(super) const WINDOW_UPDATE: u8 = 0x8;
pub(super) const CONTINUATION: u8 = 0x9;

pub(super) const END_STREAM: u8 = 0x1;
pub(super) const ACK: u8 = 0x1;
pub(super) const END_HEADERS: u8 = 0x4;
pub(super) const PADDED: u8 = 0x8;
pub(super) const PRIORITY_FLAG: u8 = 0x20;

pub(super) const SETTINGS_ENABLE_PUSH: u16 = 0x2;
pub(super) const SETTINGS_MAX_CONCURRENT_STREAMS: u16 = 0x3;
pub(super) const SETTINGS_INITIAL_WINDOW_SIZE: u16 = 0x4;
pub(super) const SETTINGS_MAX_FRAME_SIZE: u16 = 0x5;
pub(super) const SETTINGS_MAX_HEADER_LIST_SIZE: u16 = 0x6;

/// Error codes (RFC 9113, 7).
pub(super) const NO_ERROR: u32 = 0x0;
pub(super) const PROTOCOL_ERROR: u32 = 0x1;
pub(super) const FLOW_CONTROL_ERROR: u32 = 0x3;
pub(super) const FRAME_SIZE_ERROR: u32 = 0x6;
pub(super) const REFUSED_STREAM: u32 = 0x7;
pub(super) const CANCEL: u32 = 0x8;
pub(super) const COMPRESSION_ERROR: u32 = 0x9;
pub(super) const ENHANCE_YOUR_CALM: u32 = 0xb;

/// An error code's name, as the RFC spells it.
pub(super) fn reason(code: u32) -> String {
    const NAMES: [&str; 14] = [
        "NO_ERROR",
        "PROTOCOL_ERROR",
        "INTERNAL_ERROR",
        "FLOW_CONTROL_ERROR",
        "SETTINGS_TIMEOUT",
        "STREAM_CLOSED",
        "FRAME_SIZE_ERROR",
        "REFUSED_STREAM",
        "CANCEL",
        "COMPRESSION_ERROR",
        "CONNECT_ERROR",
        "ENHANCE_YOUR_CALM",
        "INADEQUATE_SECURITY",
        "HTTP_1_1_REQUIRED",
    ];
    match usize::try_from(code).ok().and_then(|i| NAMES.get(i)) {
        Some(name) => (*name).to_owned(),
        None => format!("error code {code:#x}"),
    }
}

/// A frame's header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Head {
    pub(super) len: usize,
    pub(super) kind: u8,
    pub(super) flags: u8,
    pub(super) stream: u32,
}

impl Head {
    /// The header at the start of `bytes`, if all nine bytes are there.
    pub(super) fn parse(bytes: &[u8]) -> Option<Head> {
        let b: &[u8; HEADER_LEN] = bytes.get(..HEADER_LEN)?.try_into().ok()?;
        Some(Head {
            len: usize::from(b[0]) << 16 | usize::from(b[1]) << 8 | usize::from(b[2]),
            kind: b[3],
            flags: b[4],
            // The reserved bit is ignored on receipt.
            stream: u32::from_be_bytes([b[5], b[6], b[7], b[8]]) & 0x7fff_ffff,
        })
    }

    pub(super) fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }
}

/// Appends a frame's header.
pub(super) fn head(out: &mut BytesMut, len: usize, kind: u8, flags: u8, stream: u32) {
    // Every caller's payload is at most the peer's frame size (at most 2^24 - 1).
    let len = u32::try_from(len).unwrap_or(u32::MAX).min(0xff_ffff);
    out.put_slice(&len.to_be_bytes()[1..]);
    out.put_u8(kind);
    out.put_u8(flags);
    out.put_u32(stream & 0x7fff_ffff);
}

/// SETTINGS with the given parameters.
pub(super) fn settings(out: &mut BytesMut, params: &[(u16, u32)]) {
    head(out, params.len() * 6, SETTINGS, 0, 0);
    for &(id, value) in params {
        out.put_u16(id);
        out.put_u32(value);
    }
}

pub(super) fn settings_ack(out: &mut BytesMut) {
    head(out, 0, SETTINGS, ACK, 0);
}

pub(super) fn window_update(out: &mut BytesMut, stream: u32, increment: u32) {
    head(out, 4, WINDOW_UPDATE, 0, stream);
    out.put_u32(increment & 0x7fff_ffff);
}

pub(super) fn rst_stream(out: &mut BytesMut, stream: u32, code: u32) {
    head(out, 4, RST_STREAM, 0, stream);
    out.put_u32(code);
}

pub(super) fn ping_ack(out: &mut BytesMut, payload: &[u8]) {
    head(out, payload.len(), PING, ACK, 0);
    out.put_slice(payload);
}

pub(super) fn goaway(out: &mut BytesMut, last_stream: u32, code: u32) {
    head(out, 8, GOAWAY, 0, 0);
    out.put_u32(last_stream & 0x7fff_ffff);
    out.put_u32(code);
}

/// A header block as HEADERS, and CONTINUATION frames for what exceeds the peer's frame size.
pub(super) fn headers(out: &mut BytesMut, stream: u32, block: &[u8], end_stream: bool, max_frame: usize) {
    let max_frame = max_frame.max(1);
    let mut chunks = block.chunks(max_frame).peekable();
    let first = chunks.next().unwrap_or_default();
    let mut flags = if end_stream { END_STREAM } else { 0 };
    if chunks.peek().is_none() {
        flags |= END_HEADERS;
    }
    out.reserve(HEADER_LEN + block.len());
    head(out, first.len(), HEADERS, flags, stream);
    out.put_slice(first);
    while let Some(chunk) = chunks.next() {
        let flags = if chunks.peek().is_none() { END_HEADERS } else { 0 };
        head(out, chunk.len(), CONTINUATION, flags, stream);
        out.put_slice(chunk);
    }
}

/// One DATA frame.
pub(super) fn data(out: &mut BytesMut, stream: u32, payload: &[u8], end_stream: bool) {
    head(out, payload.len(), DATA, if end_stream { END_STREAM } else { 0 }, stream);
    out.put_slice(payload);
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_header_round_trips_and_the_reserved_bit_is_ignored() {
        let mut out = BytesMut::new();
        head(&mut out, 0x01_0203, HEADERS, END_HEADERS, 5);
        assert_eq!(Head::parse(&out), Some(Head { len: 0x01_0203, kind: HEADERS, flags: END_HEADERS, stream: 5 }));
        out[5] |= 0x80;
        assert_eq!(Head::parse(&out).unwrap().stream, 5);
        assert_eq!(Head::parse(&out[..8]), None);
    }

    #[test]
    fn a_block_larger_than_a_frame_goes_on_in_continuation_frames() {
        let mut out = BytesMut::new();
        headers(&mut out, 3, &[7; 10], true, 4);
        let mut frames = Vec::new();
        let mut rest = &out[..];
        while let Some(h) = Head::parse(rest) {
            frames.push((h.kind, h.flags, h.len));
            rest = &rest[HEADER_LEN + h.len..];
        }
        assert_eq!(frames, [(HEADERS, END_STREAM, 4), (CONTINUATION, 0, 4), (CONTINUATION, END_HEADERS, 2)]);
        let mut one = BytesMut::new();
        headers(&mut one, 3, &[7; 4], false, 4);
        assert_eq!(Head::parse(&one).unwrap().flags, END_HEADERS);
    }

    #[test]
    fn error_codes_have_their_names() {
        assert_eq!(reason(0x2), "INTERNAL_ERROR");
        assert_eq!(reason(REFUSED_STREAM), "REFUSED_STREAM");
        assert_eq!(reason(0x42), "error code 0x42");
    }
}
