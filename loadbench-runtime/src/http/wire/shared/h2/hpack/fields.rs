//! What a response's header block may hold (RFC 9113, 8.2 and 8.3), and what it may cost: each
//! field is checked as the decoder hands it over, and the header list's size is counted as
//! RFC 9113 (6.5.2) counts it, a field's name and value and 32 bytes, against the limit this
//! client advertises in `SETTINGS_MAX_HEADER_LIST_SIZE`.
//!
//! A refused block is still decoded to its end by the caller's decoder: the dynamic table is the
//! connection's, and only a decoder that has seen every field of every block keeps it in step
//! with the server's encoder. The checks themselves cost a few compares per byte of a name or a
//! value, and nothing once the block is refused.

use http::StatusCode;

/// What a field costs in the header list beyond its name and value (RFC 9113, 6.5.2).
const FIELD_OVERHEAD: usize = 32;

/// Why a response's header block is refused, though it decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// Its header list is larger than the limit.
    TooLarge,
    /// RFC 9113 calls it malformed: what is wrong.
    Malformed(&'static str),
}

/// The fields of one header block so far, as the decoder hands them over.
#[derive(Debug)]
pub(super) struct Fields {
    limit: usize,
    /// The header list's size so far.
    size: usize,
    /// Trailers, which carry no pseudo-header and none of which is kept.
    trailers: bool,
    /// A regular field has come: no pseudo-header may follow.
    regular: bool,
    pub(super) status: Option<StatusCode>,
    pub(super) content_length: Option<u64>,
    pub(super) sets_cookie: bool,
    /// The first reason to refuse the block; once set, nothing more is checked or kept.
    pub(super) refused: Option<Refusal>,
}

impl Fields {
    /// The fields of a new block: a response's head, or its `trailers`.
    pub(super) fn new(limit: usize, trailers: bool) -> Fields {
        Fields {
            limit,
            size: 0,
            trailers,
            regular: false,
            status: None,
            content_length: None,
            sets_cookie: false,
            refused: None,
        }
    }

    /// Takes one field: whether it is a regular field of a response's head to keep.
    #[inline]
    pub(super) fn take(&mut self, name: &[u8], value: &[u8]) -> bool {
        if self.refused.is_some() {
            return false;
        }
        // Integer adds, saturating: a block's fields cannot overflow the count.
        self.size = self.size.saturating_add(name.len()).saturating_add(value.len()).saturating_add(FIELD_OVERHEAD);
        if self.size > self.limit {
            self.refused = Some(Refusal::TooLarge);
            return false;
        }
        if name.first() == Some(&b':') {
            if let Err(what) = self.pseudo(name, value) {
                self.refused = Some(Refusal::Malformed(what));
            }
            return false;
        }
        self.regular = true;
        if let Err(what) = self.regular_field(name, value) {
            self.refused = Some(Refusal::Malformed(what));
            return false;
        }
        !self.trailers
    }

    fn pseudo(&mut self, name: &[u8], value: &[u8]) -> Result<(), &'static str> {
        if self.trailers {
            return Err("a pseudo-header in trailers");
        }
        if self.regular {
            return Err("a pseudo-header after a regular header");
        }
        match name {
            b":status" if self.status.is_some() => Err("two :status pseudo-headers"),
            b":status" => {
                self.status = Some(StatusCode::from_bytes(value).map_err(|_| "an invalid :status")?);
                Ok(())
            }
            b":method" | b":scheme" | b":authority" | b":path" | b":protocol" => {
                Err("a request pseudo-header in a response")
            }
            _ => Err("an unknown pseudo-header"),
        }
    }

    fn regular_field(&mut self, name: &[u8], value: &[u8]) -> Result<(), &'static str> {
        if name.is_empty() || !name.iter().all(|&b| TOKEN[usize::from(b)]) {
            return Err(if name.iter().any(u8::is_ascii_uppercase) {
                "an uppercase header name"
            } else {
                "an invalid header name"
            });
        }
        // RFC 9113 forbids NUL, CR and LF, and whitespace at either end; the other control
        // characters are refused too, as `http::HeaderValue` refuses them, so that every field
        // kept is one of the response's headers.
        if matches!(value.first().zip(value.last()), Some((b' ' | b'\t', _) | (_, b' ' | b'\t')))
            || !value.iter().all(|&b| (b >= 0x20 && b != 0x7f) || b == b'\t')
        {
            return Err("an invalid header value");
        }
        match name {
            b"content-length" => {
                let length = content_length(value).ok_or("an invalid content-length")?;
                if self.content_length.is_some_and(|previous| previous != length) {
                    return Err("content-length headers that disagree");
                }
                self.content_length = Some(length);
            }
            b"set-cookie" => self.sets_cookie = true,
            b"connection" => return Err("a connection-specific header: connection"),
            b"keep-alive" => return Err("a connection-specific header: keep-alive"),
            b"proxy-connection" => return Err("a connection-specific header: proxy-connection"),
            b"transfer-encoding" => return Err("a connection-specific header: transfer-encoding"),
            b"upgrade" => return Err("a connection-specific header: upgrade"),
            b"te" if value != b"trailers" => return Err("a te header other than trailers"),
            _ => {}
        }
        Ok(())
    }
}

/// A `content-length`: digits only.
fn content_length(value: &[u8]) -> Option<u64> {
    if value.is_empty() || !value.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(value).ok()?.parse().ok()
}

/// The bytes of a field name HTTP/2 allows: a token's (RFC 9110, 5.6.2), lowercase.
const TOKEN: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = c.is_ascii_digit()
            || c.is_ascii_lowercase()
            || matches!(
                c,
                b'!' | b'#' | b'$' | b'%' | b'&' | b'\'' | b'*' | b'+' | b'-' | b'.' | b'^' | b'_' | b'`' | b'|' | b'~'
            );
        b += 1;
    }
    table
};

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(fields: &[(&str, &str)], trailers: bool) -> Option<Refusal> {
        let mut checked = Fields::new(1 << 16, trailers);
        for (name, value) in fields {
            checked.take(name.as_bytes(), value.as_bytes());
        }
        checked.refused
    }

    fn malformed(fields: &[(&str, &str)]) -> Option<&'static str> {
        match refusal(fields, false) {
            Some(Refusal::Malformed(what)) => Some(what),
            other => panic!("{fields:?}: {other:?}"),
        }
    }

    #[test]
    fn a_well_formed_head_is_kept_and_its_length_and_cookie_seen() {
        let mut fields = Fields::new(1 << 16, false);
        assert!(!fields.take(b":status", b"200"), "pseudo-headers are not kept as headers");
        assert!(fields.take(b"content-length", b"12"));
        assert!(fields.take(b"set-cookie", b"a=1; Path=/"));
        assert!(fields.take(b"te", b"trailers"));
        assert!(fields.take(b"x-empty", b""));
        assert!(fields.take(b"x-obs", "caf\u{e9}".as_bytes()));
        assert_eq!(
            (fields.refused, fields.status, fields.content_length, fields.sets_cookie),
            (None, Some(StatusCode::OK), Some(12), true)
        );
    }

    #[test]
    fn each_malformed_field_is_named() {
        let cases: [(&[(&str, &str)], &str); 17] = [
            (&[(":status", "200"), (":status", "204")], "two :status pseudo-headers"),
            (&[(":status", "20")], "an invalid :status"),
            (&[(":status", "abc")], "an invalid :status"),
            (&[(":status", "200"), ("Content-Type", "x")], "an uppercase header name"),
            (&[(":status", "200"), ("a b", "x")], "an invalid header name"),
            (&[(":status", "200"), ("x", "y"), (":status", "200")], "a pseudo-header after a regular header"),
            (&[(":status", "200"), (":path", "/")], "a request pseudo-header in a response"),
            (&[(":status", "200"), (":bogus", "1")], "an unknown pseudo-header"),
            (&[(":status", "200"), ("connection", "close")], "a connection-specific header: connection"),
            (&[(":status", "200"), ("keep-alive", "5")], "a connection-specific header: keep-alive"),
            (
                &[(":status", "200"), ("transfer-encoding", "chunked")],
                "a connection-specific header: transfer-encoding",
            ),
            (&[(":status", "200"), ("upgrade", "h2c")], "a connection-specific header: upgrade"),
            (&[(":status", "200"), ("proxy-connection", "x")], "a connection-specific header: proxy-connection"),
            (&[(":status", "200"), ("te", "gzip")], "a te header other than trailers"),
            (
                &[(":status", "200"), ("content-length", "1"), ("content-length", "2")],
                "content-length headers that disagree",
            ),
            (&[(":status", "200"), ("content-length", "-1")], "an invalid content-length"),
            (&[(":status", "200"), ("x", " padded")], "an invalid header value"),
        ];
        for (fields, what) in cases {
            assert_eq!(malformed(fields), Some(what), "{fields:?}");
        }
        for value in ["a\rb", "a\nb", "a\0b", "a\x7fb", "trailing\t"] {
            assert_eq!(malformed(&[(":status", "200"), ("x", value)]), Some("an invalid header value"), "{value:?}");
        }
        assert_eq!(
            refusal(&[("x", "1"), (":status", "200")], true),
            Some(Refusal::Malformed("a pseudo-header in trailers"))
        );
        assert_eq!(refusal(&[("x-checksum", "1")], true), None, "a trailer is checked, not kept");
    }

    #[test]
    fn the_list_s_size_counts_32_bytes_a_field_and_stops_at_the_limit() {
        // `:status: 200` is 7 + 3 + 32 = 42 bytes; `x: y` 34.
        let mut fields = Fields::new(42 + 34, false);
        fields.take(b":status", b"200");
        assert!(fields.take(b"x", b"y"), "exactly at the limit");
        assert!(!fields.take(b"x", b""), "one field past it");
        assert_eq!(fields.refused, Some(Refusal::TooLarge));
        assert!(!fields.take(b"y", b"z"), "nothing is kept once refused");
    }
}
