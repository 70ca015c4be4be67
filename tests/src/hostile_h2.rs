//! A misbehaving HTTP/2 server on 127.0.0.1, in clear text with prior knowledge, for
//! `tests/hostile_h2.rs`: each connection it accepts gets the same [`Fault`], written as raw
//! frames, since a well-behaved server library cannot be made to send what a broken or hostile
//! server sends.
//!
//! It reads the client's preface and SETTINGS, then answers each request (a header block the
//! client ends) as the fault says. Its header blocks use HPACK literals without indexing only,
//! but for the bomb, which fills the dynamic table with one large entry and refers to it again
//! and again. It counts what it sees: connections accepted and streams (requests) received.

// A test server that cannot start is a broken test environment; failing loudly is right here.
#![allow(clippy::expect_used)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::tcp::OwnedReadHalf;
use tokio::net::{TcpListener, TcpStream};

/// What the server does on every connection it accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// No fault: SETTINGS, then `200` with [`BODY`] and its `content-length` to every request.
    None,
    /// Each response's header block (about 12 KB) puts one 4,000-byte header into the dynamic
    /// table and refers to it 12,000 times: about 48 MB once decoded.
    HpackBomb,
    /// Each response's header block is 1 MiB of plain literal headers, in a HEADERS frame and
    /// CONTINUATION frames.
    HugeHeaderBlock,
    /// A HEADERS frame without END_HEADERS, then CONTINUATION frames of 16 KiB that never end
    /// the block, until the client leaves.
    ContinuationFlood,
    /// SETTINGS, then PING frames as fast as the socket takes them, never reading again.
    PingFlood,
    /// SETTINGS, then more SETTINGS frames as fast as the socket takes them, never reading
    /// again.
    SettingsFlood,
    /// The first connection reads requests and never answers them; the others answer as
    /// [`Fault::None`].
    StallFirstConnection,
    /// Two `:status` fields in each response.
    DuplicateStatus,
    /// A header name with an uppercase letter (`X-Upper`).
    UppercaseName,
    /// `:status` after a regular header.
    PseudoAfterRegular,
    /// `content-length: 100` and 10 bytes of DATA.
    ContentLengthMismatch,
    /// Never sends SETTINGS, but answers every request as [`Fault::None`] does.
    NoSettings,
    /// A valid response with [`MANY_HEADERS`] headers, `x-h1: v1` to `x-h150: v150`.
    ManyHeaders,
}

/// The body of a [`Fault::None`] response.
pub const BODY: &str = "hello, hostile h2";

/// The headers of a [`Fault::ManyHeaders`] response, beside `:status` and `content-length`.
pub const MANY_HEADERS: usize = 150;

const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

const DATA: u8 = 0x0;
const HEADERS: u8 = 0x1;
const SETTINGS: u8 = 0x4;
const PING: u8 = 0x6;
const CONTINUATION: u8 = 0x9;

const END_STREAM: u8 = 0x1;
const ACK: u8 = 0x1;
const END_HEADERS: u8 = 0x4;

/// The largest frame payload before SETTINGS say otherwise, which the client never does.
const MAX_FRAME: usize = 16_384;

#[derive(Debug, Default)]
struct Counters {
    connections: AtomicU64,
    streams: AtomicU64,
}

/// A misbehaving HTTP/2 server on an ephemeral loopback port; stops when dropped.
#[derive(Debug)]
pub struct HostileH2 {
    addr: SocketAddr,
    counters: Arc<Counters>,
    _runtime: tokio::runtime::Runtime,
}

impl HostileH2 {
    /// Starts a server doing `fault` on 127.0.0.1 and an ephemeral port.
    pub fn start(fault: Fault) -> HostileH2 {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("hostile HTTP/2 server runtime");
        let listener = runtime.block_on(TcpListener::bind("127.0.0.1:0")).expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local addr");
        let counters = Arc::new(Counters::default());
        let accepting = Arc::clone(&counters);
        runtime.spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else { continue };
                let _ = stream.set_nodelay(true);
                let nth = accepting.connections.fetch_add(1, Ordering::SeqCst) + 1;
                let counters = Arc::clone(&accepting);
                tokio::spawn(async move {
                    // Errors are the client leaving, which is what most faults end with.
                    let _ = serve(stream, fault, nth, &counters).await;
                });
            }
        });
        HostileH2 { addr, counters, _runtime: runtime }
    }

    /// `http://127.0.0.1:PORT/`.
    pub fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    /// TCP connections accepted so far.
    pub fn connections(&self) -> u64 {
        self.counters.connections.load(Ordering::SeqCst)
    }

    /// Requests (header blocks the client ended) received so far; a fault that never reads
    /// after the preface sees none.
    pub fn streams(&self) -> u64 {
        self.counters.streams.load(Ordering::SeqCst)
    }
}

/// One connection, the `nth` accepted.
async fn serve(stream: TcpStream, fault: Fault, nth: u64, counters: &Counters) -> std::io::Result<()> {
    let (read, mut write) = stream.into_split();
    let mut read = BufReader::new(read);
    let mut preface = [0u8; PREFACE.len()];
    read.read_exact(&mut preface).await?;
    if preface != PREFACE {
        return Ok(());
    }
    // The client's SETTINGS, its first frame.
    let (kind, _, _, _) = read_frame(&mut read).await?;
    if kind != SETTINGS {
        return Ok(());
    }
    let mut out = Vec::new();
    if fault != Fault::NoSettings {
        frame(&mut out, SETTINGS, 0, 0, &[]);
        frame(&mut out, SETTINGS, ACK, 0, &[]);
    }
    write.write_all(&out).await?;
    match fault {
        Fault::PingFlood => return flood(&mut write, PING, &[0x5a; 8]).await,
        Fault::SettingsFlood => return flood(&mut write, SETTINGS, &[]).await,
        _ => {}
    }
    let answers = !(fault == Fault::StallFirstConnection && nth == 1);
    // Whether the bomb's entry is in the client's table already.
    let mut bomb_in_table = false;
    let mut open: Option<u32> = None;
    loop {
        let (kind, flags, stream, _) = read_frame(&mut read).await?;
        let ended = match kind {
            HEADERS if flags & END_HEADERS != 0 => Some(stream),
            HEADERS => {
                open = Some(stream);
                None
            }
            CONTINUATION if flags & END_HEADERS != 0 => open.take(),
            SETTINGS if flags & ACK == 0 && fault != Fault::NoSettings => {
                write.write_all(&frame_bytes(SETTINGS, ACK, 0, &[])).await?;
                None
            }
            _ => None,
        };
        let Some(stream) = ended else { continue };
        counters.streams.fetch_add(1, Ordering::SeqCst);
        if !answers {
            continue;
        }
        if fault == Fault::ContinuationFlood {
            return continuation_flood(&mut write, stream).await;
        }
        let response = respond(fault, stream, &mut bomb_in_table);
        write.write_all(&response).await?;
    }
}

/// The frames that answer `stream` as `fault` says.
fn respond(fault: Fault, stream: u32, bomb_in_table: &mut bool) -> Vec<u8> {
    let mut out = Vec::new();
    let mut block = Vec::new();
    match fault {
        Fault::HpackBomb => {
            if !*bomb_in_table {
                // A literal with incremental indexing, its name new: the table's only entry.
                block.push(0x40);
                string(&mut block, b"x-bomb");
                string(&mut block, &[b'b'; 4_000]);
                *bomb_in_table = true;
            }
            status(&mut block, "200");
            // Index 62, the dynamic table's first entry, 12,000 times.
            block.resize(block.len() + 12_000, 0x80 | 62);
            headers(&mut out, stream, &block, true);
        }
        Fault::HugeHeaderBlock => {
            status(&mut block, "200");
            let value = [b'h'; 1_000];
            let mut i = 0;
            while block.len() < 1 << 20 {
                literal(&mut block, format!("x-pad-{i}").as_bytes(), &value);
                i += 1;
            }
            headers(&mut out, stream, &block, true);
        }
        Fault::DuplicateStatus => {
            status(&mut block, "200");
            status(&mut block, "204");
            ok_rest(&mut out, stream, block);
        }
        Fault::UppercaseName => {
            status(&mut block, "200");
            literal(&mut block, b"X-Upper", b"a");
            ok_rest(&mut out, stream, block);
        }
        Fault::PseudoAfterRegular => {
            literal(&mut block, b"x-first", b"a");
            status(&mut block, "200");
            ok_rest(&mut out, stream, block);
        }
        Fault::ContentLengthMismatch => {
            status(&mut block, "200");
            literal(&mut block, b"content-length", b"100");
            headers(&mut out, stream, &block, false);
            frame(&mut out, DATA, END_STREAM, stream, b"0123456789");
        }
        Fault::ManyHeaders => {
            status(&mut block, "200");
            for i in 1..=MANY_HEADERS {
                literal(&mut block, format!("x-h{i}").as_bytes(), format!("v{i}").as_bytes());
            }
            ok_rest(&mut out, stream, block);
        }
        Fault::None
        | Fault::NoSettings
        | Fault::StallFirstConnection
        | Fault::PingFlood
        | Fault::SettingsFlood
        | Fault::ContinuationFlood => {
            status(&mut block, "200");
            ok_rest(&mut out, stream, block);
        }
    }
    out
}

/// `content-length` and [`BODY`] after the fields in `block`.
fn ok_rest(out: &mut Vec<u8>, stream: u32, mut block: Vec<u8>) {
    literal(&mut block, b"content-length", BODY.len().to_string().as_bytes());
    headers(out, stream, &block, false);
    frame(out, DATA, END_STREAM, stream, BODY.as_bytes());
}

/// `kind` frames with `payload`, written as fast as the client takes them, until it leaves.
async fn flood(write: &mut (impl AsyncWriteExt + Unpin), kind: u8, payload: &[u8]) -> std::io::Result<()> {
    let mut batch = Vec::new();
    for _ in 0..1_000 {
        frame(&mut batch, kind, 0, 0, payload);
    }
    loop {
        write.write_all(&batch).await?;
    }
}

/// A HEADERS frame that does not end its block, then CONTINUATION frames that never do.
async fn continuation_flood(write: &mut (impl AsyncWriteExt + Unpin), stream: u32) -> std::io::Result<()> {
    let mut block = Vec::new();
    status(&mut block, "200");
    write.write_all(&frame_bytes(HEADERS, END_STREAM, stream, &block)).await?;
    let mut fields = Vec::new();
    let mut i = 0;
    while fields.len() < MAX_FRAME - 1_100 {
        literal(&mut fields, format!("x-more-{i}").as_bytes(), &[b'c'; 1_000]);
        i += 1;
    }
    let continuation = frame_bytes(CONTINUATION, 0, stream, &fields);
    loop {
        write.write_all(&continuation).await?;
    }
}

/// Reads one frame: its type, flags, stream and payload.
async fn read_frame(read: &mut BufReader<OwnedReadHalf>) -> std::io::Result<(u8, u8, u32, Vec<u8>)> {
    let mut head = [0u8; 9];
    read.read_exact(&mut head).await?;
    let len = usize::from(head[0]) << 16 | usize::from(head[1]) << 8 | usize::from(head[2]);
    let stream = u32::from_be_bytes([head[5], head[6], head[7], head[8]]) & 0x7fff_ffff;
    let mut payload = vec![0u8; len];
    read.read_exact(&mut payload).await?;
    Ok((head[3], head[4], stream, payload))
}

/// Appends a frame.
fn frame(out: &mut Vec<u8>, kind: u8, flags: u8, stream: u32, payload: &[u8]) {
    let len = u32::try_from(payload.len()).expect("a frame's length");
    out.extend_from_slice(&len.to_be_bytes()[1..]);
    out.push(kind);
    out.push(flags);
    out.extend_from_slice(&stream.to_be_bytes());
    out.extend_from_slice(payload);
}

fn frame_bytes(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(9 + payload.len());
    frame(&mut out, kind, flags, stream, payload);
    out
}

/// A header block as HEADERS, and CONTINUATION frames for what exceeds a frame.
fn headers(out: &mut Vec<u8>, stream: u32, block: &[u8], end_stream: bool) {
    let chunks: Vec<&[u8]> = block.chunks(MAX_FRAME).collect();
    let last = chunks.len().saturating_sub(1);
    for (i, chunk) in chunks.iter().enumerate() {
        let mut flags = if i == last { END_HEADERS } else { 0 };
        let kind = if i == 0 {
            if end_stream {
                flags |= END_STREAM;
            }
            HEADERS
        } else {
            CONTINUATION
        };
        frame(out, kind, flags, stream, chunk);
    }
}

/// An HPACK integer with a `prefix`-bit prefix, `flags` in the first byte's other bits.
///
/// This encoder is the server's own, apart from the client's in the runtime on purpose: a test
/// server sharing the code under test would agree with its mistakes.
fn integer(out: &mut Vec<u8>, flags: u8, prefix: u32, value: usize) {
    let max = (1usize << prefix) - 1;
    if value < max {
        out.push(flags | value as u8);
        return;
    }
    out.push(flags | max as u8);
    let mut rest = value - max;
    while rest >= 128 {
        out.push((rest % 128) as u8 | 0x80);
        rest /= 128;
    }
    out.push(rest as u8);
}

/// A string literal, not Huffman-coded.
fn string(out: &mut Vec<u8>, bytes: &[u8]) {
    integer(out, 0, 7, bytes.len());
    out.extend_from_slice(bytes);
}

/// A literal field without indexing, its name new.
fn literal(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    out.push(0);
    string(out, name);
    string(out, value);
}

/// `:status`, a literal without indexing whose name is the static table's entry 8.
fn status(out: &mut Vec<u8>, code: &str) {
    integer(out, 0, 4, 8);
    string(out, code.as_bytes());
}
