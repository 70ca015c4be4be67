//! A response's header blocks, once whole: decoded (always: the HPACK table is the
//! connection's), then its stream's head, an informational head or its trailers, or its
//! refusal; how long a block may grow in CONTINUATION frames; the end of a stream, checked
//! against its `content-length`.

use super::super::frame;
use super::super::hpack::{DecodeError, Refusal};
use super::super::streams::{Conn, too_large};
use super::{Ended, Receiver};
use crate::error::{Error, ErrorKind};
use crate::http::wire::connection::BodyPolicy;
use crate::http::wire::shared::Failure;

impl Receiver {
    /// A whole header block of `stream`: decoded in any case (it changes the connection's
    /// table), then its stream's response head, its trailers, or an informational head.
    pub(super) fn header_block(
        &mut self,
        conn: &mut Conn,
        stream: u32,
        block: &[u8],
        end_stream: bool,
    ) -> Result<(), Ended> {
        let index = conn.stream(stream);
        let trailers = index.is_some_and(|index| conn.slot_mut(index).head.is_some());
        let decoded = if trailers {
            self.responses.trailers(block).map(|()| None)
        } else {
            self.responses.decode(block).map(Some)
        };
        let decoded = match decoded {
            Ok(decoded) => decoded,
            Err(DecodeError::Compression) => {
                return Err(Ended::Protocol(frame::COMPRESSION_ERROR, "a header block HPACK cannot decode"));
            }
            Err(DecodeError::Refused(refusal)) => {
                if let Some(index) = index {
                    refuse(conn, index, refusal);
                }
                return Ok(());
            }
        };
        let Some(index) = index else {
            // A stream this client cancelled.
            return Ok(());
        };
        let Some((decoded, head)) = decoded else {
            // Trailers: nothing in them is kept; they end the stream (RFC 9113, 8.1).
            if end_stream {
                self::end_stream(conn, index);
            } else {
                conn.reset(index, frame::PROTOCOL_ERROR, protocol_failure("trailers that do not end the stream"));
            }
            return Ok(());
        };
        if decoded.status.is_informational() {
            if end_stream {
                conn.reset(index, frame::PROTOCOL_ERROR, protocol_failure("a stream ended without a final response"));
            }
            return Ok(());
        }
        let slot = conn.slot_mut(index);
        // A response to HEAD, a 204 or a 304 has no content whatever its length says
        // (RFC 9113, 8.1.1); any other is held to it.
        let no_content = slot.head_request || matches!(decoded.status.as_u16(), 204 | 304);
        let content_length = if no_content { None } else { decoded.content_length };
        if let BodyPolicy::Keep(limit) = slot.policy
            && content_length.is_some_and(|len| len > limit)
        {
            // Refused before a byte of the body is read.
            conn.reset(index, frame::CANCEL, too_large(limit));
            return Ok(());
        }
        slot.content_length = content_length;
        slot.head = Some((decoded.status, head, decoded.sets_cookie));
        if end_stream {
            self::end_stream(conn, index);
        }
        Ok(())
    }
}

/// A header block that goes on in CONTINUATION frames, buffered whole before it is decoded.
///
/// Never beyond the header list's limit: past it the block is not decoded at all, which loses
/// the connection's HPACK table (RFC 9113, 4.3: a connection error, `COMPRESSION_ERROR`). An
/// encoder's block is no larger than the list it encodes (a field's name and value, sent as
/// literals, cost less than the 32 bytes the list counts; indexed ones a byte or two), so a block
/// this large would have been refused anyway: only its stream's neighbours are lost with it. Nor
/// in more frames than the limit needs, as the `h2` crate counts them (a quarter more than full
/// frames would take, at least 16): endless empty frames hold no memory but never end the block
/// (`ENHANCE_YOUR_CALM`).
pub(super) struct Continued {
    pub(super) stream: u32,
    pub(super) block: Vec<u8>,
    /// Whether its HEADERS ended the stream.
    pub(super) end_stream: bool,
    /// The CONTINUATION frames it took so far.
    frames: usize,
}

impl Continued {
    /// A block that HEADERS without END_HEADERS begins with `fragment`.
    pub(super) fn begin(conn: &Conn, stream: u32, fragment: &[u8], end_stream: bool) -> Result<Continued, Ended> {
        let mut continued = Continued { stream, block: Vec::new(), end_stream, frames: 0 };
        continued.grow(conn, fragment)?;
        Ok(continued)
    }

    /// Takes a CONTINUATION frame's `fragment`.
    pub(super) fn take(&mut self, conn: &Conn, fragment: &[u8]) -> Result<(), Ended> {
        self.frames += 1;
        let full = (conn.max_header_list / frame::DEFAULT_MAX_FRAME).max(1);
        if self.frames > (full + full / 4).max(16) {
            return Err(Ended::Protocol(frame::ENHANCE_YOUR_CALM, "too many CONTINUATION frames in one header block"));
        }
        self.grow(conn, fragment)
    }

    fn grow(&mut self, conn: &Conn, fragment: &[u8]) -> Result<(), Ended> {
        if self.block.len().saturating_add(fragment.len()) > conn.max_header_list {
            return Err(Ended::Protocol(frame::COMPRESSION_ERROR, "a header block larger than the header list limit"));
        }
        self.block.extend_from_slice(fragment);
        Ok(())
    }
}

/// The end of `index`'s stream: its response, unless its body disagrees with its
/// `content-length` (RFC 9113, 8.1.1).
pub(super) fn end_stream(conn: &mut Conn, index: usize) {
    let slot = conn.slot_mut(index);
    if slot.content_length.is_some_and(|length| slot.body_in.len != length) {
        conn.reset(index, frame::PROTOCOL_ERROR, protocol_failure("a body shorter than its content-length"));
        return;
    }
    conn.answer(index);
}

/// A response head refused though it decoded: its stream is reset, the connection goes on.
///
/// A header list past the limit is the client's to discard (RFC 9113, 10.5.1: "a client can
/// discard responses that it cannot process"); its block was decoded to its end all the same, so
/// the HPACK table is the server's and the connection is kept. The stream is cancelled (`CANCEL`:
/// the response is not wrong, this client does not take it), as a body past `max_body` is. A
/// malformed response is a stream error of type `PROTOCOL_ERROR` (RFC 9113, 8.1.1).
fn refuse(conn: &mut Conn, index: usize, refusal: Refusal) {
    match refusal {
        Refusal::TooLarge => {
            let text =
                format!("the server broke HTTP/2: response header list larger than {} bytes", conn.max_header_list);
            conn.reset(index, frame::CANCEL, Failure::new(Error::new(ErrorKind::Protocol, text), false));
        }
        Refusal::Malformed(what) => conn.reset(index, frame::PROTOCOL_ERROR, protocol_failure(what)),
    }
}

/// A stream the server answered against the protocol: its request's error.
pub(super) fn protocol_failure(what: &str) -> Failure {
    Failure::new(Error::new(ErrorKind::Protocol, format!("the server broke HTTP/2: {what}")), false)
}
