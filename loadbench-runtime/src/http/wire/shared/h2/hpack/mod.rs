//! Header blocks (HPACK, RFC 7541): requests encoded, responses decoded.
//!
//! Requests are encoded without the dynamic table: the pseudo-headers from HPACK's static table
//! where it has them, everything else as literals "without indexing". The encoder then keeps no
//! state, so a block never depends on the blocks before it (a request that waits for a stream
//! is encoded when it is queued), and encoding is a copy of the strings. What it forgoes is
//! compression of repeated headers, which matters on a slow link, not on the loopback or LAN a
//! load test runs on.
//!
//! Responses are decoded with the connection's dynamic table, in the order they arrive. Written
//! here rather than taken from a crate, and why: `loona-hpack` (the maintained fork of `hpack`)
//! builds a hash map of the Huffman code for every Huffman-coded string, which hyper's server sends
//! in every response (bench/RESULTS.md § HPACK decoder); `httlib-hpack` allocates three vectors per
//! field and drains its input from the front; the `h2` crate keeps its decoder private. The decoder
//! is small (the RFC's static table, a dynamic table, integers and strings, `huffman.rs`), and its
//! tests hold it to the RFC's examples and to hyper's server.

use bytes::{BufMut, Bytes, BytesMut};
use http::{HeaderMap, Method, StatusCode, header};

#[cfg(test)]
mod conformance;
mod decoder;
mod fields;
#[cfg(test)]
mod fuzz;
mod huffman;

pub(super) use decoder::Decoder;
use fields::Fields;
pub(super) use fields::Refusal;

/// HPACK's static table entries a request uses (RFC 7541, Appendix A).
const AUTHORITY: usize = 1;
const METHOD_GET: usize = 2;
const METHOD_POST: usize = 3;
const METHOD: usize = 2;
const PATH_ROOT: usize = 4;
const PATH: usize = 4;
const SCHEME_HTTP: usize = 6;
const SCHEME_HTTPS: usize = 7;

/// The header table size this client allows the server's encoder (the protocol's default,
/// which this client's SETTINGS leave as it is).
pub(super) const TABLE_SIZE: usize = 4_096;

/// Appends `value` as an HPACK integer with an `prefix`-bit prefix, `flags` in the first byte's
/// other bits (RFC 7541, 5.1).
fn integer(out: &mut Vec<u8>, flags: u8, prefix: u32, value: usize) {
    let max = (1usize << prefix) - 1;
    if value < max {
        // Below `max`, which fits the prefix's bits.
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

fn indexed(out: &mut Vec<u8>, index: usize) {
    integer(out, 0x80, 7, index);
}

/// A literal "without indexing" whose name is the static table's entry `index`.
fn literal_indexed_name(out: &mut Vec<u8>, index: usize, value: &[u8]) {
    integer(out, 0, 4, index);
    string(out, value);
}

/// The headers a request may not carry in HTTP/2 (RFC 9113, 8.2.2): the connection's own.
fn connection_specific(name: &header::HeaderName, value: &http::HeaderValue) -> bool {
    matches!(name.as_str(), "connection" | "transfer-encoding" | "upgrade" | "keep-alive" | "proxy-connection")
        || (name == header::TE && value != "trailers")
}

/// What a request's block is made of.
#[derive(Debug)]
pub(super) struct RequestHead<'a> {
    pub(super) method: &'a Method,
    pub(super) https: bool,
    /// The target's authority, unless the request sets `Host` (HTTP/2 carries it as
    /// `:authority`).
    pub(super) authority: &'a str,
    pub(super) path: &'a str,
    pub(super) headers: &'a HeaderMap,
}

/// Encodes a request's header block into `out` (cleared first).
pub(super) fn encode_request(out: &mut Vec<u8>, request: &RequestHead<'_>) {
    out.clear();
    match *request.method {
        Method::GET => indexed(out, METHOD_GET),
        Method::POST => indexed(out, METHOD_POST),
        ref other => literal_indexed_name(out, METHOD, other.as_str().as_bytes()),
    }
    indexed(out, if request.https { SCHEME_HTTPS } else { SCHEME_HTTP });
    if request.path == "/" {
        indexed(out, PATH_ROOT);
    } else {
        literal_indexed_name(out, PATH, request.path.as_bytes());
    }
    let host = request.headers.get(header::HOST).map_or(request.authority.as_bytes(), |h| h.as_bytes());
    literal_indexed_name(out, AUTHORITY, host);
    for (name, value) in request.headers {
        if name == header::HOST || connection_specific(name, value) {
            continue;
        }
        // Names in a `HeaderMap` are lowercase, as HTTP/2 requires.
        out.push(0);
        string(out, name.as_str().as_bytes());
        string(out, value.as_bytes());
    }
}

/// A response's head, decoded.
#[derive(Debug, Clone, Copy)]
pub(super) struct ResponseHead {
    pub(super) status: StatusCode,
    pub(super) content_length: Option<u64>,
    pub(super) sets_cookie: bool,
}

/// Why a header block could not be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum DecodeError {
    /// The block is not valid HPACK: the connection's table is lost (`COMPRESSION_ERROR`).
    Compression,
    /// The block decoded, the table kept in step, but its fields are refused: its stream's
    /// error, the connection goes on.
    Refused(Refusal),
}

/// Decodes a response's header block with the connection's `decoder`, appending its regular
/// headers to `head` as an HTTP/1.1 head carries them (a status line, "name: value" lines, an
/// empty line), which `Response::headers` parses when a scenario asks for them. A header list
/// larger than `limit`, or one RFC 9113 calls malformed, is refused; what is appended is bounded
/// by `limit`, as nothing is appended once the list passes it. On an error, `head` is as it was.
pub(super) fn decode_response(
    decoder: &mut Decoder,
    block: &[u8],
    head: &mut BytesMut,
    limit: usize,
) -> Result<ResponseHead, DecodeError> {
    let mut fields = Fields::new(limit, false);
    let start = head.len();
    head.put_slice(b"HTTP/1.1 000 \r\n");
    // A refused block is decoded to its end all the same: see `fields.rs`.
    let decoded = decoder.decode(block, |name, value| {
        if fields.take(name, value) {
            head.put_slice(name);
            head.put_slice(b": ");
            head.put_slice(value);
            head.put_slice(b"\r\n");
        }
    });
    let outcome = match (decoded, fields.refused, fields.status) {
        (Err(_), _, _) => Err(DecodeError::Compression),
        (Ok(()), Some(refusal), _) => Err(DecodeError::Refused(refusal)),
        (Ok(()), None, None) => Err(DecodeError::Refused(Refusal::Malformed("a response without a :status"))),
        (Ok(()), None, Some(status)) => {
            Ok(ResponseHead { status, content_length: fields.content_length, sets_cookie: fields.sets_cookie })
        }
    };
    match &outcome {
        Ok(response) => {
            head.put_slice(b"\r\n");
            head[start + 9..start + 12].copy_from_slice(response.status.as_str().as_bytes());
        }
        Err(_) => head.truncate(start),
    }
    outcome
}

/// Decodes a response's trailers with the connection's `decoder`: checked as a head is, their
/// fields not kept.
pub(super) fn decode_trailers(decoder: &mut Decoder, block: &[u8], limit: usize) -> Result<(), DecodeError> {
    let mut fields = Fields::new(limit, true);
    decoder
        .decode(block, |name, value| {
            fields.take(name, value);
        })
        .map_err(|_| DecodeError::Compression)?;
    match fields.refused {
        Some(refusal) => Err(DecodeError::Refused(refusal)),
        None => Ok(()),
    }
}

/// A connection's response heads: each block decoded into a status and a head for
/// `Response::headers`, split from a chunk shared by many responses.
///
/// The last head is remembered with its block: while the dynamic table stays as it was, the same
/// block decodes to the same head, which is then shared rather than decoded again. A server's
/// heads are mostly the same block (its fields indexed, once its table holds them, until a value
/// such as `Date` changes), and decoding is a large share of a request's cost (bench/RESULTS.md
/// § HPACK decoder).
#[derive(Debug)]
pub(super) struct Responses {
    decoder: Decoder,
    heads: BytesMut,
    last: Option<Last>,
    /// The most a header list may cost (`SETTINGS_MAX_HEADER_LIST_SIZE`).
    limit: usize,
}

/// The last block decoded without changing the table, and what it decoded to.
#[derive(Debug)]
struct Last {
    block: Vec<u8>,
    generation: u64,
    response: ResponseHead,
    head: Bytes,
}

impl Responses {
    /// The heads of a connection whose header lists may cost at most `limit` bytes.
    pub(super) fn new(limit: usize) -> Responses {
        Responses { decoder: Decoder::new(), heads: BytesMut::new(), last: None, limit }
    }

    /// `block` decoded: its status, length and cookie flag, and its head.
    pub(super) fn decode(&mut self, block: &[u8]) -> Result<(ResponseHead, Bytes), DecodeError> {
        let generation = self.decoder.generation();
        if let Some(last) = &self.last
            && last.generation == generation
            && last.block == block
        {
            return Ok((last.response, last.head.clone()));
        }
        // A head's text is at most its header list's size (a field's ": " and CRLF cost less
        // than the 32 bytes the list counts), and most are shorter than four times their block.
        super::reserve_chunk(&mut self.heads, block.len().saturating_mul(4).min(self.limit + 32));
        let response = decode_response(&mut self.decoder, block, &mut self.heads, self.limit)?;
        let head = self.heads.split().freeze();
        if self.decoder.generation() == generation {
            let last =
                self.last.get_or_insert_with(|| Last { block: Vec::new(), generation, response, head: Bytes::new() });
            last.block.clear();
            last.block.extend_from_slice(block);
            last.generation = generation;
            last.response = response;
            last.head = head.clone();
        }
        Ok((response, head))
    }

    /// A response's trailers, checked and dropped.
    pub(super) fn trailers(&mut self, block: &[u8]) -> Result<(), DecodeError> {
        decode_trailers(&mut self.decoder, block, self.limit)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::decoder::tests::{decoded, pairs};
    use super::*;

    const LIMIT: usize = 64 * 1024;

    #[test]
    fn a_request_block_decodes_to_its_pseudo_headers_and_headers() {
        let mut headers = HeaderMap::new();
        headers.insert("x-long", "v".repeat(200).parse().unwrap());
        headers.insert("connection", "keep-alive".parse().unwrap());
        headers.insert("te", "gzip".parse().unwrap());
        let mut block = Vec::new();
        let head = RequestHead { method: &Method::PUT, https: true, authority: "a:1", path: "/p?q", headers: &headers };
        encode_request(&mut block, &head);
        let fields = decoded(&mut Decoder::new(), &block).unwrap();
        let mut want = pairs(&[(":method", "PUT"), (":scheme", "https"), (":path", "/p?q"), (":authority", "a:1")]);
        want.push(("x-long".to_owned(), "v".repeat(200)));
        assert_eq!(fields, want, "connection-specific headers are left out");

        headers.insert("host", "other".parse().unwrap());
        let head = RequestHead { method: &Method::GET, https: false, authority: "a:1", path: "/", headers: &headers };
        encode_request(&mut block, &head);
        assert_eq!(&block[..3], &[0x82, 0x86, 0x84], "static entries for GET, http and /");
        assert!(decoded(&mut Decoder::new(), &block).unwrap().contains(&(":authority".to_owned(), "other".to_owned())));
    }

    #[test]
    fn a_response_block_becomes_a_status_and_a_head_to_parse() {
        let mut block = Vec::new();
        literal_indexed_name(&mut block, 8, b"404");
        // content-length with incremental indexing, then a Huffman-coded set-cookie value.
        integer(&mut block, 0x40, 6, 28);
        string(&mut block, b"12");
        literal_indexed_name(&mut block, 55, b"");
        block.pop();
        let coded = huffman::encode(b"a=1");
        integer(&mut block, 0x80, 7, coded.len());
        block.extend_from_slice(&coded);
        let mut decoder = Decoder::new();
        let mut head = BytesMut::new();
        let response = decode_response(&mut decoder, &block, &mut head, LIMIT).unwrap();
        assert_eq!(
            (response.status, response.content_length, response.sets_cookie),
            (StatusCode::NOT_FOUND, Some(12), true)
        );
        assert_eq!(&head[..], b"HTTP/1.1 404 \r\ncontent-length: 12\r\nset-cookie: a=1\r\n\r\n");
        let map = crate::http::wire::h1::header_map(&head);
        assert_eq!(map.get("set-cookie").unwrap(), "a=1");
        // The next block names the indexed field from the dynamic table.
        head.clear();
        let response = decode_response(&mut decoder, &[0x88, 0xbe], &mut head, LIMIT).unwrap();
        assert_eq!((response.status, response.content_length), (StatusCode::OK, Some(12)));

        let len = head.len();
        let missing = Err(DecodeError::Refused(Refusal::Malformed("a response without a :status")));
        assert_eq!(decode_response(&mut decoder, &[0xbe], &mut head, LIMIT).map(|r| r.status), missing);
        assert_eq!(head.len(), len, "an error leaves the heads as they were");
        let invalid = decode_response(&mut decoder, &[0xff, 0xff, 0xff], &mut head, LIMIT);
        assert_eq!(invalid.map(|r| r.status), Err(DecodeError::Compression));
        // A value HTTP/2 forbids: the response is refused, not the field left out.
        let mut bad = vec![0x88, 0];
        string(&mut bad, b"x-bad");
        string(&mut bad, b"a\r\nb");
        let refused = decode_response(&mut decoder, &bad, &mut head, LIMIT).map(|r| r.status);
        assert_eq!(refused, Err(DecodeError::Refused(Refusal::Malformed("an invalid header value"))));
    }

    #[test]
    fn the_same_block_on_the_same_table_is_decoded_once_and_its_head_shared() {
        let mut responses = Responses::new(LIMIT);
        // `:status: 200` and `x: 1` added to the table: not remembered, as it changes the table.
        let mut adding = vec![0x88, 0x40];
        string(&mut adding, b"x");
        string(&mut adding, b"1");
        let (_, first) = responses.decode(&adding).unwrap();
        let (_, again) = responses.decode(&adding).unwrap();
        assert_ne!(first.as_ptr(), again.as_ptr());
        // Indexed only: remembered, and the head shared.
        let (response, one) = responses.decode(&[0x88, 0xbe]).unwrap();
        let (_, two) = responses.decode(&[0x88, 0xbe]).unwrap();
        assert_eq!((response.status, one.as_ptr()), (StatusCode::OK, two.as_ptr()));
        assert_eq!(&two[..], b"HTTP/1.1 200 \r\nx: 1\r\n\r\n");
        // Once the table changes, the same bytes name another entry.
        let mut other = vec![0x40];
        string(&mut other, b"y");
        string(&mut other, b"2");
        responses.decode(&other).unwrap_err();
        let (_, three) = responses.decode(&[0x88, 0xbe]).unwrap();
        assert_eq!(&three[..], b"HTTP/1.1 200 \r\ny: 2\r\n\r\n");
    }
}
