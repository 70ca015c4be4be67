//! HPACK's decoding side (RFC 7541): the static and dynamic tables, integers, strings.
//!
//! Why the runtime decodes HPACK itself is in `mod.rs`.

use std::collections::VecDeque;

use super::TABLE_SIZE;
use super::huffman;

/// HPACK's static table (RFC 7541, Appendix A).
const STATIC: [(&str, &str); 61] = [
    (":authority", ""),
    (":method", "GET"),
    (":method", "POST"),
    (":path", "/"),
    (":path", "/index.html"),
    (":scheme", "http"),
    (":scheme", "https"),
    (":status", "200"),
    (":status", "204"),
    (":status", "206"),
    (":status", "304"),
    (":status", "400"),
    (":status", "404"),
    (":status", "500"),
    ("accept-charset", ""),
    ("accept-encoding", "gzip, deflate"),
    ("accept-language", ""),
    ("accept-ranges", ""),
    ("accept", ""),
    ("access-control-allow-origin", ""),
    ("age", ""),
    ("allow", ""),
    ("authorization", ""),
    ("cache-control", ""),
    ("content-disposition", ""),
    ("content-encoding", ""),
    ("content-language", ""),
    ("content-length", ""),
    ("content-location", ""),
    ("content-range", ""),
    ("content-type", ""),
    ("cookie", ""),
    ("date", ""),
    ("etag", ""),
    ("expect", ""),
    ("expires", ""),
    ("from", ""),
    ("host", ""),
    ("if-match", ""),
    ("if-modified-since", ""),
    ("if-none-match", ""),
    ("if-range", ""),
    ("if-unmodified-since", ""),
    ("last-modified", ""),
    ("link", ""),
    ("location", ""),
    ("max-forwards", ""),
    ("proxy-authenticate", ""),
    ("proxy-authorization", ""),
    ("range", ""),
    ("referer", ""),
    ("refresh", ""),
    ("retry-after", ""),
    ("server", ""),
    ("set-cookie", ""),
    ("strict-transport-security", ""),
    ("transfer-encoding", ""),
    ("user-agent", ""),
    ("vary", ""),
    ("via", ""),
    ("www-authenticate", ""),
];

/// What an entry costs in the dynamic table beyond its name and value (RFC 7541, 4.1).
const ENTRY_OVERHEAD: usize = 32;

/// A connection's response decoder.
#[derive(Debug)]
pub(crate) struct Decoder {
    table: Table,
    /// Changes whenever the dynamic table does: a block decodes the same way while it stays.
    generation: u64,
    /// Huffman-decoded names and values, reused.
    name: Vec<u8>,
    value: Vec<u8>,
}

/// A dynamic table entry: a name and a value.
type Entry = (Box<[u8]>, Box<[u8]>);

/// The dynamic table, newest entry first.
#[derive(Debug)]
struct Table {
    entries: VecDeque<Entry>,
    size: usize,
    max: usize,
}

/// A header block that is not valid HPACK.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Invalid;

impl Decoder {
    pub(crate) fn new() -> Decoder {
        Decoder {
            table: Table { entries: VecDeque::new(), size: 0, max: TABLE_SIZE },
            generation: 0,
            name: Vec::new(),
            value: Vec::new(),
        }
    }

    /// Changes whenever the dynamic table does.
    pub(crate) fn generation(&self) -> u64 {
        self.generation
    }

    /// The dynamic table's size, as RFC 7541 counts it.
    #[cfg(test)]
    pub(crate) fn table_size(&self) -> usize {
        self.table.size
    }

    /// Decodes `block`, calling `field` with each name and value in order.
    pub(crate) fn decode(&mut self, block: &[u8], mut field: impl FnMut(&[u8], &[u8])) -> Result<(), Invalid> {
        let mut at = 0;
        // Table size updates may only open a block (RFC 7541, 4.2).
        let mut opening = true;
        while let Some(&first) = block.get(at) {
            let rest = &block[at..];
            if first & 0x80 != 0 {
                let (index, n) = read_integer(rest, 7)?;
                let (name, value) = self.table.get(index)?;
                field(name, value);
                at += n;
            } else if first & 0xc0 == 0x40 {
                at += self.literal(rest, 6, true, &mut field)?;
            } else if first & 0xe0 == 0x20 {
                let (size, n) = read_integer(rest, 5)?;
                if !opening || size > TABLE_SIZE {
                    return Err(Invalid);
                }
                self.table.max = size;
                self.table.evict();
                self.generation += 1;
                at += n;
                continue;
            } else {
                // Without indexing (0000) or never indexed (0001): alike for a client.
                at += self.literal(rest, 4, false, &mut field)?;
            }
            opening = false;
        }
        Ok(())
    }

    /// A literal field at the start of `bytes`, its name's index in a `prefix`-bit prefix; added
    /// to the table when `add`. Returns its length.
    fn literal(
        &mut self,
        bytes: &[u8],
        prefix: u32,
        add: bool,
        field: &mut impl FnMut(&[u8], &[u8]),
    ) -> Result<usize, Invalid> {
        let (index, mut at) = read_integer(bytes, prefix)?;
        let name = if index == 0 {
            let (name, n) = read_string(&bytes[at..], &mut self.name)?;
            at += n;
            name
        } else {
            self.table.get(index)?.0
        };
        let (value, n) = read_string(bytes.get(at..).ok_or(Invalid)?, &mut self.value)?;
        at += n;
        field(name, value);
        if add {
            let entry = (Box::from(name), Box::from(value));
            self.table.insert(entry);
            self.generation += 1;
        }
        Ok(at)
    }
}

impl Table {
    /// Entry `index`: 1 to 61 in the static table, then the dynamic table's, newest first.
    fn get(&self, index: usize) -> Result<(&[u8], &[u8]), Invalid> {
        match index {
            0 => Err(Invalid),
            1..=61 => {
                let (name, value) = STATIC[index - 1];
                Ok((name.as_bytes(), value.as_bytes()))
            }
            _ => self.entries.get(index - 62).map(|(n, v)| (&n[..], &v[..])).ok_or(Invalid),
        }
    }

    fn insert(&mut self, entry: Entry) {
        let size = entry.0.len() + entry.1.len() + ENTRY_OVERHEAD;
        if size > self.max {
            // Larger than the table: it empties it (RFC 7541, 4.4).
            self.entries.clear();
            self.size = 0;
            return;
        }
        self.size += size;
        self.entries.push_front(entry);
        self.evict();
    }

    fn evict(&mut self) {
        while self.size > self.max {
            let Some((name, value)) = self.entries.pop_back() else { break };
            self.size -= name.len() + value.len() + ENTRY_OVERHEAD;
        }
    }
}

/// The integer at the start of `bytes` with a `prefix`-bit prefix (RFC 7541, 5.1), and its
/// length.
fn read_integer(bytes: &[u8], prefix: u32) -> Result<(usize, usize), Invalid> {
    let max = (1usize << prefix) - 1;
    let first = usize::from(*bytes.first().ok_or(Invalid)?) & max;
    if first < max {
        return Ok((first, 1));
    }
    let mut value = max;
    for (i, &b) in bytes.iter().enumerate().skip(1) {
        // Four continuation bytes reach 2^28, far beyond any header a client accepts.
        if i > 4 {
            return Err(Invalid);
        }
        value += usize::from(b & 0x7f) << (7 * (i - 1));
        if b & 0x80 == 0 {
            return Ok((value, i + 1));
        }
    }
    Err(Invalid)
}

/// The string at the start of `bytes` (Huffman-decoded into `scratch` if it is coded), and its
/// length.
fn read_string<'a>(bytes: &'a [u8], scratch: &'a mut Vec<u8>) -> Result<(&'a [u8], usize), Invalid> {
    let coded = bytes.first().is_some_and(|b| b & 0x80 != 0);
    let (len, n) = read_integer(bytes, 7)?;
    let end = n.checked_add(len).ok_or(Invalid)?;
    let raw = bytes.get(n..end).ok_or(Invalid)?;
    if !coded {
        return Ok((raw, end));
    }
    scratch.clear();
    huffman::decode(raw, scratch).map_err(|()| Invalid)?;
    Ok((&scratch[..], end))
}

#[cfg(test)]
pub(super) mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::http::wire::shared::h2::hpack::string;

    /// The fields `block` decodes to, as text.
    pub(in crate::http::wire::shared::h2::hpack) fn decoded(
        decoder: &mut Decoder,
        block: &[u8],
    ) -> Result<Vec<(String, String)>, Invalid> {
        let mut fields = Vec::new();
        decoder.decode(block, |n, v| {
            fields.push((String::from_utf8(n.to_vec()).unwrap(), String::from_utf8(v.to_vec()).unwrap()));
        })?;
        Ok(fields)
    }

    pub(in crate::http::wire::shared::h2::hpack) fn pairs(fields: &[(&str, &str)]) -> Vec<(String, String)> {
        fields.iter().map(|(n, v)| ((*n).to_owned(), (*v).to_owned())).collect()
    }

    #[test]
    fn the_rfc_s_huffman_request_example_decodes() {
        // RFC 7541, C.4.1.
        let block =
            [0x82, 0x86, 0x84, 0x41, 0x8c, 0xf1, 0xe3, 0xc2, 0xe5, 0xf2, 0x3a, 0x6b, 0xa0, 0xab, 0x90, 0xf4, 0xff];
        let mut decoder = Decoder::new();
        let want = [(":method", "GET"), (":scheme", "http"), (":path", "/"), (":authority", "www.example.com")];
        assert_eq!(decoded(&mut decoder, &block).unwrap(), pairs(&want));
        // Indexed with incremental indexing: now the dynamic table's first entry.
        assert_eq!(decoded(&mut decoder, &[0xbe]).unwrap(), pairs(&[(":authority", "www.example.com")]));
        assert_eq!(decoder.table.size, 57);
    }

    #[test]
    fn the_dynamic_table_evicts_the_oldest_and_follows_size_updates() {
        let mut decoder = Decoder::new();
        let mut block = Vec::new();
        for value in ["a".repeat(2000), "b".repeat(2000), "c".repeat(2000)] {
            // Literal with incremental indexing, new name.
            block.clear();
            block.push(0x40);
            string(&mut block, b"x");
            string(&mut block, value.as_bytes());
            decoder.decode(&block, |_, _| {}).unwrap();
        }
        // 2,033 bytes each: two fit in 4,096, the oldest is gone.
        assert_eq!(decoder.table.entries.len(), 2);
        assert_eq!(decoded(&mut decoder, &[0xbe]).unwrap()[0].1, "c".repeat(2000));
        assert_eq!(decoded(&mut decoder, &[0xbf]).unwrap()[0].1, "b".repeat(2000));
        assert_eq!(decoder.decode(&[0xc0], |_, _| {}), Err(Invalid), "beyond the table");
        // A size update to 0 empties it; one above the allowed size, or after a field, is refused.
        decoder.decode(&[0x20], |_, _| {}).unwrap();
        assert!(decoder.table.entries.is_empty());
        assert_eq!(decoder.decode(&[0x3f, 0xe2, 0x1f], |_, _| {}), Err(Invalid), "8,193 > 4,096");
        assert_eq!(decoder.decode(&[0x88, 0x20], |_, _| {}), Err(Invalid));
    }

    #[test]
    fn a_truncated_or_overlong_block_is_invalid() {
        let mut decoder = Decoder::new();
        for block in [
            &[0x00, 0x05, b'a'][..],
            &[0x40],
            &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f],
            &[0x80],
            &[0x00, 0x81, 0x00],
        ] {
            assert_eq!(decoder.decode(block, |_, _| {}), Err(Invalid), "{block:x?}");
        }
    }
}
