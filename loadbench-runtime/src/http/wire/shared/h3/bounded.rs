//! h3-quinn's streams, with every frame a server sends held to a limit before h3 buffers it
//! (`frames.rs` says why). A thin layer over h3's QUIC traits: each read is passed through
//! whole, after its bytes are followed frame by frame; the first frame announced past the limit
//! fails the stream (`H3_EXCESSIVE_LOAD` asked of the server) with [`FrameTooLarge`].
//!
//! Request streams and the server's control stream are read as frames. The server's other
//! unidirectional streams (QPACK's, whose dynamic table this client sets to zero, and the
//! reserved types) may carry at most the limit in all.
//!
//! `stop_sending` is passed on only while no read of the stream is pending: h3-quinn's panics
//! then (the stream is inside the pending read). Skipped, it costs nothing: a stream dropped
//! unfinished is stopped by quinn all the same.

use std::task::{Context, Poll};

use bytes::Bytes;
use h3::quic::{self, ConnectionErrorIncoming, StreamErrorIncoming, StreamId, WriteBuf};

use super::frames::{FrameLimit, FrameTooLarge, UNFRAMED, varint};

/// What the client asks of a server that sent too much on a stream (RFC 9114 § 8.1).
const H3_EXCESSIVE_LOAD: u64 = 0x107;

/// The type of the control stream (RFC 9114 § 6.2.1).
const CONTROL: u64 = 0x00;

/// A QUIC connection whose streams' frames are held to `limit` bytes.
pub(crate) struct Conn {
    inner: h3_quinn::Connection,
    limit: u64,
}

impl Conn {
    pub(super) fn new(connection: quinn::Connection, limit: u64) -> Conn {
        Conn { inner: h3_quinn::Connection::new(connection), limit }
    }
}

/// What opens a connection's request streams.
pub(crate) struct Opener {
    inner: h3_quinn::OpenStreams,
    limit: u64,
}

impl Clone for Opener {
    fn clone(&self) -> Opener {
        Opener { inner: self.inner.clone(), limit: self.limit }
    }
}

/// One of h3-quinn's streams, its reads followed and checked.
pub(crate) struct Checked<S> {
    inner: S,
    reading: Reading,
    /// Whether the last read returned `Pending`.
    pending: bool,
}

/// A request's stream.
pub(crate) type Bidi = Checked<h3_quinn::BidiStream<Bytes>>;

/// A stream the client only reads: a request stream's reading half, or one the server opened.
pub(crate) type Recv = Checked<h3_quinn::RecvStream>;

impl Bidi {
    fn new(inner: h3_quinn::BidiStream<Bytes>, limit: u64) -> Bidi {
        Checked { inner, reading: Reading::Frames(FrameLimit::new(limit)), pending: false }
    }
}

/// How a received stream's bytes are followed.
enum Reading {
    /// A request stream: frames.
    Frames(FrameLimit),
    /// A stream the server opened, before its type is known: its first bytes.
    Type { bytes: [u8; 8], len: usize, limit: u64 },
    /// Any other stream the server opened: the bytes it may still send.
    Capped { left: u64, limit: u64 },
}

impl Reading {
    fn feed(&mut self, mut bytes: &[u8]) -> Result<(), FrameTooLarge> {
        while !bytes.is_empty() {
            match self {
                Reading::Frames(frames) => return frames.feed(bytes),
                Reading::Capped { left, limit } => {
                    let n = bytes.len() as u64;
                    if n > *left {
                        return Err(FrameTooLarge { frame_type: UNFRAMED, length: *limit - *left + n, limit: *limit });
                    }
                    *left -= n;
                    return Ok(());
                }
                Reading::Type { bytes: head, len, limit } => {
                    head[*len] = bytes[0];
                    *len += 1;
                    bytes = &bytes[1..];
                    if let Some((stream_type, _)) = varint(&head[..*len]) {
                        let limit = *limit;
                        *self = if stream_type == CONTROL {
                            Reading::Frames(FrameLimit::new(limit))
                        } else {
                            Reading::Capped { left: limit, limit }
                        };
                    }
                }
            }
        }
        Ok(())
    }
}

/// Passes a read through once `reading` has followed it; a frame past the limit fails the
/// stream instead, and the server is asked to stop sending on it.
fn checked(
    read: Poll<Result<Option<Bytes>, StreamErrorIncoming>>,
    reading: &mut Reading,
    stop: impl FnOnce(u64),
) -> Poll<Result<Option<Bytes>, StreamErrorIncoming>> {
    if let Poll::Ready(Ok(Some(bytes))) = &read
        && let Err(too_large) = reading.feed(bytes)
    {
        stop(H3_EXCESSIVE_LOAD);
        return Poll::Ready(Err(StreamErrorIncoming::Unknown(Box::new(too_large))));
    }
    read
}

impl quic::Connection<Bytes> for Conn {
    type RecvStream = Recv;
    type OpenStreams = Opener;

    fn poll_accept_recv(&mut self, cx: &mut Context<'_>) -> Poll<Result<Recv, ConnectionErrorIncoming>> {
        let limit = self.limit;
        <h3_quinn::Connection as quic::Connection<Bytes>>::poll_accept_recv(&mut self.inner, cx)
            .map_ok(|inner| Checked { inner, reading: Reading::Type { bytes: [0; 8], len: 0, limit }, pending: false })
    }

    fn poll_accept_bidi(&mut self, cx: &mut Context<'_>) -> Poll<Result<Bidi, ConnectionErrorIncoming>> {
        let limit = self.limit;
        <h3_quinn::Connection as quic::Connection<Bytes>>::poll_accept_bidi(&mut self.inner, cx)
            .map_ok(|inner| Bidi::new(inner, limit))
    }

    fn opener(&self) -> Opener {
        Opener { inner: <h3_quinn::Connection as quic::Connection<Bytes>>::opener(&self.inner), limit: self.limit }
    }
}

impl quic::OpenStreams<Bytes> for Conn {
    type BidiStream = Bidi;
    type SendStream = h3_quinn::SendStream<Bytes>;

    fn poll_open_bidi(&mut self, cx: &mut Context<'_>) -> Poll<Result<Bidi, StreamErrorIncoming>> {
        let limit = self.limit;
        <h3_quinn::Connection as quic::OpenStreams<Bytes>>::poll_open_bidi(&mut self.inner, cx)
            .map_ok(|inner| Bidi::new(inner, limit))
    }

    fn poll_open_send(&mut self, cx: &mut Context<'_>) -> Poll<Result<Self::SendStream, StreamErrorIncoming>> {
        <h3_quinn::Connection as quic::OpenStreams<Bytes>>::poll_open_send(&mut self.inner, cx)
    }

    fn close(&mut self, code: h3::error::Code, reason: &[u8]) {
        <h3_quinn::Connection as quic::OpenStreams<Bytes>>::close(&mut self.inner, code, reason);
    }
}

impl quic::OpenStreams<Bytes> for Opener {
    type BidiStream = Bidi;
    type SendStream = h3_quinn::SendStream<Bytes>;

    fn poll_open_bidi(&mut self, cx: &mut Context<'_>) -> Poll<Result<Bidi, StreamErrorIncoming>> {
        let limit = self.limit;
        <h3_quinn::OpenStreams as quic::OpenStreams<Bytes>>::poll_open_bidi(&mut self.inner, cx)
            .map_ok(|inner| Bidi::new(inner, limit))
    }

    fn poll_open_send(&mut self, cx: &mut Context<'_>) -> Poll<Result<Self::SendStream, StreamErrorIncoming>> {
        <h3_quinn::OpenStreams as quic::OpenStreams<Bytes>>::poll_open_send(&mut self.inner, cx)
    }

    fn close(&mut self, code: h3::error::Code, reason: &[u8]) {
        <h3_quinn::OpenStreams as quic::OpenStreams<Bytes>>::close(&mut self.inner, code, reason);
    }
}

impl<S: quic::RecvStream<Buf = Bytes>> quic::RecvStream for Checked<S> {
    type Buf = Bytes;

    fn poll_data(&mut self, cx: &mut Context<'_>) -> Poll<Result<Option<Bytes>, StreamErrorIncoming>> {
        let read = self.inner.poll_data(cx);
        self.pending = read.is_pending();
        let inner = &mut self.inner;
        checked(read, &mut self.reading, |code| inner.stop_sending(code))
    }

    fn stop_sending(&mut self, error_code: u64) {
        if !self.pending {
            self.inner.stop_sending(error_code);
        }
    }

    fn recv_id(&self) -> StreamId {
        self.inner.recv_id()
    }
}

impl quic::SendStream<Bytes> for Bidi {
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), StreamErrorIncoming>> {
        quic::SendStream::poll_ready(&mut self.inner, cx)
    }

    fn send_data<T: Into<WriteBuf<Bytes>>>(&mut self, data: T) -> Result<(), StreamErrorIncoming> {
        quic::SendStream::send_data(&mut self.inner, data)
    }

    fn poll_finish(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), StreamErrorIncoming>> {
        quic::SendStream::poll_finish(&mut self.inner, cx)
    }

    fn reset(&mut self, reset_code: u64) {
        quic::SendStream::reset(&mut self.inner, reset_code);
    }

    fn send_id(&self) -> StreamId {
        quic::SendStream::send_id(&self.inner)
    }
}

impl quic::BidiStream<Bytes> for Bidi {
    type SendStream = h3_quinn::SendStream<Bytes>;
    type RecvStream = Recv;

    fn split(self) -> (Self::SendStream, Recv) {
        let (send, inner) = quic::BidiStream::split(self.inner);
        (send, Checked { inner, reading: self.reading, pending: self.pending })
    }
}
