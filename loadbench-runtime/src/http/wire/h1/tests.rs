//! HTTP/1.1's wire format: heads parsed, requests encoded, chunked bodies decoded.

use super::*;

fn keep(body: &mut BytesMut) -> impl FnMut(&[u8]) -> Result<(), ProtocolError> + '_ {
    |data| {
        body.extend_from_slice(data);
        Ok(())
    }
}

fn head(text: &str) -> Head {
    parse_head(text.as_bytes(), &Method::GET).unwrap().unwrap()
}

#[test]
fn encodes_a_get_with_host() {
    let mut out = Vec::new();
    encode_request(&mut out, &Method::GET, "/a?b=1", &HeaderValue::from_static("h:1"), &HeaderMap::new(), b"");
    assert_eq!(out, b"GET /a?b=1 HTTP/1.1\r\nhost: h:1\r\n\r\n");
}

#[test]
fn encodes_a_post_with_headers_and_length() {
    let mut headers = HeaderMap::new();
    headers.append("x-k", HeaderValue::from_static("v"));
    let mut out = Vec::new();
    encode_request(&mut out, &Method::POST, "/", &HeaderValue::from_static("h"), &headers, b"abc");
    assert_eq!(out, b"POST / HTTP/1.1\r\nhost: h\r\nx-k: v\r\ncontent-length: 3\r\n\r\nabc");
    out.clear();
    encode_request(&mut out, &Method::POST, "/", &HeaderValue::from_static("h"), &HeaderMap::new(), b"");
    assert!(out.ends_with(b"content-length: 0\r\n\r\n"));
}

#[test]
fn a_users_host_header_replaces_the_targets() {
    let mut headers = HeaderMap::new();
    headers.append("host", HeaderValue::from_static("example.test"));
    let mut out = Vec::new();
    encode_request(&mut out, &Method::GET, "/", &HeaderValue::from_static("h"), &headers, b"");
    assert_eq!(out, b"GET / HTTP/1.1\r\nhost: example.test\r\n\r\n");
}

#[test]
fn incomplete_heads_wait_for_more() {
    assert!(parse_head(b"HTTP/1.1 200 OK\r\ncontent-le", &Method::GET).unwrap().is_none());
}

#[test]
fn framing_follows_rfc_9112() {
    let h = head("HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nhello");
    assert_eq!((h.status, h.body, h.keep_alive, h.len), (StatusCode::OK, BodyLength::Fixed(12), true, 39));
    assert_eq!(head("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n").body, BodyLength::Chunked);
    // Transfer-Encoding wins over Content-Length.
    let h = head("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n");
    assert_eq!(h.body, BodyLength::Chunked);
    let h = head("HTTP/1.1 200 OK\r\n\r\n");
    assert_eq!((h.body, h.keep_alive), (BodyLength::UntilClose, false));
    assert_eq!(head("HTTP/1.1 204 No Content\r\nContent-Length: 9\r\n\r\n").body, BodyLength::Empty);
    assert_eq!(head("HTTP/1.1 304 Not Modified\r\n\r\n").body, BodyLength::Empty);
    assert_eq!(head("HTTP/1.1 100 Continue\r\n\r\n").body, BodyLength::Empty);
    let h = parse_head(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", &Method::HEAD).unwrap().unwrap();
    assert_eq!((h.body, h.keep_alive), (BodyLength::Empty, true));
}

#[test]
fn set_cookie_is_seen_in_the_walk_over_the_headers() {
    assert!(head("HTTP/1.1 200 OK\r\nset-COOKIE: a=1\r\nContent-Length: 0\r\n\r\n").sets_cookie);
    assert!(!head("HTTP/1.1 200 OK\r\nCookie: a=1\r\nContent-Length: 0\r\n\r\n").sets_cookie);
}

#[test]
fn keep_alive_follows_version_and_connection() {
    assert!(!head("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n").keep_alive);
    assert!(!head("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n").keep_alive);
    assert!(head("HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n").keep_alive);
}

#[test]
fn bad_heads_are_errors() {
    assert!(parse_head(b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n", &Method::GET).is_err());
    assert!(parse_head(b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", &Method::GET).is_err());
    assert!(parse_head(b"SSH-2.0-OpenSSH\r\n\r\n", &Method::GET).is_err());
    let huge = vec![b'a'; MAX_HEAD_BYTES + 1];
    let mut text = b"HTTP/1.1 200 OK\r\nx: ".to_vec();
    text.extend_from_slice(&huge);
    assert!(matches!(parse_head(&text, &Method::GET), Err(ProtocolError::HeadTooLarge)));
    // The same head, complete.
    text.extend_from_slice(b"\r\ncontent-length: 0\r\n\r\n");
    assert!(matches!(parse_head(&text, &Method::GET), Err(ProtocolError::HeadTooLarge)));
}

#[test]
fn headers_are_built_on_demand() {
    let map = header_map(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nSet-Cookie: a\r\nSet-Cookie: b\r\n\r\n");
    assert_eq!(map["content-type"], "text/plain");
    assert_eq!(map.get_all("set-cookie").iter().count(), 2);
}

#[test]
fn a_head_with_more_headers_than_http1_allows_loses_none_of_them() {
    let mut head = b"HTTP/1.1 200 \r\n".to_vec();
    for i in 0..1_000 {
        head.extend_from_slice(format!("x-{i}: {i}\r\n").as_bytes());
    }
    head.extend_from_slice(b"\r\n");
    let map = header_map(&head);
    assert_eq!(map.len(), 1_000);
    assert_eq!(map["x-999"], "999");
    assert!(parse_head(&head, &Method::GET).is_err(), "over HTTP/1.1 the head is refused");
}

#[test]
fn chunked_bodies_decode_across_reads() {
    let wire = b"5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nx-trailer: 1\r\n\r\nNEXT";
    // Fed one byte at a time, as the worst possible sequence of reads would.
    let mut state = Chunked::Size;
    let mut input = BytesMut::new();
    let mut body = BytesMut::new();
    for &b in wire.iter() {
        input.extend_from_slice(&[b]);
        state = decode_chunked(state, &mut input, keep(&mut body)).unwrap();
        if state == Chunked::Done {
            break;
        }
    }
    assert_eq!(state, Chunked::Done);
    assert_eq!(&body[..], b"hello world");
    assert!(input.is_empty(), "stops right after the body, before the next response");
    let mut input = BytesMut::from(&b"5\r\nhelloXX"[..]);
    assert!(decode_chunked(Chunked::Size, &mut input, keep(&mut BytesMut::new())).is_err());
}

#[test]
fn an_endless_chunk_size_line_is_an_error() {
    let mut line = b"5;ext=".to_vec();
    line.resize(MAX_CHUNK_LINE, b'a');
    let mut input = BytesMut::from(&line[..]);
    let state = decode_chunked(Chunked::Size, &mut input, keep(&mut BytesMut::new())).unwrap();
    assert_eq!(state, Chunked::Size, "a long line, still within the limit, waits for more");
    input.extend_from_slice(b"a");
    assert!(decode_chunked(Chunked::Size, &mut input, keep(&mut BytesMut::new())).is_err());
}

#[test]
fn a_head_that_repeats_is_parsed_once_and_another_one_again() {
    let mut memo = HeadMemo::default();
    let first = b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello";
    let parsed = memo.parse(first, &Method::GET).unwrap().unwrap();
    assert_eq!((parsed.len, parsed.body), (38, BodyLength::Fixed(5)));
    // The same head followed by other bytes: remembered.
    let again = memo.parse(b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nworld HTTP/1.1", &Method::GET);
    assert_eq!(again.unwrap().unwrap().body, BodyLength::Fixed(5));
    assert_eq!(memo.current().as_deref(), Some(&first[..38]), "the head's own bytes");
    // One byte differs, the head is cut short, or the request was HEAD: parsed again.
    let other = memo.parse(b"HTTP/1.1 200 OK\r\ncontent-length: 7\r\n\r\n", &Method::GET).unwrap().unwrap();
    assert_eq!(other.body, BodyLength::Fixed(7));
    assert!(memo.parse(b"HTTP/1.1 200 OK\r\ncontent-length: 7\r\n", &Method::GET).unwrap().is_none());
    let head = memo.parse(b"HTTP/1.1 200 OK\r\ncontent-length: 7\r\n\r\n", &Method::HEAD).unwrap().unwrap();
    assert_eq!(head.body, BodyLength::Empty);
    let get = memo.parse(b"HTTP/1.1 200 OK\r\ncontent-length: 7\r\n\r\n", &Method::GET).unwrap().unwrap();
    assert_eq!(get.body, BodyLength::Fixed(7));
    // A head too long to remember has no remembered bytes, whatever the memo held before.
    let mut long = b"HTTP/1.1 200 OK\r\nx: ".to_vec();
    long.resize(MEMO_MAX + 10, b'a');
    long.extend_from_slice(b"\r\ncontent-length: 7\r\n\r\n");
    assert!(memo.parse(&long, &Method::GET).unwrap().is_some());
    assert_eq!(memo.current(), None);
}
