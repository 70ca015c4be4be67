//! HTTP/1.1 on the wire: writing a request, and finding where a response's head and body end
//! (RFC 9112). Pure functions over byte buffers; the socket side is in `connection.rs`.
//!
//! Parsing is httparse's, the parser hyper itself uses. What is written here is only what a
//! client that keeps one request in flight needs around it: the request line and headers, the
//! body framing rules, keep-alive, and chunked decoding (chunk sizes are parsed by httparse too).

use std::io::Write as _;
use std::mem::MaybeUninit;

use bytes::{Buf, Bytes, BytesMut};
use http::header::{self, HeaderMap, HeaderName, HeaderValue};
use http::{Method, StatusCode};

/// Most response headers we accept, as hyper's client does by default.
const MAX_HEADERS: usize = 100;

/// Why a response could not be understood.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ProtocolError {
    #[error("malformed response head")]
    Parse(#[from] httparse::Error),
    #[error("response head larger than {MAX_HEAD_BYTES} bytes")]
    HeadTooLarge,
    #[error("invalid Content-Length header")]
    ContentLength,
    #[error("malformed chunked body")]
    Chunked,
}

/// Largest response head accepted (hyper's default read buffer limit is about 400 KiB; a head
/// this large is a broken server, and refusing it bounds what one connection can hold).
pub(crate) const MAX_HEAD_BYTES: usize = 64 * 1024;

/// How the body of a response is delimited (RFC 9112 §6.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BodyLength {
    /// No body: a response to HEAD, or a 1xx, 204 or 304 response.
    Empty,
    /// `Content-Length` bytes.
    Fixed(u64),
    /// `Transfer-Encoding: chunked`.
    Chunked,
    /// Everything until the server closes the connection.
    UntilClose,
}

/// What the connection needs to know about a response head.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Head {
    pub(crate) status: StatusCode,
    /// Bytes of the head, up to and including the empty line.
    pub(crate) len: usize,
    pub(crate) body: BodyLength,
    /// Whether the connection may carry another request after this response.
    pub(crate) keep_alive: bool,
    /// Whether the head has a `Set-Cookie` header: seen here, in the one walk over the headers,
    /// so that a user's jar looks at a response only when it sets a cookie.
    pub(crate) sets_cookie: bool,
}

/// Appends the request head (and `body`, if any) to `out`.
///
/// `Host` comes from the target unless `headers` has its own; `Content-Length` is added for a
/// body, or for an empty one on methods that normally carry one, unless `headers` frames the
/// body itself.
pub(crate) fn encode_request(
    out: &mut Vec<u8>,
    method: &Method,
    path: &str,
    host: &HeaderValue,
    headers: &HeaderMap,
    body: &[u8],
) {
    out.extend_from_slice(method.as_str().as_bytes());
    out.push(b' ');
    out.extend_from_slice(path.as_bytes());
    out.extend_from_slice(b" HTTP/1.1\r\n");
    // Most requests carry no headers of their own: skip the map's lookups for them.
    let custom = !headers.is_empty();
    if !(custom && headers.contains_key(header::HOST)) {
        put_header(out, b"host", host.as_bytes());
    }
    for (name, value) in headers {
        put_header(out, name.as_str().as_bytes(), value.as_bytes());
    }
    let framed =
        custom && (headers.contains_key(header::CONTENT_LENGTH) || headers.contains_key(header::TRANSFER_ENCODING));
    let expects_body = matches!(*method, Method::POST | Method::PUT | Method::PATCH);
    if !framed && (!body.is_empty() || expects_body) {
        // Writing to a Vec cannot fail.
        let _ = write!(out, "content-length: {}\r\n", body.len());
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(body);
}

fn put_header(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    out.extend_from_slice(name);
    out.extend_from_slice(b": ");
    out.extend_from_slice(value);
    out.extend_from_slice(b"\r\n");
}

/// The heads most remembered: longer ones are parsed every time rather than kept per connection.
const MEMO_MAX: usize = 1024;

/// A connection's last response head and what it parsed to.
///
/// A server's heads on one connection are mostly the same bytes (its headers and their values
/// stay, until `Date` changes a second later), and a head that begins the buffer byte for byte,
/// up to and including its empty line, parses to the same result; comparing costs a fraction of
/// parsing (bench/RESULTS.md § HTTP/1.1 client).
///
/// The remembered bytes are also the head of a response whose body is not kept behind it in
/// the read buffer ([`HeadMemo::current`]): a clone of them costs a request less than splitting
/// its head off the read buffer (bench/RESULTS.md § HTTP/1.1 client).
#[derive(Debug, Default)]
pub(crate) struct HeadMemo {
    bytes: Bytes,
    /// The head, and whether it answered a `HEAD` request (which has no body whatever it says).
    head: Option<(Head, bool)>,
    /// Whether `bytes` are those of the head [`HeadMemo::parse`] returned last.
    current: bool,
}

impl HeadMemo {
    /// [`parse_head`], remembered.
    pub(crate) fn parse(&mut self, buf: &[u8], request_method: &Method) -> Result<Option<Head>, ProtocolError> {
        let head_request = *request_method == Method::HEAD;
        if let Some((head, for_head)) = self.head
            && for_head == head_request
            && buf.starts_with(&self.bytes)
        {
            self.current = true;
            return Ok(Some(head));
        }
        self.current = false;
        let parsed = parse_head(buf, request_method)?;
        if let Some(head) = parsed
            && head.len <= MEMO_MAX
        {
            self.bytes = Bytes::copy_from_slice(&buf[..head.len]);
            self.head = Some((head, head_request));
            self.current = true;
        }
        Ok(parsed)
    }

    /// The bytes of the head `parse` returned last, when they are remembered.
    pub(crate) fn current(&self) -> Option<Bytes> {
        self.current.then(|| self.bytes.clone())
    }
}

/// Parses the response head at the start of `buf`: `None` while it is incomplete.
pub(crate) fn parse_head(buf: &[u8], request_method: &Method) -> Result<Option<Head>, ProtocolError> {
    let mut storage = [const { MaybeUninit::<httparse::Header<'_>>::uninit() }; MAX_HEADERS];
    let mut response = httparse::Response::new(&mut []);
    let len =
        match httparse::ParserConfig::default().parse_response_with_uninit_headers(&mut response, buf, &mut storage)? {
            // A head that arrived whole in a few large reads is no smaller than one still arriving.
            httparse::Status::Complete(len) if len > MAX_HEAD_BYTES => return Err(ProtocolError::HeadTooLarge),
            httparse::Status::Complete(len) => len,
            httparse::Status::Partial if buf.len() > MAX_HEAD_BYTES => return Err(ProtocolError::HeadTooLarge),
            httparse::Status::Partial => return Ok(None),
        };
    let code = response.code.unwrap_or_default();
    let status = StatusCode::from_u16(code).map_err(|_| ProtocolError::Parse(httparse::Error::Status))?;
    let http11 = response.version == Some(1);

    let mut content_length: Option<u64> = None;
    let mut chunked = false;
    let mut transfer_encoding = false;
    let mut close = false;
    let mut keep_alive_token = false;
    let mut sets_cookie = false;
    for h in response.headers.iter() {
        if h.name.eq_ignore_ascii_case("content-length") {
            let value = parse_content_length(h.value).ok_or(ProtocolError::ContentLength)?;
            if content_length.is_some_and(|previous| previous != value) {
                return Err(ProtocolError::ContentLength);
            }
            content_length = Some(value);
        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
            transfer_encoding = true;
            // Only the final coding decides the framing.
            chunked = tokens(h.value).last().is_some_and(|t| t.eq_ignore_ascii_case(b"chunked"));
        } else if h.name.eq_ignore_ascii_case("connection") {
            for token in tokens(h.value) {
                close |= token.eq_ignore_ascii_case(b"close");
                keep_alive_token |= token.eq_ignore_ascii_case(b"keep-alive");
            }
        } else if h.name.eq_ignore_ascii_case("set-cookie") {
            sets_cookie = true;
        }
    }

    let body = if *request_method == Method::HEAD
        || status.is_informational()
        || status == StatusCode::NO_CONTENT
        || status == StatusCode::NOT_MODIFIED
    {
        BodyLength::Empty
    } else if transfer_encoding {
        if chunked { BodyLength::Chunked } else { BodyLength::UntilClose }
    } else if let Some(n) = content_length {
        BodyLength::Fixed(n)
    } else {
        BodyLength::UntilClose
    };
    let keep_alive = !close && (http11 || keep_alive_token) && body != BodyLength::UntilClose;
    Ok(Some(Head { status, len, body, keep_alive, sets_cookie }))
}

fn parse_content_length(value: &[u8]) -> Option<u64> {
    let digits = value.trim_ascii();
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(digits).ok()?.parse().ok()
}

/// The comma-separated tokens of a header value, trimmed.
fn tokens(value: &[u8]) -> impl Iterator<Item = &[u8]> {
    value.split(|&b| b == b',').map(<[u8]>::trim_ascii).filter(|t| !t.is_empty())
}

/// The headers of a complete response head, for [`crate::Response::headers`]. Built only when a
/// scenario asks: most iterations look at the status alone, and a `HeaderMap` costs more than
/// the rest of the parse.
///
/// An HTTP/1.1 head has at most [`MAX_HEADERS`] (more fail its request); the head of an HTTP/2
/// response, written by its decoder, may have more, as many as its header list's limit allows,
/// and they are all read.
pub(crate) fn header_map(head: &[u8]) -> HeaderMap {
    let mut storage = [const { MaybeUninit::<httparse::Header<'_>>::uninit() }; MAX_HEADERS];
    let mut response = httparse::Response::new(&mut []);
    let mut map = HeaderMap::new();
    match httparse::ParserConfig::default().parse_response_with_uninit_headers(&mut response, head, &mut storage) {
        Ok(_) => fill(&mut map, response.headers),
        Err(httparse::Error::TooManyHeaders) => {
            // One header a line at most.
            let lines = head.iter().filter(|&&b| b == b'\n').count();
            let mut storage = vec![httparse::EMPTY_HEADER; lines];
            let mut response = httparse::Response::new(&mut storage);
            if response.parse(head).is_ok() {
                fill(&mut map, response.headers);
            }
        }
        Err(_) => {}
    }
    map
}

fn fill(map: &mut HeaderMap, headers: &[httparse::Header<'_>]) {
    map.reserve(headers.len());
    for h in headers {
        // httparse has already checked names and values against the grammar these enforce.
        if let (Ok(name), Ok(value)) = (HeaderName::from_bytes(h.name.as_bytes()), HeaderValue::from_bytes(h.value)) {
            map.append(name, value);
        }
    }
}

/// Where a chunked body's decoder stands between reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Chunked {
    /// Expecting a chunk-size line.
    Size,
    /// This many bytes of chunk data left.
    Data(u64),
    /// Expecting the CRLF after a chunk's data.
    DataEnd,
    /// After the last chunk: trailer lines until an empty one.
    Trailers,
    /// The body is complete.
    Done,
}

/// Longest chunk-size line accepted, extensions included (hyper allows 16 KiB of extensions per
/// body): a server sending one forever must not grow the buffer without end.
pub(crate) const MAX_CHUNK_LINE: usize = 16 * 1024;

/// Decodes as much of a chunked body as `input` holds, handing each piece of data to `body` (which
/// keeps, counts or refuses it) and consuming what it used from `input`. Returns the new state;
/// call again with more input until it is [`Chunked::Done`].
pub(crate) fn decode_chunked<E: From<ProtocolError>>(
    mut state: Chunked,
    input: &mut BytesMut,
    mut body: impl FnMut(&[u8]) -> Result<(), E>,
) -> Result<Chunked, E> {
    loop {
        state = match state {
            Chunked::Size => match httparse::parse_chunk_size(input).map_err(|_| E::from(ProtocolError::Chunked))? {
                httparse::Status::Complete((used, 0)) => {
                    input.advance(used);
                    Chunked::Trailers
                }
                httparse::Status::Complete((used, size)) => {
                    input.advance(used);
                    Chunked::Data(size)
                }
                httparse::Status::Partial if input.len() > MAX_CHUNK_LINE => return Err(ProtocolError::Chunked.into()),
                httparse::Status::Partial => return Ok(state),
            },
            Chunked::Data(left) => {
                if input.is_empty() {
                    return Ok(state);
                }
                let take = usize::try_from(left).unwrap_or(usize::MAX).min(input.len());
                body(&input[..take])?;
                input.advance(take);
                match left - take as u64 {
                    0 => Chunked::DataEnd,
                    rest => Chunked::Data(rest),
                }
            }
            Chunked::DataEnd => {
                if input.len() < 2 {
                    return Ok(state);
                }
                if &input[..2] != b"\r\n" {
                    return Err(ProtocolError::Chunked.into());
                }
                input.advance(2);
                Chunked::Size
            }
            Chunked::Trailers => {
                let Some(end) = input.windows(2).position(|w| w == b"\r\n") else {
                    if input.len() > MAX_HEAD_BYTES {
                        return Err(ProtocolError::HeadTooLarge.into());
                    }
                    return Ok(state);
                };
                input.advance(end + 2);
                if end == 0 { Chunked::Done } else { Chunked::Trailers }
            }
            Chunked::Done => return Ok(state),
        };
    }
}

#[cfg(test)]
mod tests;
