//! The task that owns an HTTP/2 connection's socket: it writes the frames the users queued
//! (all of them in one write), reads the server's frames and hands each stream its response.
//! A response's header blocks are `blocks.rs`'s.

mod blocks;

use std::cell::RefCell;
use std::future::Future;
use std::io;
use std::pin::{Pin, pin};
use std::rc::Rc;
use std::task::{Context, Poll};

use bytes::{Buf, BytesMut};
use tokio::io::{AsyncReadExt, AsyncWrite};

use self::blocks::{Continued, end_stream, protocol_failure};
use super::frame::{self, HEADER_LEN, Head};
use super::hpack;
use super::streams::{Conn, too_large};
use super::{CONNECTION_WINDOW, STREAM_WINDOW};
use crate::error::{Error, ErrorKind};
use crate::http::wire::connection::BodyPolicy;
use crate::http::wire::shared::Failure;
use crate::http::wire::stream::Stream;
use crate::http::wire::tls::Cause;

/// Why a connection ended.
#[derive(Debug)]
pub(super) enum Ended {
    /// The server closed it.
    Eof,
    Io(io::Error),
    /// The server broke the protocol: the error code this client's GOAWAY gives, and what.
    Protocol(u32, &'static str),
}

/// A connection's driver; ends when the connection does.
pub(super) struct Driver {
    conn: Rc<RefCell<Conn>>,
    stream: Stream,
    /// Bytes read and not yet made into frames.
    input: BytesMut,
    rx: Receiver,
    /// Whether a TLS session may hold written records that still need a flush.
    flush: bool,
}

/// What reading frames keeps between them.
pub(super) struct Receiver {
    responses: hpack::Responses,
    /// Bodies that came in one DATA frame, split off into each response: one allocation for
    /// many responses.
    bodies: BytesMut,
    /// A header block that goes on in CONTINUATION frames.
    continuation: Option<Continued>,
    /// The connection's receive window, and what arrived since some was given back.
    window: i64,
    unacked: u32,
}

impl Driver {
    pub(super) fn new(conn: Rc<RefCell<Conn>>, stream: Stream) -> Driver {
        let rx = Receiver::new(conn.borrow().max_header_list);
        Driver { conn, stream, input: BytesMut::with_capacity(16 * 1024), rx, flush: false }
    }

    /// Handles every whole frame read, then reads more: `Ok(true)` when bytes came in.
    fn poll_read(&mut self, cx: &mut Context<'_>, conn: &mut Conn) -> Result<bool, Ended> {
        let mut at = 0;
        while let Some(head) = Head::parse(&self.input[at..]) {
            check_head(conn, head)?;
            let end = at + HEADER_LEN + head.len;
            if self.input.len() < end {
                break;
            }
            self.rx.frame(conn, head, &self.input[at + HEADER_LEN..end])?;
            at = end;
        }
        self.input.advance(at);
        if conn.output_full() {
            // The server is not reading what it made this client queue: nothing more is read
            // until the socket takes some of it (the write's wake resumes reading).
            return Ok(false);
        }
        self.input.reserve(16 * 1024);
        // `read_buf`'s future holds nothing but its two references, so one made for each poll
        // loses nothing.
        match pin!(self.stream.read_buf(&mut self.input)).poll(cx) {
            Poll::Ready(Ok(0)) => Err(Ended::Eof),
            Poll::Ready(Ok(_)) => Ok(true),
            Poll::Ready(Err(e)) => Err(Ended::Io(e)),
            Poll::Pending => Ok(false),
        }
    }

    /// Writes what is queued: `Ok(true)` when something was written.
    fn poll_write(&mut self, cx: &mut Context<'_>, conn: &mut Conn) -> Result<bool, Ended> {
        if !conn.out.is_empty() {
            return match Pin::new(&mut self.stream).poll_write(cx, &conn.out) {
                Poll::Ready(Ok(0)) => Err(Ended::Eof),
                Poll::Ready(Ok(n)) => {
                    conn.wrote(n);
                    self.flush = self.stream.buffers_writes();
                    Ok(true)
                }
                Poll::Ready(Err(e)) => Err(Ended::Io(e)),
                Poll::Pending => Ok(false),
            };
        }
        if self.flush {
            return match Pin::new(&mut self.stream).poll_flush(cx) {
                Poll::Ready(Ok(())) => {
                    self.flush = false;
                    Ok(true)
                }
                Poll::Ready(Err(e)) => Err(Ended::Io(e)),
                Poll::Pending => Ok(false),
            };
        }
        Ok(false)
    }

    /// Ends the connection `why`: every request left fails, and a protocol error is told to the
    /// server in a GOAWAY, if the socket takes it at once.
    fn end(&mut self, cx: &mut Context<'_>, conn: &mut Conn, why: Ended) {
        let (https, answered, addr) = (conn.https, conn.answered, conn.addr);
        let code = match &why {
            Ended::Protocol(code, _) => Some(*code),
            _ => None,
        };
        let tls = match &why {
            Ended::Io(e) => Cause::of_session(e),
            _ => None,
        };
        let text = match &why {
            Ended::Eof => "the server closed the HTTP/2 connection".to_owned(),
            Ended::Io(e) => format!("request failed: {e}"),
            Ended::Protocol(code, what) => format!("the server broke HTTP/2 ({}): {what}", frame::reason(*code)),
        };
        let kind = if code.is_some() { ErrorKind::Protocol } else { ErrorKind::Io };
        conn.fail_all(&|| {
            let error = if let Some(cause) = &tls {
                // As `Ctx::exchange` reports a TLS 1.3 server's refusal of the client's certificate.
                Error::new(ErrorKind::Tls, format!("TLS handshake with {addr} failed: {}", cause.text))
            } else if !https && !answered {
                // Prior knowledge (`--http2` on `http://`) to a server that never answered in
                // HTTP/2: say what is most likely wrong.
                Error::new(
                    kind,
                    format!(
                        "{text}; the server never answered in HTTP/2: does it speak HTTP/2 without TLS? \
                         (--http2 and http2 = true on http:// send HTTP/2 with prior knowledge, h2c)"
                    ),
                )
            } else {
                Error::new(kind, text.clone())
            };
            Failure::new(error, false)
        });
        if let Some(code) = code {
            conn.out.clear();
            frame::goaway(&mut conn.out, 0, code);
            let _ = Pin::new(&mut self.stream).poll_write(cx, &conn.out);
        }
    }
}

impl Future for Driver {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        let conn = Rc::clone(&this.conn);
        let mut conn = conn.borrow_mut();
        conn.driver.polled(cx);
        loop {
            if conn.closing {
                // The lane is gone: a polite GOAWAY if the socket takes it at once, then close.
                conn.out.clear();
                frame::goaway(&mut conn.out, 0, frame::NO_ERROR);
                let _ = Pin::new(&mut this.stream).poll_write(cx, &conn.out);
                conn.fail_all(&|| Failure::new(Error::new(ErrorKind::Io, "the HTTP/2 connection was closed"), false));
                return Poll::Ready(());
            }
            // Every frame already in is handled first, so that what they free is filled by one
            // write; then a write, which lets more frames come. Pending on both registers the
            // socket's wakers.
            loop {
                match this.poll_read(cx, &mut conn) {
                    Ok(true) => {}
                    Ok(false) => break,
                    Err(why) => {
                        this.end(cx, &mut conn, why);
                        return Poll::Ready(());
                    }
                }
            }
            conn.open_pending();
            if conn.idle_and_gone() && conn.out.is_empty() {
                return Poll::Ready(());
            }
            match this.poll_write(cx, &mut conn) {
                Ok(true) => {}
                Ok(false) => return Poll::Pending,
                Err(why) => {
                    this.end(cx, &mut conn, why);
                    return Poll::Ready(());
                }
            }
        }
    }
}

/// A frame's header, before its payload is waited for: the server's first frame must be its
/// SETTINGS (its connection preface, RFC 9113, 3.4), and none may be larger than this client
/// allows.
pub(super) fn check_head(conn: &Conn, head: Head) -> Result<(), Ended> {
    if !conn.answered && (head.kind != frame::SETTINGS || head.has(frame::ACK)) {
        return Err(Ended::Protocol(frame::PROTOCOL_ERROR, "the server's first frame is not SETTINGS"));
    }
    if head.len > frame::DEFAULT_MAX_FRAME {
        return Err(Ended::Protocol(frame::FRAME_SIZE_ERROR, "a frame larger than this client allows"));
    }
    Ok(())
}

impl Receiver {
    /// What a connection whose header lists may cost `max_header_list` bytes starts with.
    pub(super) fn new(max_header_list: usize) -> Receiver {
        Receiver {
            responses: hpack::Responses::new(max_header_list),
            bodies: BytesMut::new(),
            continuation: None,
            window: i64::from(CONNECTION_WINDOW),
            unacked: 0,
        }
    }

    /// The bytes of a header block held until its CONTINUATION frames end it.
    #[cfg(test)]
    pub(super) fn held(&self) -> usize {
        self.continuation.as_ref().map_or(0, |continued| continued.block.len())
    }

    /// Handles one frame.
    pub(super) fn frame(&mut self, conn: &mut Conn, head: Head, payload: &[u8]) -> Result<(), Ended> {
        if let Some(continued) = &self.continuation
            && (head.kind != frame::CONTINUATION || head.stream != continued.stream)
        {
            return Err(Ended::Protocol(frame::PROTOCOL_ERROR, "a header block cut off by another frame"));
        }
        match head.kind {
            frame::DATA => self.data(conn, head, payload),
            frame::HEADERS => {
                let block = unpad(head, payload)?;
                let block = if head.has(frame::PRIORITY_FLAG) { block.get(5..) } else { Some(block) };
                let block = block.ok_or(Ended::Protocol(frame::PROTOCOL_ERROR, "a HEADERS frame too short"))?;
                if head.stream == 0 {
                    return Err(Ended::Protocol(frame::PROTOCOL_ERROR, "HEADERS on stream 0"));
                }
                if head.has(frame::END_HEADERS) {
                    self.header_block(conn, head.stream, block, head.has(frame::END_STREAM))
                } else {
                    self.continuation = Some(Continued::begin(conn, head.stream, block, head.has(frame::END_STREAM))?);
                    Ok(())
                }
            }
            frame::CONTINUATION => {
                let Some(mut continued) = self.continuation.take() else {
                    return Err(Ended::Protocol(frame::PROTOCOL_ERROR, "CONTINUATION without HEADERS"));
                };
                continued.take(conn, payload)?;
                if head.has(frame::END_HEADERS) {
                    self.header_block(conn, continued.stream, &continued.block, continued.end_stream)
                } else {
                    self.continuation = Some(continued);
                    Ok(())
                }
            }
            frame::RST_STREAM => {
                let code = u32_at(payload, head.len == 4)?;
                if head.stream == 0 {
                    return Err(Ended::Protocol(frame::PROTOCOL_ERROR, "RST_STREAM on stream 0"));
                }
                if let Some(index) = conn.stream(head.stream) {
                    let (kind, text, retry) = if code == frame::REFUSED_STREAM {
                        (ErrorKind::StreamReset, "the server refused the stream: REFUSED_STREAM".to_owned(), true)
                    } else {
                        (ErrorKind::StreamReset, format!("the server reset the stream: {}", frame::reason(code)), false)
                    };
                    conn.finish(index, Err(Failure::new(Error::new(kind, text), retry)));
                }
                Ok(())
            }
            frame::SETTINGS => self.settings(conn, head, payload),
            frame::PING => {
                if head.len != 8 || head.stream != 0 {
                    return Err(Ended::Protocol(frame::FRAME_SIZE_ERROR, "a PING not of 8 bytes on stream 0"));
                }
                if !head.has(frame::ACK) && !conn.ack(Some(payload)) {
                    return Err(too_many_acks());
                }
                Ok(())
            }
            frame::GOAWAY => {
                let last = u32_at(payload, head.len >= 8)? & 0x7fff_ffff;
                let code = u32_at(payload.get(4..).unwrap_or_default(), true)?;
                conn.go_away(last, code);
                Ok(())
            }
            frame::WINDOW_UPDATE => {
                let increment = i64::from(u32_at(payload, head.len == 4)? & 0x7fff_ffff);
                if increment == 0 {
                    return Err(Ended::Protocol(frame::PROTOCOL_ERROR, "a WINDOW_UPDATE of 0"));
                }
                let index = if head.stream == 0 { None } else { conn.stream(head.stream) };
                if (head.stream == 0 || index.is_some()) && !conn.grow_window(index, increment) {
                    return Err(Ended::Protocol(frame::FLOW_CONTROL_ERROR, "a window beyond 2^31 - 1"));
                }
                conn.send_bodies();
                Ok(())
            }
            frame::PUSH_PROMISE => Err(Ended::Protocol(frame::PROTOCOL_ERROR, "PUSH_PROMISE with push disabled")),
            // PRIORITY and unknown frames are ignored, as the protocol asks.
            _ => Ok(()),
        }
    }

    fn settings(&mut self, conn: &mut Conn, head: Head, payload: &[u8]) -> Result<(), Ended> {
        if head.stream != 0 {
            return Err(Ended::Protocol(frame::PROTOCOL_ERROR, "SETTINGS on a stream"));
        }
        if head.has(frame::ACK) {
            return Ok(());
        }
        if !head.len.is_multiple_of(6) {
            return Err(Ended::Protocol(frame::FRAME_SIZE_ERROR, "SETTINGS not a multiple of 6 bytes"));
        }
        if !conn.answered {
            // The server's first SETTINGS: without a limit of its own, streams are not limited.
            conn.answered = true;
            conn.max_streams = usize::MAX;
        }
        for param in payload.chunks_exact(6) {
            let value = u32::from_be_bytes([param[2], param[3], param[4], param[5]]);
            let id = u16::from_be_bytes([param[0], param[1]]);
            if id == frame::SETTINGS_INITIAL_WINDOW_SIZE {
                let value = i64::from(value);
                if value > frame::MAX_WINDOW || !conn.set_initial_window(value) {
                    return Err(Ended::Protocol(frame::FLOW_CONTROL_ERROR, "a window beyond 2^31 - 1"));
                }
                continue;
            }
            match id {
                frame::SETTINGS_MAX_CONCURRENT_STREAMS => {
                    conn.max_streams = usize::try_from(value).unwrap_or(usize::MAX);
                }
                frame::SETTINGS_MAX_FRAME_SIZE => {
                    if !(frame::DEFAULT_MAX_FRAME..=0xff_ffff).contains(&(value as usize)) {
                        return Err(Ended::Protocol(frame::PROTOCOL_ERROR, "a MAX_FRAME_SIZE out of range"));
                    }
                    conn.max_frame = value as usize;
                }
                // The table size bounds the server's decoder, whose table this client never
                // uses; push is the server's to refuse; unknown settings are ignored.
                _ => {}
            }
        }
        if !conn.ack(None) {
            return Err(too_many_acks());
        }
        conn.send_bodies();
        Ok(())
    }

    fn data(&mut self, conn: &mut Conn, head: Head, payload: &[u8]) -> Result<(), Ended> {
        if head.stream == 0 {
            return Err(Ended::Protocol(frame::PROTOCOL_ERROR, "DATA on stream 0"));
        }
        // The whole frame counts against the windows, padding included.
        let len = payload.len() as u32;
        self.window -= i64::from(len);
        if self.window < 0 {
            return Err(Ended::Protocol(frame::FLOW_CONTROL_ERROR, "DATA beyond the connection's window"));
        }
        self.unacked += len;
        if self.unacked >= CONNECTION_WINDOW / 2 {
            frame::window_update(&mut conn.out, 0, self.unacked);
            self.window += i64::from(self.unacked);
            self.unacked = 0;
        }
        let data = unpad(head, payload)?;
        // A stream this client cancelled, or one the server should not have sent on: its bytes
        // counted above are all that matters.
        let Some(index) = conn.stream(head.stream) else { return Ok(()) };
        let end = head.has(frame::END_STREAM);
        let slot = conn.slot_mut(index);
        slot.recv_window -= i64::from(len);
        if slot.recv_window < 0 {
            return Err(Ended::Protocol(frame::FLOW_CONTROL_ERROR, "DATA beyond a stream's window"));
        }
        if slot.head.is_none() {
            let failure = protocol_failure("DATA before the response's HEADERS");
            conn.reset(index, frame::PROTOCOL_ERROR, failure);
            return Ok(());
        }
        slot.body_in.len += data.len() as u64;
        if slot.content_length.is_some_and(|length| slot.body_in.len > length) {
            conn.reset(index, frame::PROTOCOL_ERROR, protocol_failure("DATA beyond the response's content-length"));
            return Ok(());
        }
        if let BodyPolicy::Keep(limit) = slot.policy {
            if slot.body_in.len > limit {
                conn.reset(index, frame::CANCEL, too_large(limit));
                return Ok(());
            }
            // Behind the head, so that the response holds the two as one `Bytes`.
            let head = slot.head.as_ref().map_or(&[][..], |(_, head, _)| &head[..]);
            if end && slot.body_in.kept.is_empty() {
                // The whole body in one frame, the common case: copied into the chunk shared by
                // such bodies rather than into an allocation of its own.
                super::reserve_chunk(&mut self.bodies, head.len() + data.len());
                self.bodies.extend_from_slice(head);
                self.bodies.extend_from_slice(data);
                slot.body_in.kept = self.bodies.split();
            } else {
                if slot.body_in.kept.is_empty() {
                    slot.body_in.kept.extend_from_slice(head);
                }
                slot.body_in.kept.extend_from_slice(data);
            }
        }
        if end {
            end_stream(conn, index);
            return Ok(());
        }
        slot.recv_unacked += len;
        if slot.recv_unacked >= STREAM_WINDOW / 2 {
            let (id, unacked) = (slot.id, slot.recv_unacked);
            slot.recv_window += i64::from(unacked);
            slot.recv_unacked = 0;
            frame::window_update(&mut conn.out, id, unacked);
        }
        Ok(())
    }
}

/// The end of a connection whose server sends PING or SETTINGS frames faster than it reads
/// their acknowledgements.
fn too_many_acks() -> Ended {
    Ended::Protocol(
        frame::ENHANCE_YOUR_CALM,
        "PING or SETTINGS frames sent faster than their acknowledgements are read (over 1,000 waiting)",
    )
}

/// A frame's payload less its padding.
fn unpad(head: Head, payload: &[u8]) -> Result<&[u8], Ended> {
    if !head.has(frame::PADDED) {
        return Ok(payload);
    }
    match payload.first() {
        // `pad < len`, so `len - pad >= 1`.
        Some(&pad) if usize::from(pad) < payload.len() => Ok(&payload[1..payload.len() - usize::from(pad)]),
        _ => Err(Ended::Protocol(frame::PROTOCOL_ERROR, "padding longer than its frame")),
    }
}

/// The big-endian `u32` at the start of `payload`, when `ok` says its frame is well formed.
fn u32_at(payload: &[u8], ok: bool) -> Result<u32, Ended> {
    match payload.get(..4) {
        Some(b) if ok => Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]])),
        _ => Err(Ended::Protocol(frame::FRAME_SIZE_ERROR, "a frame of the wrong size")),
    }
}
