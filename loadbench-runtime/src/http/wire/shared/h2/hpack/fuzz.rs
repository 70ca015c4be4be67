//! Property tests of the HPACK decoder: arbitrary bytes, and valid blocks (every kind of
//! representation, Huffman-coded or not, entries added to the dynamic table and referenced)
//! mutated: bytes flipped, cut short, a reference repeated thousands of times. Whatever the
//! blocks, decoding ends, nothing panics, a head's text stays within the header list's limit and
//! the dynamic table within its size; a block of literals decodes to exactly its fields, and is
//! refused exactly when its list passes the limit. Checked against other encoders by
//! `conformance.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;

use super::decoder::Decoder;
use super::*;

/// A small limit, so that generated blocks pass it often.
const LIMIT: usize = 2_048;

/// One representation of a header block (RFC 7541, 6).
#[derive(Debug, Clone)]
enum Rep {
    /// An index into the static table (1 to 61) or the dynamic one (62 and up).
    Indexed(usize),
    /// A literal: its name an index (or new when 0), its value, how it is indexed (0 without, 1
    /// incremental, 2 never), Huffman-coded or not.
    Literal { name_index: usize, name: Vec<u8>, value: Vec<u8>, mode: u8, huffman: bool },
    /// A dynamic table size update (only valid first).
    SizeUpdate(usize),
}

fn text() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => prop::collection::vec(prop_oneof![b'a'..=b'z', b'0'..=b'9', Just(b'-')], 1..12),
        1 => prop::collection::vec(any::<u8>(), 0..40),
        1 => (0usize..3000).prop_map(|n| vec![b'v'; n]),
    ]
}

fn rep() -> impl Strategy<Value = Rep> {
    prop_oneof![
        3 => prop_oneof![1usize..=61, 62usize..70].prop_map(Rep::Indexed),
        6 => (prop_oneof![Just(0usize), 1usize..=61, 62usize..66], text(), text(), 0u8..3, any::<bool>()).prop_map(
            |(name_index, name, value, mode, huffman)| Rep::Literal { name_index, name, value, mode, huffman }
        ),
        1 => (0usize..5000).prop_map(Rep::SizeUpdate),
    ]
}

fn put_string(out: &mut Vec<u8>, bytes: &[u8], huffman: bool) {
    if huffman {
        let coded = huffman::encode(bytes);
        integer(out, 0x80, 7, coded.len());
        out.extend_from_slice(&coded);
    } else {
        string(out, bytes);
    }
}

fn encode(reps: &[Rep]) -> Vec<u8> {
    let mut out = Vec::new();
    for rep in reps {
        match rep {
            Rep::Indexed(index) => indexed(&mut out, *index),
            Rep::Literal { name_index, name, value, mode, huffman } => {
                let (flags, prefix) = match mode {
                    0 => (0x00, 4),
                    1 => (0x40, 6),
                    _ => (0x10, 4),
                };
                integer(&mut out, flags, prefix, *name_index);
                if *name_index == 0 {
                    put_string(&mut out, name, *huffman);
                }
                put_string(&mut out, value, *huffman);
            }
            Rep::SizeUpdate(size) => integer(&mut out, 0x20, 5, *size),
        }
    }
    out
}

/// A block mutated: bytes flipped, cut short, or a piece of it repeated (an HPACK bomb's shape).
fn mutated() -> impl Strategy<Value = Vec<u8>> {
    let reps = prop::collection::vec(rep(), 0..12);
    (
        reps,
        prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
        any::<prop::sample::Index>(),
        0u8..4,
    )
        .prop_map(|(reps, flips, at, how)| {
            let mut block = encode(&reps);
            if block.is_empty() {
                return block;
            }
            match how {
                0 => {
                    for (i, b) in flips {
                        let i = i.index(block.len());
                        block[i] ^= b;
                    }
                }
                1 => block.truncate(at.index(block.len())),
                2 => {
                    let piece = block[at.index(block.len())..].to_vec();
                    for _ in 0..(12_000 / piece.len().max(1)).min(4_000) {
                        block.extend_from_slice(&piece);
                    }
                }
                _ => {}
            }
            block
        })
}

/// Decodes `blocks` in turn on one connection's decoder, checking the bounds after each.
fn decode_all(blocks: &[Vec<u8>]) {
    let mut decoder = Decoder::new();
    let mut heads = BytesMut::new();
    for block in blocks {
        heads.clear();
        let decoded = decode_response(&mut decoder, block, &mut heads, LIMIT);
        // The status line, the fields' lines (each shorter than the 32 bytes a field counts),
        // the empty line.
        assert!(heads.len() <= LIMIT + 32, "{} bytes of head for a limit of {LIMIT}", heads.len());
        if decoded.is_err() {
            assert!(heads.is_empty(), "an error leaves nothing");
        }
        assert!(decoder.table_size() <= TABLE_SIZE);
        let _ = decode_trailers(&mut decoder, block, LIMIT);
        assert!(decoder.table_size() <= TABLE_SIZE);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_end_within_bounds(blocks in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..2048), 1..4)) {
        decode_all(&blocks);
    }

    #[test]
    fn mutated_blocks_end_within_bounds(blocks in prop::collection::vec(mutated(), 1..6)) {
        decode_all(&blocks);
    }

    #[test]
    fn literals_decode_to_their_fields_and_are_refused_exactly_past_the_limit(
        fields in prop::collection::vec((text(), text(), 0u8..3, any::<bool>()), 0..12),
    ) {
        let reps: Vec<Rep> = fields
            .iter()
            .map(|(name, value, mode, huffman)| Rep::Literal {
                name_index: 0, name: name.clone(), value: value.clone(), mode: *mode, huffman: *huffman,
            })
            .collect();
        let block = encode(&reps);
        let mut got = Vec::new();
        Decoder::new().decode(&block, |n, v| got.push((n.to_vec(), v.to_vec()))).unwrap();
        let want: Vec<(Vec<u8>, Vec<u8>)> = fields.iter().map(|(n, v, _, _)| (n.clone(), v.clone())).collect();
        prop_assert_eq!(got, want);
        // As trailers: refused for their size exactly when the list passes the limit, unless a
        // field is malformed before it does.
        let size: usize = fields.iter().map(|(n, v, _, _)| n.len() + v.len() + 32).sum();
        let outcome = decode_trailers(&mut Decoder::new(), &block, LIMIT);
        if size <= LIMIT {
            prop_assert_ne!(outcome, Err(DecodeError::Refused(Refusal::TooLarge)));
        } else {
            prop_assert!(matches!(outcome, Err(DecodeError::Refused(_))), "{:?}", outcome);
        }
    }
}

#[test]
fn an_hpack_bomb_decodes_to_no_more_than_the_limit_and_keeps_the_table() {
    // A 3,900-byte entry, then 12,000 references to it: 47 MB if it were all decoded.
    let mut adding = vec![0x88, 0x40];
    string(&mut adding, b"x-big");
    string(&mut adding, &[b'v'; 3_900]);
    let mut decoder = Decoder::new();
    let mut heads = BytesMut::new();
    decode_response(&mut decoder, &adding, &mut heads, 64 * 1024).unwrap();
    let mut bomb = vec![0x88];
    bomb.resize(12_001, 0xbe);
    // The bomb adds an entry of its own after the references, which the next block names.
    bomb.push(0x40);
    string(&mut bomb, b"x-after");
    string(&mut bomb, b"1");
    heads = BytesMut::new();
    let refused = decode_response(&mut decoder, &bomb, &mut heads, 64 * 1024).map(|r| r.status);
    assert_eq!(refused, Err(DecodeError::Refused(Refusal::TooLarge)));
    assert!(heads.capacity() <= 128 * 1024, "{} bytes held", heads.capacity());
    let after = decode_response(&mut decoder, &[0x88, 0xbe, 0xbf], &mut heads, 64 * 1024).unwrap();
    assert_eq!(after.status, StatusCode::OK);
    assert!(heads.starts_with(b"HTTP/1.1 200 \r\nx-after: 1\r\nx-big: vvv"), "the table is the server's");
}
