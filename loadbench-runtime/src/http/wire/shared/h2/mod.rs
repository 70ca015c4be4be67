//! HTTP/2 on a lane: the requests of its users as concurrent streams on one connection.
//!
//! The runtime's own client, built as the pipelined HTTP/1.1 one is: a driver task per
//! connection (`driver.rs`) owns the socket, reads every frame and writes what the users queued;
//! a user's request is a slot in the connection's table (`streams.rs`), its HEADERS frame
//! appended to the connection's output, its response handed back when its stream ends. Why not
//! a crate's client: through the `h2` crate's client a request cost several times h2load's CPU,
//! nearly all of it in the crate (a stream store behind a lock, a waker and a `Bytes` per frame,
//! a `HeaderMap` built per response), and hyper's client adds a channel and a task hop to that
//! (bench/RESULTS.md § HTTP/2 client). Here a
//! request costs a copy of its header block and a share of one write; a response a share of one
//! read and its header block's decoding (`hpack/`, which says why its decoder is the
//! runtime's own too). The `h2` crate stays as the server the tests answer with.
//!
//! What the protocol asks of a client, and where it is kept:
//! - streams are opened (their HEADERS written) only while fewer than the server's
//!   `MAX_CONCURRENT_STREAMS` are open, one before the server's SETTINGS arrive; the others wait
//!   in order (`Conn::pending`);
//! - receive windows of [`STREAM_WINDOW`] per stream and [`CONNECTION_WINDOW`] for the
//!   connection, given back as bytes arrive; request bodies are sent as the server's windows
//!   allow;
//! - `GOAWAY`: no new stream; the streams above its last stream id, and those never opened, may
//!   be sent again on a new connection; `RST_STREAM`: that stream's error
//!   ([`ErrorKind::StreamReset`]), or with `REFUSED_STREAM` a request that may be sent again;
//! - `PING` answered, `PRIORITY` and unknown frames ignored, server push refused in SETTINGS;
//! - the output bounded: at most [`MAX_PENDING_ACKS`] acknowledgements of the server's PING and
//!   SETTINGS frames wait unwritten (past it, `GOAWAY` with `ENHANCE_YOUR_CALM`), and nothing is
//!   read while more than [`OUTPUT_BOUND`] bytes queued in answer to the server wait;
//! - a stalled connection replaced: a request given up (its timeout) with no stream of the
//!   connection finished since it was queued makes the connection take no new streams, so that
//!   the lane opens another for the next requests (`Conn::abandon` says why no PING);
//! - a response's header list at most `max_header_list_size` (`ClientOptions`, 64 KiB by
//!   default), advertised in `SETTINGS_MAX_HEADER_LIST_SIZE` and counted while the block is
//!   decoded (`hpack/fields.rs`); responses RFC 9113 calls malformed (8.1.1) refused as their
//!   stream's error (`RST_STREAM` with `PROTOCOL_ERROR`), their `content-length` held to their
//!   DATA; a server whose first frame is not SETTINGS is not spoken to.

mod driver;
mod frame;
#[cfg(test)]
mod fuzz;
mod hpack;
#[cfg(test)]
mod refusal_tests;
mod streams;
#[cfg(test)]
mod tests;

use self::streams::Conn;
use super::{Driven, Exchange, Outgoing};
use crate::config::Transport;
use crate::http::TlsClient;
use crate::http::wire::stream::Stream;
use crate::http::wire::target::Target;

/// The receive window of each stream, advertised in our SETTINGS: 16 MiB, the default
/// `max_body`, so that one response of that size arrives without waiting for a
/// `WINDOW_UPDATE`. The protocol's default (64 KiB) would make a large body wait a round trip
/// every 64 KiB; h2load's default (1 GiB) would let a server push far more than a user keeps.
/// Half of it is given back each time half has arrived.
const STREAM_WINDOW: u32 = 16 << 20;

/// The receive window of the whole connection: 64 MiB, four streams' worth at full window,
/// given back as it is used (bodies are consumed as they arrive), so it never throttles.
const CONNECTION_WINDOW: u32 = 64 << 20;

/// Streams opened before the server's SETTINGS say how many it allows: one, so that a server
/// with a low `MAX_CONCURRENT_STREAMS` never has to refuse the first burst of a lane's users.
/// The SETTINGS arrive within the first round trip, and the waiting streams are opened then.
const STREAMS_BEFORE_SETTINGS: usize = 1;

/// The most acknowledgements of the server's PING and SETTINGS frames that may wait unwritten:
/// past it, the server sends control frames faster than it reads their answers (a flood, or a
/// server that stopped reading), and the connection is closed with `ENHANCE_YOUR_CALM`. 1,000, as
/// nghttp2's `max_outbound_ack` and Envoy's `max_outbound_control_frames`: a server that pings to
/// keep a connection alive sends one every few seconds, and its answer is written at once.
const MAX_PENDING_ACKS: u32 = 1_000;

/// The most bytes the client keeps queued in answer to the server (acknowledgements, resets):
/// over it, the driver stops reading until the socket takes them, so that what a server makes
/// the client queue is bounded whatever it sends. 256 KiB: a server can make the client queue at
/// most about a byte per byte it sends (a PING's acknowledgement is as long as the PING), so one
/// read of 16 KiB never comes near it; the acknowledgements alone stop at [`MAX_PENDING_ACKS`]
/// (17 KB), and this holds for the resets too, one per stream. Requests' bytes never count: a
/// server slow to read a large upload while it sends responses would otherwise have both sides
/// wait for the other, and counting them would cost every request.
const OUTPUT_BOUND: usize = 256 * 1024;

/// The size of the chunks that response heads and one-frame bodies are split from.
const CHUNK: usize = 16 * 1024;

/// Makes room for `len` more bytes in `chunk`: a new chunk when this one is used up (the
/// responses split from the old one keep it until they are dropped). A longer write grows the
/// chunk as it is written.
fn reserve_chunk(chunk: &mut bytes::BytesMut, len: usize) {
    let need = len.saturating_add(64);
    if chunk.capacity() - chunk.len() < need {
        chunk.reserve(need.max(CHUNK));
    }
}

/// A lane's TLS configuration: the run's, with a session cache of its own, offering `h2` in
/// ALPN when HTTP/2 is asked.
pub(crate) fn tls_config(client: &TlsClient, transport: Transport) -> crate::http::wire::tls::Config {
    client.for_lane(transport.protocol)
}

/// Whether a connection just opened speaks HTTP/2: with prior knowledge on `http://` when it
/// is asked, and over TLS when ALPN agreed on `h2` (offered only when it is asked).
pub(crate) fn speaks_h2(stream: &Stream, transport: Transport) -> bool {
    match stream {
        Stream::Plain(_) => transport.protocol.is_http2(),
        #[cfg(feature = "tls")]
        Stream::Tls(tls) => tls.get_ref().1.alpn_protocol() == Some(b"h2"),
    }
}

/// One HTTP/2 connection. Dropped, the driver says GOAWAY and closes the connection.
pub(crate) type Http2 = Driven<Conn>;

impl Driven<Conn> {
    /// Starts HTTP/2 on `stream`, opened to `target`: the connection preface and this client's
    /// SETTINGS are its first bytes, and requests may be queued at once. Must run inside a
    /// `LocalSet` (every worker does): the connection's driver is a local task.
    pub(crate) fn start(stream: Stream, target: &Target) -> Http2 {
        let https = stream.is_tls();
        let limit = target.max_header_list_size();
        let conn = Conn::new(https, target.host_header().as_bytes(), target.addr(), limit);
        Driven::spawn(conn, |conn| driver::Driver::new(conn, stream))
    }

    /// Queues `request` as a new stream; the future is its response. Its failure says whether
    /// the request failed without a byte of it written: sending it again costs the request none
    /// of its retries.
    // Out of line, as `Pipeline::exchange`: the unshared path should not pay for its size.
    #[inline(never)]
    pub(crate) fn exchange<'a>(&'a self, request: &Outgoing<'_>) -> Exchange<'a, Conn> {
        let slot = self.table.borrow_mut().push(request);
        Exchange::new(&self.table, slot)
    }
}
